"""The table rows a query names, and the search step that moves their tables up.

A lookup query holds a row's label word for word ("marketing, general and administrative
expenses" names the row "Marketing, general and administrative"), or its acronym ("R&D" names
"Research and development", ``label_acronyms``), or a short label as printed ("Mac", "AWS",
``short_name``). Dense vectors and BM25 rank the prose that discusses such an item level with,
or above, the table row that prints its figure; a label the query holds whole is the sharper
signal. The labels come from the parent's own table (``tables.row_labels``); nothing is listed
in the code.

``promote_named_rows`` fuses a ranked list with the list of those among its first ``depth``
whose table has a row the query names (most specific label first), and with the list of the
statements it names, by reciprocal rank (``fusion.rrf``): such a table moves up past the prose
around it, and a list in which nothing is named keeps its order.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from evidence_pipeline.fusion import RRF_K, rrf
from evidence_pipeline.retrieval.query import Query, QueryWords, read_query
from evidence_pipeline.tables import common_size, row_labels
from evidence_pipeline.text import fold
from evidence_pipeline.vocabulary import STOPWORDS, WORD_RE, keyed_word

NAMED_ROW_DEPTH = 20
"""Parents of a ranked list that may move up: the same for every k, so a search for 5
results returns the first 5 of a search for 10."""

MIN_SOLE_WORD = 5
"""A label of one content word counts when the word has at least this many letters: a short
one ("pH", "Mac", "Net") is an abbreviation or a fragment that many queries hold by chance,
unless the query writes it with its capital as the label prints it (``short_name``). A longer
one counts where the query names a period, as a question after a row's figure does ("the
revenue in Q1 2023"), or prints the word with a capital, as the row prints its name
(``sole_word``), or asks "how many" of a "Number of ..." row (``_asks_count``); otherwise
"subjects", "blood" or "glucose" in the running words of a question are no row's name ("Number of
Subjects", "Blood", "Glucose": rows of many a protocol's tables)."""

# Where a label's name ends: a footnote marker "(5)", "(a)", a currency sign, or a figure
# the parser left in the label cell ("Advertising services (5) 7,612"), two digits or more. A
# digit alone after a word is part of the name ("Level 2 (2):", "Phase 3"): "Level" alone is no
# row that a query names by "inventory levels".
_LABEL_END = re.compile(r"\(\s*[0-9a-z]{1,2}\s*\)|[$€£¥]|\s\(?\d[\d,.]+\)?(?=\s|$)")
# Words that qualify a row without naming it, left out where a label opens with them:
# "Total operating expenses" is named by "operating expenses", "Net revenue" by "revenue"
# (a query asks for "the company's revenue", "net revenue" or "total net sales" alike).
_LEADING = frozenset({"total", "net"})
_QUALIFIERS = frozenset({"total", "net", "other", "less", "plus"})


def _printed_words(label: str) -> list[str]:
    """A label's words as printed, cut at a footnote marker or a stray figure (``_LABEL_END``)."""
    return WORD_RE.findall(_LABEL_END.split(label, maxsplit=1)[0])


# "Number of study sites" is what a query asks as "how many study sites"
_COUNT_OF = ("number", "of")
_HOW_MANY = ("how", "many")


@functools.lru_cache(maxsize=1 << 16)
def _name_and_count(label: str) -> tuple[tuple[str, ...], bool]:
    """The words of a label that name its row, as printed (``_printed_words``), a leading
    "Total" or "Net" left out, and a leading "Number of" ("Number of Study Sites" is named by
    "How many study sites ..."); and whether the label counts something (it opened with
    "Number of" once "Total" or "Net" was left out)."""
    name = _printed_words(label)
    while name and fold(name[0]) in _LEADING:
        name = name[1:]
    counts = tuple(fold(w) for w in name[:2]) == _COUNT_OF
    return tuple(name[2:] if counts else name), counts


def _label_name(label: str) -> tuple[str, ...]:
    """The words of a label that name its row (``_name_and_count``)."""
    return _name_and_count(label)[0]


def _wrapped_tail(label: str) -> bool:
    """A label in lower case only ("operations", "management"): the second line of a label that
    wraps ("Net cash provided by continuing" / "operations"), read as a row of its own. Its
    one word is a word of the label, not its name."""
    return any(c.islower() for c in label) and not any(c.isupper() for c in label)


@functools.lru_cache(maxsize=1 << 16)
def label_phrase(label: str) -> tuple[tuple[str, ...], int]:
    """The words that name a row, and how many of them carry content (not stopwords,
    qualifiers, figures or single letters). ``((), 0)`` when the label names nothing on its own."""
    phrase = [keyed_word(w) for w in _label_name(label)]
    # a letter alone is a piece of an abbreviation ("R&D" reads "r", "d"), not a word that names
    content = [w for w in phrase if len(w) > 1 and w not in STOPWORDS and w not in _QUALIFIERS and not w.isdigit()]
    if not content or (len(content) == 1 and (len(content[0]) < MIN_SOLE_WORD or _wrapped_tail(label))):
        return (), 0
    return tuple(phrase), len(content)


@functools.lru_cache(maxsize=1 << 16)
def sole_word(label: str) -> frozenset[str] | None:
    """For a label of one content word (``label_phrase``), the words of its name, folded
    ("Other assets": "other", "assets"); None for any other label."""
    if label_phrase(label)[1] != 1:
        return None
    return frozenset(fold(w) for w in _label_name(label))


