"""A query read once: every reading of its text that the search stages use.

``read_query(text)`` returns a ``Query``: the BM25 vector, the words and identifiers that
name documents, the periods it names, the printed names (tickers, short names in capitals),
the terms that pick rows of a split table, the words row labels and statement titles are
matched against, the statements it names and the statement measures it asks for. Stages
take the ``Query``; none reads the text again. Nothing here depends on the index.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date

from evidence_pipeline import financial_statements
from evidence_pipeline.financial_statements import SEGMENT_WORD, STATEMENT_KINDS
from evidence_pipeline.sparse import SparseEncoder, SparseVector
from evidence_pipeline.text import fold
from evidence_pipeline.vocabulary import (
    MONTH_COUNTS,
    ORDINAL,
    ORDINALS,
    STOPWORDS,
    WORD_RE,
    keyed_words,
    name_words,
    parse_date,
)

# --------------------------------------------------------------------------- periods

_QUARTER = [
    re.compile(r"\bQ([1-4])\s*(?:FY|fiscal(?:\s+year)?)?\s*['’]?\s*(\d{4}|\d{2})\b", re.I),
    re.compile(r"\b(?:FY|fiscal(?:\s+year)?)\s*['’]?(\d{4}|\d{2})\s*Q([1-4])\b", re.I),
    re.compile(r"\b(\d{4})\s*Q([1-4])\b", re.I),
    re.compile(rf"\b({ORDINAL})\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?(fiscal\s+(?:year\s+)?)?(\d{{4}})", re.I),
    re.compile(rf"\b(fiscal\s+(?:year\s+)?)?(\d{{4}})\s+({ORDINAL})\s+quarter\b", re.I),
]
_FISCAL_YEAR = re.compile(r"\b(?:FY\s*['’]?|fiscal\s+(?:year\s+)?)(\d{4}|\d{2})\b", re.I)
_ENDED = re.compile(
    r"\b(quarter|" + "|".join(rf"{n}\s+months" for n in MONTH_COUNTS.split("|")) + r"|year|period|\d+\s+weeks)"
    r"\s+ended\s+([a-z]{3,9}\.?\s+(?:\d{1,2},?\s+)?\d{4})",
    re.I,
)
# A balance-sheet date: "as of October 30, 2022", "at December 31, 2022" (a whole date only:
# "as of 2022" is a year, below).
_AS_OF = re.compile(r"\b(?:as\s+of|as\s+at|at)\s+([a-z]{3,9}\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+[a-z]{3,9}\.?\s+\d{4})", re.I)
_BARE_YEAR = re.compile(r"\b(?:in|of|for|during|as of|year|end of)\s+(20\d\d|19\d\d)\b", re.I)


@dataclass(frozen=True)
class PeriodRef:
    """A period the query names: a fiscal quarter/year, a calendar span, or an end date.
    ``month_only``: the end names a month, no day; ``weak``: a bare year ("in 2022")."""

    year: int
    quarter: int | None = None
    fiscal: bool = False
    end: date | None = None
    month_only: bool = False
    weak: bool = False


def _year(text: str) -> int:
    y = int(text)
    return y + 2000 if y < 100 else y


def query_periods(query: str) -> list[PeriodRef]:
    """Every period reference in ``query``: "Q3 2023", "fiscal 2022", "quarter ended July 2023",
    "three months ended April 1, 2023", "as of October 30, 2022"; a bare year only when none else."""
    refs: list[PeriodRef] = []
    spans: list[tuple[int, int]] = []
    for i, pattern in enumerate(_QUARTER):
        for m in pattern.finditer(query):
            g = m.groups()
            if i == 0:
                refs.append(PeriodRef(_year(g[1]), int(g[0]), fiscal=bool(re.search(r"fy|fiscal", m.group(0), re.I))))
            elif i == 1:
                refs.append(PeriodRef(_year(g[0]), int(g[1]), fiscal=True))
            elif i == 2:
                refs.append(PeriodRef(int(g[0]), int(g[1])))
            elif i == 3:
                fiscal = bool(g[1]) or "fiscal" in m.group(0).lower()
                refs.append(PeriodRef(int(g[2]), ORDINALS[g[0].lower()], fiscal=fiscal))
            else:
                refs.append(PeriodRef(int(g[1]), ORDINALS[g[2].lower()], fiscal=bool(g[0])))
            spans.append(m.span())
    for m in _ENDED.finditer(query):
        text = m.group(2)
        end = parse_date(text)
        month_only = end is None
        if end is None:
            parts = text.replace(".", "").split()
            end = parse_date(f"{parts[0]} 1, {parts[-1]}")
        if end is not None:
            refs.append(PeriodRef(end.year, end=end, month_only=month_only))
            spans.append(m.span())
    for m in _AS_OF.finditer(query):
        end = parse_date(m.group(1))
        if end is not None and not any(a <= m.start() < b for a, b in spans):
            refs.append(PeriodRef(end.year, end=end))
            spans.append(m.span())
    for m in _FISCAL_YEAR.finditer(query):
        if not any(a <= m.start() < b for a, b in spans):
            refs.append(PeriodRef(_year(m.group(1)), fiscal=True))
            spans.append(m.span())
    if not refs:
        refs.extend(PeriodRef(int(m.group(1)), weak=True) for m in _BARE_YEAR.finditer(query))
    return refs


# --------------------------------------------------------------------------- words of labels and titles

_HANGUL = re.compile(r"[\uac00-\ud7a3]+")
PARTICLE_SYLLABLES = 2
"""A Korean noun in a query carries its particle ("온도는", "압력의"): a Hangul word holds a
label's word when it opens with it and at most this many syllables follow."""

