"""Financial statements: which primary statement a table is, and accounting's names for them.

A filing titles its statements in their captions ("Consolidated Statements of Cash Flows",
"CONSOLIDATED BALANCE SHEETS (in millions)"). ``statement_name`` reads the name a caption
prints, ``statement_kind`` maps it to one of the primary statements (``STATEMENT_KINDS``) and
``table_statement`` decides a table's kind from its caption or heading; every table point
carries that kind (payload ``statement``). ``STATEMENT_MEASURES`` lists what each statement
reports, as questions ask for it. Nothing here reads a query or is named after a company.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from evidence_pipeline.vocabulary import PERIOD_WORDS, STOPWORDS, keyed_words

# Where a statement's name ends in its caption: the period it covers ("... Cash Flows Years
# ended December 31", "... for the three months ended"), a figure, or a stopword.
_PERIOD_WORDS = frozenset(keyed_words(" ".join(sorted(PERIOD_WORDS)) + " unaudited"))
STATEMENT_WORD, _OF, _BALANCE, SHEET_WORD, SEGMENT_WORD = keyed_words("statement of balance sheet segment")
# Words that qualify a statement without naming it, where they open its title
_QUALIFIERS = frozenset(keyed_words("consolidated condensed combined interim unaudited"))
_NAME_JOINS = frozenset(("and", "or"))  # "Statement of Profit or Loss", "... of Income and Comprehensive Income"


@functools.lru_cache(maxsize=1 << 14)
def statement_name(caption: str) -> frozenset[str]:
    """The words (``keyed_words``) that name the financial statement a caption titles: "XYZ
    Company and Subsidiaries Consolidated Statement of Cash Flows" -> statement, cash, flow;
    "CONSOLIDATED BALANCE SHEETS (in millions)" -> balance, sheet; "INCOME STATEMENTS" -> income,
    statement. Empty when the caption titles no statement: the name must close the title (the
    period it covers aside: "Balance Sheet Components" is not a statement) and not follow a
    stopword ("Amounts Offset in the Consolidated Balance Sheets" is about one)."""
    ws = _joined(keyed_words(caption.split("(", 1)[0]))

    def titled(start: int, end: int) -> bool:
        before = ws[:start]
        while before and before[-1] in _QUALIFIERS:
            before = before[:-1]
        return (not before or before[-1] not in STOPWORDS) and (end == len(ws) or _breaks(ws[end]))

    for i, w in enumerate(ws):
        if w == _BALANCE and ws[i + 1 : i + 2] == [SHEET_WORD] and titled(i, i + 2):
            return frozenset((_BALANCE, SHEET_WORD))
        if w != STATEMENT_WORD:
            continue
        if ws[i + 1 : i + 2] == [_OF]:
            end = i + 2
            while end < len(ws) and not _breaks(ws[end]):
                end += 1
            name, start = ws[i + 2 : end], i
        else:  # "INCOME STATEMENTS", "CASH FLOWS STATEMENTS", "Consolidated Income Statement"
            start = i
            while start > max(0, i - 2) and ws[start - 1] not in STOPWORDS and ws[start - 1] not in _QUALIFIERS:
                start -= 1
            name, end = ws[start:i], i + 1
        name = [x for x in name if len(x) > 1 and x not in STOPWORDS]
        if name and titled(start, end):
            return frozenset((STATEMENT_WORD, *name))
    return frozenset()


def _breaks(word: str) -> bool:
    """A word that ends a statement's name: the period it covers, a figure, a stopword."""
    return word in _PERIOD_WORDS or any(c.isdigit() for c in word) or (word in STOPWORDS and word not in _NAME_JOINS)


STATEMENT_KINDS: tuple[tuple[str, ...], ...] = (
    (
        "income statement",
        "statement of income",
        "statement of operations",
        "statement of earnings",
        "statement of profit or loss",
        "profit and loss statement",
        "P&L",
    ),
    ("balance sheet", "statement of financial position", "statement of financial condition"),
    ("cash flow statement", "statement of cash flows"),
)
"""The names each primary financial statement goes by in US GAAP and IFRS filings, its usual
name first: a question says "the income statement" or "the P&L" of a filing whose caption reads
"Statements of Operations"."""


STATEMENT_MEASURES: dict[str, tuple[str, ...]] = {
    "income statement": (
        "revenue",
        "net sales",
        "operating expenses",
        "operating expenditure",
        "operating income",
        "operating profit",
        "net income",
        "net earnings",
        "gross margin",
        "gross profit",
        "cost of sales",
        "cost of revenue",
        "research and development",
        "R&D",
        "selling general and administrative",
        "SG&A",
        "earnings per share",
        "EPS",
    ),
    "cash flow statement": (
        "cash flow from operations",
        "cash from operations",
        "operating cash flow",
        "operating activities",
        "investing activities",
        "financing activities",
        "capital expenditure",
        "capex",
        "free cash flow",
    ),
    "balance sheet": (
        "total assets",
        "total liabilities",
        "current assets",
        "current liabilities",
        "working capital",
        "quick ratio",
        "current ratio",
        "inventory level",
        "stockholders equity",
        "shareholders equity",
    ),
}
"""The measures each primary statement reports, as an analyst asks for them ("capital
expenditure" asks for the cash flow statement without naming it); matched as ``keyed_words``,
so "expenditures" and "operational" count."""


_KIND_WORDS = frozenset(w for names in STATEMENT_KINDS for name in names for w in keyed_words(name))


def _joined(ws: list[str]) -> list[str]:
    """``ws`` with a letter set apart from the word it ends joined back where that makes a word of
    a statement's name: some filings set their captions letter-spaced with a space glyph inside a
    word ("Consolidated Balance Shee t", "Statement of Incom e")."""
    out: list[str] = []
    for w in ws:
        if out and len(w) == 1 and w.isalpha() and out[-1] not in _KIND_WORDS and keyed_words(out[-1] + w)[0] in _KIND_WORDS:
            out[-1] = keyed_words(out[-1] + w)[0]
        else:
            out.append(w)
    return out


def _name_words(name: str) -> frozenset[str]:
    return frozenset(w for w in keyed_words(name) if len(w) > 1 and w not in STOPWORDS)


_KIND_OF_NAME = {_name_words(name): kinds[0] for kinds in STATEMENT_KINDS for name in kinds if _name_words(name)}


def kind_of_name(name: frozenset[str]) -> str | None:
    """The usual name of the primary statement whose name is these words (``statement_name``), else None."""
    return _KIND_OF_NAME.get(name)


def statement_kind(caption: str | None) -> str | None:
    """The usual name of the primary statement a caption titles ("Consolidated Statements of
    Operations" -> "income statement"); None for any other caption ("Statements of
    Comprehensive Income", "Pump flow rate limits") or none."""
    return _KIND_OF_NAME.get(statement_name(caption)) if caption else None


def statement_title(caption: str | None, section_path: Sequence[str]) -> str | None:
    """What titles a table as a statement: its caption, or for a table without one the heading
    it sits under where that heading titles a primary statement (the parser read the
    statement's title as a heading)."""
    if caption or not section_path:
        return caption
    return section_path[-1] if statement_kind(section_path[-1]) else None


def table_statement(caption: str | None, section_path: Sequence[str]) -> str | None:
    """The primary statement a table is (``statement_kind`` of its ``statement_title``), else None."""
    return statement_kind(statement_title(caption, section_path))
