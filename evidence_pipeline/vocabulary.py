"""The words the package's rules read text with: stop words, word forms, months, dates,
periods and quarters.

Document cards, routing, headings, financial statements and row matching take their
vocabulary from here. Where two rules need different lists (BM25's stop words and the
shorter list that never names a document; a loose and a strict month), both are named here.
BM25's own stop words and plural rule live in ``bm25_query`` (a file applications copy) and
are re-exported, so the index and these rules cannot drift apart.
"""

from __future__ import annotations

import re
from datetime import date

from evidence_pipeline.bm25_query import STOPWORDS, light_stem
from evidence_pipeline.text import fold

__all__ = [
    "MONTH_COUNTS", "MONTH_NAME", "MONTH_PREFIX", "MONTHS_BY_PREFIX", "NAME_STOPWORDS", "ORDINAL", "ORDINALS",
    "PERIOD_WORDS", "STOPWORDS", "WORD_KEY", "WORD_RE", "find_dates", "keyed_word", "keyed_words", "light_stem",
    "name_words", "parse_date", "word_key",
]  # fmt: skip

# --------------------------------------------------------------------------- words

NAME_STOPWORDS = frozenset(
    "a an and are as at be by did do does for from has have how in inc is it its of on or the this "
    "to under was were what when which with per vs".split()
)
"""Words that never name a document: left out of titles and organisation names (routing)."""

WORD_RE = re.compile(r"[^\W_]+")
"""A word: a run of letters and digits (``_`` separates), as BM25 reads it."""

_NAME_WORD = re.compile(r"[a-z0-9]+(?:[.&][a-z0-9]+)*")


def name_words(text: str) -> list[str]:
    """Lower-case words of ``text`` as names and titles are compared: a possessive "'s" dropped,
    "." and "&" kept inside a word ("r&d", "3.5", "amazon.com")."""
    text = re.sub(r"['’]s\b", "", text.lower())
    return _NAME_WORD.findall(text)


WORD_KEY = 7
"""Words of this many letters or more match on their first ``WORD_KEY`` letters: two forms of one
word ("operations", "operating"; "Depreciation", "depreciated") share a key."""


def word_key(word: str) -> str:
    """The first ``WORD_KEY`` letters of an ASCII word of letters; any other word whole."""
    return word[:WORD_KEY] if word.isascii() and word.isalpha() else word


def keyed_word(word: str) -> str:
    """One word as ``keyed_words`` keys it."""
    return word_key(light_stem(fold(word)))


def keyed_words(text: str) -> list[str]:
    """Case-folded words in order, plural endings stripped as BM25 strips them ("Inventories",
    "inventory"), long words cut to their key (``word_key``): the form in which row labels,
    statement titles and queries are compared."""
    return [word_key(light_stem(w)) for w in WORD_RE.findall(fold(text))]


# --------------------------------------------------------------------------- periods and quarters

ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}
"""A quarter's ordinal and its number."""
ORDINAL = "|".join(ORDINALS)
"""``ORDINALS`` as a regular-expression alternation."""

MONTH_COUNTS = "three|six|nine|twelve"
"""The month counts of a reporting period ("three months ended"), as an alternation."""

PERIOD_WORDS = frozenset(f"year years month months quarter quarters period periods ended ending {MONTH_COUNTS.replace('|', ' ')}".split())
"""Words that name a reporting period ("Three Months Ended", "Years ending")."""

# --------------------------------------------------------------------------- months and dates

MONTHS_BY_PREFIX = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
"""A month's number by its first three letters."""

MONTH_PREFIX = r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
"""A month as dates are read (loose: any word that opens with a month's prefix), its prefix captured."""

MONTH_NAME = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
"""A month's name or abbreviation only (strict: "Mar.", "March", not "Marketing"); nothing captured."""

_DATE_PATTERNS = [
    (re.compile(MONTH_PREFIX + r"\s+(\d{1,2})\s*(?:st|nd|rd|th)?,?\s+(\d{4})", re.I), ("m", "d", "y")),
    (re.compile(r"(\d{1,2})\s+" + MONTH_PREFIX + r",?\s+(\d{4})", re.I), ("d", "m", "y")),
    (re.compile(MONTH_PREFIX + r"-(\d{1,2})-(\d{4})", re.I), ("m", "d", "y")),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), ("y", "mn", "d")),
]


def _dates_with_spans(text: str) -> list[tuple[int, date]]:
    out = []
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            parts = dict(zip(order, m.groups()))
            month = int(parts["mn"]) if "mn" in parts else MONTHS_BY_PREFIX.get(parts["m"].lower()[:3])
            try:
                out.append((m.start(), date(int(parts["y"]), month or 0, int(parts["d"]))))
            except ValueError:
                continue
    return sorted(out, key=lambda x: x[0])


def without_dates(text: str) -> str:
    """``text`` with every date ``find_dates`` reads in it left out ("Form 10-K for the fiscal
    year ended January 28, 2023" -> "Form 10-K for the fiscal year ended")."""
    for pattern, _ in _DATE_PATTERNS:
        text = pattern.sub(" ", text)
    return text


def parse_date(text: str) -> date | None:
    """The first date written in ``text`` ("July 1, 2023", "1 July 2023", "2023-07-01", "Oct-16-2023")."""
    found = _dates_with_spans(text)
    return found[0][1] if found else None


def find_dates(text: str) -> list[str]:
    """Every date written in ``text``, as ISO strings, in order."""
    return [d.isoformat() for _, d in _dates_with_spans(text)]