# An acronym as a query writes it: capitals, "&" between them ("R&D", "SG&A", "EPS").
_ACRONYM = re.compile(r"(?<![\w&])[A-Z](?:[A-Z]|&(?=[A-Z]))+(?![\w&])")


class QueryWords:
    """A text's words as row labels and statement titles are matched against them
    (``vocabulary.keyed_words``), each with the forms a label's word may take to match it (a
    Hangul word also less a particle of up to ``PARTICLE_SYLLABLES``); the acronyms it writes;
    and its words as printed with their case, its first word left out (``cased``); the words it
    prints with a capital, folded, its first word included (``capitalised``); whether it names a
    period (``dated``: ``query_periods``)."""

    def __init__(self, text: str):
        self.forms = [self._forms(w) for w in keyed_words(text)]
        self.known = frozenset().union(*self.forms)
        self.acronyms = frozenset(_ACRONYM.findall(text))
        printed = WORD_RE.findall(text)
        self.cased = frozenset(printed[1:])
        self.capitalised = frozenset(fold(w) for w in printed if w[:1].isupper())
        self._text = text

    @functools.cached_property
    def dated(self) -> bool:
        """The text names a period (``query_periods``); read on first use (a label of one word
        without a capital asks it)."""
        return bool(query_periods(self._text))

    @staticmethod
    def _forms(word: str) -> frozenset[str]:
        if _HANGUL.fullmatch(word) is None:
            return frozenset((word,))
        return frozenset(word[: len(word) - n] for n in range(min(PARTICLE_SYLLABLES, len(word) - 1) + 1))

    def holds(self, phrase: Sequence[str]) -> bool:
        """``phrase`` occurs in the text word for word, in order."""
        return any(True for _ in self.starts(phrase))

    def starts(self, phrase: Sequence[str]) -> Iterator[int]:
        """Where ``phrase`` opens in the text, word for word, in order (indexes of ``forms``)."""
        if not phrase or not self.known.issuperset(phrase):  # most labels share a word or none
            return
        n = len(phrase)
        for i in range(len(self.forms) - n + 1):
            if all(w in f for w, f in zip(phrase, self.forms[i : i + n])):
                yield i


# Where a query's question opens: after the last sentence end or colon before its first question
# mark ("... shown in the balance sheet: what is the net PPNE?"). A period ends a sentence after
# a lower-case word of three letters or more, so "U.S." and "e.g." do not.
_QUESTION = re.compile(r"(?:^|(?<=[:;!?]\s)|(?<=[a-z]{3}\.\s))(?:[^:;!?.\s]|\s|\.(?!\s)|(?<![a-z]{3})\.\s)*\?")