def _asks_count(label: str, phrase: tuple[str, ...], query: QueryWords) -> bool:
    """A "Number of ..." label ("Total number of ..." too) whose name the query asks for with
    "how many" ("how many participants" names "Number of participants")."""
    return _name_and_count(label)[1] and query.holds(_HOW_MANY + phrase)


@functools.lru_cache(maxsize=1 << 16)
def short_name(label: str) -> str | None:
    """A label that is one short word set with a capital ("Mac", "AWS", "EMEA"), as printed:
    too short to count by its letters alone (``MIN_SOLE_WORD``), it names its row where a query
    writes it the same way, not opening the query (``QueryWords.cased``)."""
    name = _label_name(label)
    if len(name) != 1 or not name[0][:1].isupper() or not 2 <= len(name[0]) < MIN_SOLE_WORD or name[0].isdigit():
        return None
    word = fold(name[0])
    return None if word in STOPWORDS or word in _QUALIFIERS else name[0]


@functools.lru_cache(maxsize=1 << 16)
def label_acronyms(label: str) -> frozenset[str]:
    """The acronyms a label of two words or more is written as: the initials of its words,
    "and" as "&" ("Research and development" -> "R&D", "Selling, general and administrative"
    -> "SG&A", "Property, plant and equipment" -> "PP&E"), with and without the initials of
    its other stopwords ("Cost of revenue" -> "COR" and "CR")."""
    parts = [w for w in _label_name(label) if not w.isdigit()]
    if len(parts) < 2:
        return frozenset()

    def initials(keep_small: bool) -> str:
        return "".join(
            "&" if w.lower() == "and" else w[0].upper() for w in parts if keep_small or w.lower() == "and" or w.lower() not in STOPWORDS
        )

    return frozenset(a for a in (initials(True), initials(False)) if len(a.replace("&", "")) >= 2)


NET_DROPPED = 0.5
"""What a label held only without its leading "Net" loses of its strength (in content words)."""


def named_row_strength(parent_text: str, query: QueryWords) -> float:
    """Content words of the longest row label of the parent's table that the query holds
    as a phrase or as its acronym; 0 when the query names none of its rows. A label of one
    content word counts only where ``MIN_SOLE_WORD`` says.

    A label the query holds only without its leading "Net" counts ``NET_DROPPED`` less: "Net
    additions to property, plant and equipment" (a non-GAAP table's) is another amount than
    the "Additions to property, plant and equipment" a query asks for, so of two tables that
    name the row with as many words, the one that prints it as asked comes first."""
    best = 0.0
    for label in row_labels(parent_text):
        phrase, content = label_phrase(label)
        sole = sole_word(label) if content == 1 else None
        if sole is not None and not sole & query.capitalised and not _asks_count(label, phrase, query) and not query.dated:
            continue  # one word names a row in a query that prints it with a capital, asks how many, or names a period
        if content > best and query.holds(phrase):
            whole = _label_words(label)
            net_dropped = "net" in whole[: len(whole) - len(phrase)] and not query.holds(whole)
            best = max(best, content - NET_DROPPED * net_dropped)
        elif content > best and query.acronyms and query.acronyms & label_acronyms(label):
            best = content
        elif not best and short_name(label) in query.cased:
            best = 1
    return best


@functools.lru_cache(maxsize=1 << 16)
def _label_words(label: str) -> tuple[str, ...]:
    """Every word of a label's name as ``label_phrase`` keys them, a leading "Total" or "Net" kept."""
    return tuple(keyed_word(w) for w in _printed_words(label))


T = TypeVar("T")


def promote_named_rows(
    hits: Sequence[T],
    query: Query | str,
    parent_text: Callable[[T], str],
    depth: int = NAMED_ROW_DEPTH,
    statement: Callable[[T], float] | None = None,
) -> list[T]:
    """``hits`` reordered by reciprocal rank fusion with the list of those among the first
    ``depth`` whose table has a row the query names (``Query.asked``), the most specific label
    first; ties keep the order of ``hits``.

    A common-size table (``tables.common_size``: every figure a percentage of the first row) is
    not promoted, so the statement that prints the figure moves past it. ``statement``: how
    strongly the query names the statement a hit's table is (``NamedStatements.strength``); the
    tables it names are a list of their own, fused like the named rows."""
    if isinstance(query, str):
        query = read_query(query)
    held = query.asked
    texts = [parent_text(h) if n < depth else "" for n, h in enumerate(hits)]
    strengths = [named_row_strength(t, held) if t else 0.0 for t in texts]
    strengths = [0 if s and common_size(t) else s for s, t in zip(strengths, texts)]
    lists = [strengths, [statement(h) if n < depth else 0 for n, h in enumerate(hits)]] if statement else [strengths]
    named = [sorted((n for n, s in enumerate(given) if s), key=lambda n: (-given[n], n)) for given in lists]
    if not any(named):
        return list(hits)
    score = rrf([(range(len(hits)), 1.0), *((ranked, 1.0) for ranked in named)], RRF_K)
    return [hits[n] for n in sorted(range(len(hits)), key=lambda n: (-score[n], n))]
