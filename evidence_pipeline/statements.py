"""Which financial statement a table is, and which statements a query names.

A filing titles its statements in their captions ("3M Company and Subsidiaries Consolidated
Statement of Cash Flows", "CONSOLIDATED BALANCE SHEETS (in millions)"), and a question often
says which one to read ("... by relying on the details shown in the cash flow statement",
"... the line items clearly shown in the statement of income"). The question does not name the
row it needs ("capital expenditure" of a statement that prints "Purchases of property, plant
and equipment"), so the statement it names is the sharper signal.

``statement_name`` reads the name a caption prints; ``statement_kind`` maps it to one of the
primary statements (``STATEMENT_KINDS``), which the unit carries (``EvidenceUnit.statement``,
the indexed payload key ``statement``); ``NamedStatements`` reads a query and says how strongly
it names a table's statement (``row_names.promote_named_rows`` adds it to the row's strength)
and which statements to fetch as candidates (``retrieval.with_statements``).

Measured (full system, every set question by question, pipeline version 20): a statement named
by the words of its caption, its strength added to the row's, eval-finance ev@1 0.400 -> 0.440
(3M's capital expenditure "shown in the cash flow statement": the statement from rank 7 to 1);
every other set unchanged. Named by another of its names (``STATEMENT_KINDS``), fetched as a
candidate and fused as a list of its own: every hit rate as it was; Amazon's "... shown in the
statement of income" now returns its "Consolidated Statements of Operations" first (it had been
4th, outside the candidates before the fetch, under the segment note that also holds both
years' sales). Of the seven sets only FinanceBench's questions name a statement (4 of 25).

A query that asks a measure a statement reports names it too, more weakly (``STATEMENT_MEASURES``,
``MEASURED``), within the documents it is about. Measured (full system, ev@1 / ev@5): `make
eval-sec` and `make eval-finance` at `f1ac280` (before) and `068b1f7` (the commit that added the
measures), both on the int8 kernel of that time, on a 2-core AVX2 machine: eval-sec 0.484 / 0.677
-> 0.645 / 0.774 (Intel's "capital expenditure", Amazon's "operational expenditures ... against its
earnings" and "R&D expenditure", none in the first five before, now first; Apple's and Intel's
operating expenses against revenue and Microsoft's "inventory levels" from rank 2-4 to 1; NVIDIA's
operating expenses against revenue 1 -> 2: its answer is a percentage in the MD&A's table),
eval-finance 0.440 / 0.800 -> 0.480 / 0.840 (AMCOR's gross margin 3 -> 1, its quick ratio from
none to 2; Pfizer's revenue by region 1 -> 2); `make eval-sec-lookup` (segment and line items,
"Services gross margin", "accrued and other current liabilities") and every set without
statements unchanged.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Iterable, Mapping, Sequence

from evidence_pipeline.bm25_query import STOPWORDS
from evidence_pipeline.row_names import QueryWords, words

# Where a statement's name ends in its caption: the period it covers ("... Cash Flows Years
# ended December 31", "... for the three months ended"), a figure, or a stopword.
_PERIOD_WORDS = frozenset(words("year years month months quarter quarters period periods ended ending three six nine twelve unaudited"))
_STATEMENT, _OF, _BALANCE, _SHEET, _SEGMENT = words("statement of balance sheet segment")
# Words that qualify a statement without naming it, where they open its title
_QUALIFIERS = frozenset(words("consolidated condensed combined interim unaudited"))
_NAME_JOINS = frozenset(("and", "or"))  # "Statement of Profit or Loss", "... of Income and Comprehensive Income"


@functools.lru_cache(maxsize=1 << 14)
def statement_name(caption: str) -> frozenset[str]:
    """The words that name the financial statement a caption titles, as ``row_names.words`` keys
    them: "3M Company and Subsidiaries Consolidated Statement of Cash Flows" -> statement, cash,
    flow; "CONSOLIDATED BALANCE SHEETS (in millions)" -> balance, sheet; "INCOME STATEMENTS" ->
    income, statement. Empty when the caption titles no statement: the name must close the title
    (the period it covers aside: "Balance Sheet Components", "Selected Income Statement Data" are
    not statements) and not follow a stopword ("Amounts Offset in the Consolidated Balance
    Sheets", "Analysis of the Condensed Consolidated Statements of Cash Flows" are about one)."""
    ws = _joined(words(caption.split("(", 1)[0]))

    def titled(start: int, end: int) -> bool:
        before = ws[:start]
        while before and before[-1] in _QUALIFIERS:
            before = before[:-1]
        return (not before or before[-1] not in STOPWORDS) and (end == len(ws) or _breaks(ws[end]))

    for i, w in enumerate(ws):
        if w == _BALANCE and ws[i + 1 : i + 2] == [_SHEET] and titled(i, i + 2):
            return frozenset((_BALANCE, _SHEET))
        if w != _STATEMENT:
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
            return frozenset((_STATEMENT, *name))
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
"Statements of Operations". Accounting's own vocabulary, like ``bm25_query.STOPWORDS``; nothing
here is named after a company or a document."""


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
"""The measures a filing reports in each primary statement, as an analyst asks for them: a
question for "Intel's capital expenditure" or "Amazon's operating expenditures against
its earnings" asks for the cash flow statement or the income statement without naming it.
Accounting's vocabulary (``words`` keys a word's forms: "expenditures", "operational"); a
statement a query names by name (``STATEMENT_KINDS``) comes before one it asks a measure of."""


_KIND_WORDS = frozenset(w for names in STATEMENT_KINDS for name in names for w in words(name))


def _joined(ws: list[str]) -> list[str]:
    """``ws`` with a letter set apart from the word it ends joined back where that makes a word of
    a statement's name: some filings set their captions letter-spaced with a space glyph inside a
    word ("Consolidated Balance Shee t", "Statement of Incom e"), and no geometric rule tells those
    spaces from real ones (README, "Known limits")."""
    out: list[str] = []
    for w in ws:
        if out and len(w) == 1 and w.isalpha() and out[-1] not in _KIND_WORDS and words(out[-1] + w)[0] in _KIND_WORDS:
            out[-1] = words(out[-1] + w)[0]
        else:
            out.append(w)
    return out


def _name_words(name: str) -> frozenset[str]:
    return frozenset(w for w in words(name) if len(w) > 1 and w not in STOPWORDS)


_KIND_OF_NAME = {_name_words(name): kinds[0] for kinds in STATEMENT_KINDS for name in kinds if _name_words(name)}


def statement_kind(caption: str | None) -> str | None:
    """The usual name of the primary statement a caption titles ("Consolidated Statements of
    Operations" -> "income statement"); None for any other caption ("Statements of
    Comprehensive Income", "Pump flow rate limits") or none."""
    return _KIND_OF_NAME.get(statement_name(caption)) if caption else None


def statement_title(caption: str | None, section_path: Sequence[str]) -> str | None:
    """What titles a table as a statement: its caption, or for a table without one the heading
    it sits under where that heading titles a primary statement: the parser read the
    statement's title as a heading (Intel's "Consolidated Condensed Balance Sheets")."""
    if caption or not section_path:
        return caption
    return section_path[-1] if statement_kind(section_path[-1]) else None


# Words that may stand before a measure the query asks of the whole statement: "Apple's gross
# margin", "the total net sales", "Q3 2022 inventory levels", "its quarterly revenue". Any other
# word names a part: "Services gross margin", "AWS segment operating expenses", "short-term
# unearned revenue", "accrued and other current liabilities" are a segment's or a line's.
_WHOLE = (STOPWORDS - {"and", "or"}) | frozenset(words("s total consolidated quarterly annual fiscal reported year quarter period"))


@functools.lru_cache(maxsize=256)
def _measure_words(measure: str) -> tuple[str, ...]:
    return tuple(words(measure))


def _asks(held: QueryWords, measure: str, after_names: frozenset[int] = frozenset()) -> bool:
    """``measure`` occurs in the query with nothing naming a part before it: nothing, a word of the
    whole (``_WHOLE``), a figure, or a name of the document (``after_names``: where one ends)."""
    return any(
        i == 0 or i in after_names or held.forms[i - 1] & _WHOLE or any(c.isdigit() for f in held.forms[i - 1] for c in f)
        for i in held.starts(_measure_words(measure))
    )


MEASURED = 1
"""The strength of a statement the query asks a measure of: below any statement it names by name
(two words or more)."""


class NamedStatements:
    """The financial statements a query names, read from the whole query: the instructions are
    where a question says which statement to use ("... by relying on the details shown in the
    cash flow statement")."""

    def __init__(self, query: str, names: Iterable[str] = ()):
        """``names``: what the documents the query is about go by (``DocumentCard.known_as``). A
        measure right after one of them, whole, is the company's own as after a possessive ("Intel
        revenue", "AAPL net income"); a word of a name alone is not ("MGM Resorts International"
        does not make "international revenue" the whole company's)."""
        held = QueryWords(query)
        keyed = {tuple(words(name)) for name in names}
        after_names = frozenset(start + len(name) for name in keyed if name for start in held.starts(name))
        self.words = held.known
        self.named = tuple(kind[0] for kind in STATEMENT_KINDS if any(held.holds(words(n)) for n in kind))
        """The usual names of the primary statements the query names, by any of their names."""
        # a segment's revenue or operating income is the segment note's, not the statement's total
        self.measured = () if _SEGMENT in held.known else tuple(
            kind
            for kind, measures in STATEMENT_MEASURES.items()
            if kind not in self.named and any(_asks(held, m, after_names) for m in measures)
        )
        """The statements the query asks a measure of (``STATEMENT_MEASURES``) and does not name."""

    @property
    def kinds(self) -> tuple[str, ...]:
        """The statements to fetch as candidates (``retrieval.with_statements``)."""
        return self.named + self.measured

    def without_measures(self) -> "NamedStatements":
        """These statements less those only asked a measure of: a measure asks for the statement of
        the document a query is about, and over every document it would name every filing's."""
        named = copy.copy(self)
        named.measured = ()
        return named

    def strength(self, payload: Mapping[str, Any]) -> int:
        """The words of the statement a stored table is (``statement_name`` of its
        ``statement_title``) when the query holds them all ("the cash flow statement" names
        "Consolidated Statements of Cash Flows") or names that statement by another of its names
        (``STATEMENT_KINDS``: "the statement of income" names "Statements of Operations"); 0
        otherwise, and for a section chunk. "Statements of Comprehensive Income" is not the
        statement of income."""
        if not self.kinds and _STATEMENT not in self.words and _SHEET not in self.words:
            return 0
        if payload.get("statement") in self.measured and payload.get("unit_kind") == "table":
            return MEASURED
        title = statement_title(payload.get("caption"), payload.get("section_path") or ())
        name = statement_name(title) if title and payload.get("unit_kind") == "table" else frozenset()
        if not name:
            return 0
        return len(name) if name <= self.words or _KIND_OF_NAME.get(name) in self.named else 0