def from_question(query: str) -> str:
    """``query`` from its first question on, without the preamble before it ("Assume you are an
    equities analyst. Answer using the balance sheet: what is the net PPNE? Answer in USD." ->
    "what is the net PPNE? Answer in USD."); the whole query when it asks no question."""
    question = next((m for m in _QUESTION.finditer(query) if m.group(0).strip() != "?"), None)
    return query[question.start() :].lstrip() if question else query


# --------------------------------------------------------------------------- statements and measures

# Words that may stand before a measure the query asks of the whole statement: "the total net
# sales", "quarterly revenue". Any other word names a part ("segment operating expenses").
_WHOLE = (STOPWORDS - {"and", "or"}) | frozenset(keyed_words("s total consolidated quarterly annual fiscal reported year quarter period"))


@dataclass(frozen=True)
class MeasureAsked:
    """A statement measure the query holds (``financial_statements.STATEMENT_MEASURES``): the
    statement, where the measure opens (an index of ``Query.held.forms``), and whether the word
    before it leaves it the whole company's (none, a word of ``_WHOLE``, a figure)."""

    statement: str
    start: int
    whole: bool


@functools.lru_cache(maxsize=256)
def _measure_words(measure: str) -> tuple[str, ...]:
    return tuple(keyed_words(measure))


def _measures_asked(held: QueryWords) -> tuple[MeasureAsked, ...]:
    if SEGMENT_WORD in held.known:  # a segment's revenue is the segment note's, not the statement's
        return ()
    out = []
    for kind, measures in financial_statements.STATEMENT_MEASURES.items():
        for measure in measures:
            for i in held.starts(_measure_words(measure)):
                before = held.forms[i - 1] if i else frozenset()
                whole = i == 0 or bool(before & _WHOLE) or any(c.isdigit() for f in before for c in f)
                out.append(MeasureAsked(kind, i, whole))
    return tuple(out)


# --------------------------------------------------------------------------- the query

_ID_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)+|[A-Za-z]*\d[A-Za-z0-9]*")
# A ticker, or a short name printed in capitals ("XYZ", "GE", "4D"), matched case-sensitively.
_PRINTED_NAME = re.compile(r"(?<![\w.-])(?:[A-Z][A-Z.]{0,5}|\d[A-Z]{1,3}|[A-Z]\d[A-Z]?)(?![\w])")
# Terms that pick rows: identifiers and figures ("FT-2070", "2,184", "Q3")
_KEY_TERM = re.compile(r"[A-Za-z]*\d[\w.,/-]*|[A-Z][A-Za-z0-9]*[-_/][A-Za-z0-9-_/]+")


@dataclass(frozen=True)
class Query:
    """One query, read once (``read_query``); every stage takes it.

    ``sparse``: the BM25 query vector (``bm25_query.tokenize``). ``words``, ``identifiers``,
    ``printed_names`` and ``periods``: what names a document (lower-case words, id-like tokens,
    names printed in capitals, periods; ``named_documents``). ``key_terms``: identifiers and figures that
    pick the pieces of a split table (``expand``). ``held``: the whole text as statement titles
    are matched (``named_statements``); ``asked``: the text from its first question on, as row
    labels are matched (``named_rows``). ``statements``: the primary statements it names by name;
    ``measures``: the statement measures it asks for."""

    text: str
    sparse: SparseVector
    words: tuple[str, ...]
    identifiers: tuple[str, ...]
    printed_names: tuple[str, ...]
    periods: tuple[PeriodRef, ...]
    key_terms: tuple[str, ...]
    held: QueryWords
    asked: QueryWords
    statements: tuple[str, ...]
    measures: tuple[MeasureAsked, ...]


def read_query(text: str) -> Query:
    """Every reading of ``text`` the search stages use (see ``Query``)."""
    held = QueryWords(text)
    return Query(
        text=text,
        sparse=SparseEncoder().encode_query(text),
        words=tuple(name_words(text)),
        identifiers=tuple(_ID_TOKEN.findall(text)),
        printed_names=tuple(_PRINTED_NAME.findall(text)),
        periods=tuple(query_periods(text)),
        key_terms=tuple(t.strip(".,") for t in _KEY_TERM.findall(text) if len(t.strip(".,")) >= 2),
        held=held,
        asked=QueryWords(from_question(text)),
        statements=tuple(kind[0] for kind in STATEMENT_KINDS if any(held.holds(keyed_words(n)) for n in kind)),
        measures=_measures_asked(held),
    )
