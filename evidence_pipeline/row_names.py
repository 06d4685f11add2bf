"""Which table rows does a query name? A lookup query holds a row's label word for word.

"What were Intel's marketing, general and administrative expenses for the three months
ended October 1, 2022?" holds the label of the row "Marketing, general and administrative";
"AWS segment operating expenses" holds "Operating expenses"; "Intel's R&D expenditure" holds
the acronym of "Research and development" (``label_acronyms``). Dense vectors and BM25 rank
the prose that discusses such an item ("General and administrative expenses increased $953
million ...") level with, or above, the table row that prints its figure: the sentence
shares as many words with the query, and more of them. A row label the query holds whole
is a sharper signal than any shared word: the query names that row.

``promote_named_rows`` fuses a ranked list of parents with the list of those among its
first ``NAMED_ROW_DEPTH`` whose table has a row the query names (most specific label
first) by reciprocal rank, so such a table moves up past the prose around it, and a list
in which no row is named keeps its order. The labels come from the parent's own table
(``tables.row_labels``); nothing is listed in the code.

Measured (full system, ev@1 / ev@5, same commit and cache, without -> with):
`make eval-sec-lookup` 0.475 / 0.850 -> 0.850 / 0.975, `make eval-sec` 0.290 / 0.452 ->
0.355 / 0.548 (with acronyms 0.387 / 0.581: "Intel's R&D expenditure" finds the income
statement's row, where a key-terms table defining "R&D" had come first); `make eval`,
`make eval-twins`, `make eval-finance` and `make eval-korean` unchanged. Leaving common-size
tables out of the promotion: eval-sec 0.387 -> 0.419, eval-sec-lookup 0.875 -> 0.925 (NVIDIA's
statement rows, where its MD&A table of percentages of revenue had tied with them and come
first); the other sets unchanged. A leading "Net" left out like "Total": eval-finance ev@1
0.400 -> 0.440, the others unchanged (the question gained asks Amazon's revenue "shown in the
income statement", and "income" now names "Net income": partly chance, the word names the
statement). ``NAMED_ROW_DEPTH`` 5 / 10 / 20 / 30 / 50 gave eval-sec-lookup ev@1 0.750 / 0.775 /
0.850 / 0.850 / 0.850 and eval-sec 0.290 / 0.290 / 0.355 / 0.355 / 0.323; eval-finance ev@1
0.440 / 0.400 / 0.400 / 0.360 / 0.360. Search p50 on the 10-Q store rose about 2 ms
(``benchmark.search_latency --store``). The cost is a question that asks why a figure moved
("What drove the increase in ... merchandise inventories") when the answer is prose beside a
table that prints the item: at depth 20 one FinanceBench question of that kind fell to rank 2
while a lookup of revenue by region rose to rank 1. A label of one short word set with a capital
("Mac", "AWS") counts where the query writes it so (``short_name``): eval-sec-lookup 0.925 /
0.975 -> 0.950 / 1.000 ("AAPL Mac net sales, quarter ended June 2022" had ranked the MD&A
prose on Mac first, the table by category 7th), every other set unchanged (pipeline 16). A
digit after a word is part of a label's name ("Level 2 (2):" is named by "Level 2", not by
"levels"): eval-sec 0.419 / 0.645 -> 0.452 / 0.677 ("inventory levels" of Apple and Amazon had
named their fair-value tables' "Level 2" rows first), every other set unchanged (pipeline 17).
Long words matching on their first ``WORD_KEY`` letters: eval-sec ev@1 0.452 -> 0.484
("net cash from operating activities" names Microsoft's "Net cash from operations", the
cash-flow statement first), every other set unchanged. A label of one word in lower case is
the wrapped tail of another (``_wrapped_tail``): eval-finance ev@1 0.360 -> 0.400 ("Pfizer's
standard business operations" had named the "operations" line of its cash-flow analysis first),
every other set unchanged question by question (pipeline 18). A label of many words in lower
case ("giroctocogene fitelparvovec", a drug) still names its row. A label held only without its
leading "Net" counts half a word less (``NET_DROPPED``): with Intel's MD&A under its own heading
(pipeline 19), its non-GAAP "Net additions to property, plant and equipment" had tied with the
cash-flow statement's row and come first (eval-sec-lookup ev@1 0.950 -> 0.925); with the rule
0.950 again, every other set unchanged question by question. Ranking every label printed as
asked above one held without "Net" or "Total" was tried: a query's "inventory levels" then named
the balance sheet's "Inventories" before the note's "Total inventories" (eval-sec ev@1 -1,
eval-sec-lookup +1).

Pipeline version 20 reads 3M's Items set in body type (``parser.headings.structural_lines``);
with the new prefixes its pension plans' asset table became a candidate, and "Assume that you
are a public equities analyst. ..." named its "Equities" row first (eval-finance ev@1 0.400 ->
0.360). Rows are now named from the query's first question on (``from_question``): 0.400 again,
every other set unchanged question by question (only that query of the seven sets has a preamble).
Naming only the question's own clause, not what follows it, lost Amazon's "... shown in the
statement of income" (its "income" names "Net income") and drops a definition that names the
rows ("DPO is defined as: 365 * (average accounts payable ..."). A statement named by the query
(``statements.NamedStatements``, read from the whole query: the instructions are where a question
says which statement to use): eval-finance ev@1 0.400 -> 0.440 (3M's capital expenditure "shown
in the cash flow statement", printed as "Purchases of property, plant and equipment": the
statement from rank 7 to 1), every other set unchanged question by question. A leading "Number
of" left out of a label (``_COUNT_OF``: "How many study sites are planned ..." names "Number of
Study Sites"): eval-protocols ev@1 0.667 -> 0.722 (two synopsis tables' counts of sites and of
participants, from rank 2 to 1), every other set unchanged question by question.
"""

from __future__ import annotations

import functools
import re
from typing import Callable, Iterator, Sequence, TypeVar

from evidence_pipeline.bm25_query import STOPWORDS, light_stem
from evidence_pipeline.store.base import RRF_K
from evidence_pipeline.tables import common_size, row_labels
from evidence_pipeline.text import fold

NAMED_ROW_DEPTH = 20
"""Parents of a ranked list that may move up: the same for every k, so a search for 5
results returns the first 5 of a search for 10."""

MIN_SOLE_WORD = 5
"""A label of one content word counts when the word has at least this many letters: a short
one ("pH", "Mac", "Net") is an abbreviation or a fragment that many queries hold by chance,
unless the query writes it with its capital as the label prints it (``short_name``)."""

_WORD = re.compile(r"[^\W_]+")
# Where a label's name ends: a footnote marker "(5)", "(a)", a currency sign, or a figure
# the parser left in the label cell ("Advertising services (5) 7,612"), two digits or more. A
# digit alone after a word is part of the name ("Level 2 (2):", "Phase 3"): "Level" alone is no
# row that a query names by "inventory levels".
_LABEL_END = re.compile(r"\(\s*[0-9a-z]{1,2}\s*\)|[$€£¥]|\s\(?\d[\d,.]+\)?(?=\s|$)")
# Words that qualify a row without naming it, left out where a label opens with them:
# "Total operating expenses" is named by "operating expenses", "Net revenue" by "revenue"
# (a query asks for "Amazon's revenue", "net revenue" or "total net sales" alike).
_LEADING = frozenset({"total", "net"})
_QUALIFIERS = frozenset({"total", "net", "other", "less", "plus"})


def words(text: str) -> list[str]:
    """Case-folded words in order, plural endings stripped as BM25 strips them (rows say
    "Inventories", queries "inventory"), long words cut to their key (``word_key``)."""
    return [word_key(light_stem(w)) for w in _WORD.findall(fold(text))]


WORD_KEY = 7
"""Words of this many letters or more match on their first ``WORD_KEY`` letters: a label's
word and the query's may be two forms of one ("Net cash from operations", "cash from operating
activities"; "Depreciation", "depreciated")."""


def word_key(word: str) -> str:
    return word[:WORD_KEY] if word.isascii() and word.isalpha() else word


def _printed_words(label: str) -> list[str]:
    """A label's words as printed, cut at a footnote marker or a stray figure (``_LABEL_END``)."""
    return _WORD.findall(_LABEL_END.split(label, maxsplit=1)[0])


def _key(word: str) -> str:
    """A printed word as ``words`` keys a query's."""
    return word_key(light_stem(fold(word)))


# "Number of study sites" is what a query asks as "how many study sites"
_COUNT_OF = ("number", "of")


def _label_name(label: str) -> list[str]:
    """The words of a label that name its row, as printed (``_printed_words``), a leading
    "Total" or "Net" left out, and a leading "Number of" ("Number of Study Sites" is named by
    "How many study sites ...")."""
    name = _printed_words(label)
    while name and fold(name[0]) in _LEADING:
        name = name[1:]
    if tuple(fold(w) for w in name[:2]) == _COUNT_OF:
        name = name[2:]
    return name


def _wrapped_tail(label: str) -> bool:
    """A label in lower case only ("operations", "management"): the second line of a label that
    wraps ("Net cash provided by continuing" / "operations"), read as a row of its own. Its
    one word is a word of the label, not its name."""
    return any(c.islower() for c in label) and not any(c.isupper() for c in label)


@functools.lru_cache(maxsize=1 << 16)
def label_phrase(label: str) -> tuple[tuple[str, ...], int]:
    """The words that name a row, and how many of them carry content (not stopwords,
    qualifiers, figures or single letters). ``((), 0)`` when the label names nothing on its own."""
    phrase = [_key(w) for w in _label_name(label)]
    # a letter alone is a piece of an abbreviation ("R&D" reads "r", "d"), not a word that names
    content = [w for w in phrase if len(w) > 1 and w not in STOPWORDS and w not in _QUALIFIERS and not w.isdigit()]
    if not content or (len(content) == 1 and (len(content[0]) < MIN_SOLE_WORD or _wrapped_tail(label))):
        return (), 0
    return tuple(phrase), len(content)


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
            "&" if w.lower() == "and" else w[0].upper()
            for w in parts
            if keep_small or w.lower() == "and" or w.lower() not in STOPWORDS
        )

    return frozenset(a for a in (initials(True), initials(False)) if len(a.replace("&", "")) >= 2)


NET_DROPPED = 0.5
"""What a label held only without its leading "Net" loses of its strength (in content words)."""


def named_row_strength(parent_text: str, query: "QueryWords") -> float:
    """Content words of the longest row label of the parent's table that the query holds
    as a phrase or as its acronym; 0 when the query names none of its rows.

    A label the query holds only without its leading "Net" counts ``NET_DROPPED`` less: "Net
    additions to property, plant and equipment" (a non-GAAP table's) is another amount than
    the "Additions to property, plant and equipment" a query asks for, so of two tables that
    name the row with as many words, the one that prints it as asked comes first."""
    best = 0.0
    for label in row_labels(parent_text):
        phrase, content = label_phrase(label)
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
    return tuple(_key(w) for w in _printed_words(label))


_HANGUL = re.compile(r"[\uac00-\ud7a3]+")
PARTICLE_SYLLABLES = 2
"""A Korean noun in a query carries its particle ("온도는", "압력의"): a Hangul word holds a
label's word when it opens with it and at most this many syllables follow."""


# An acronym as a query writes it: capitals, "&" between them ("R&D", "SG&A", "EPS").
_ACRONYM = re.compile(r"(?<![\w&])[A-Z](?:[A-Z]|&(?=[A-Z]))+(?![\w&])")


class QueryWords:
    """A query's words, each with the forms a label's word may take to match it (the word;
    for a Hangul word, also the word less a particle of up to ``PARTICLE_SYLLABLES``), and
    the acronyms it writes (matched against ``label_acronyms``)."""

    def __init__(self, query: str):
        self.forms = [self._forms(w) for w in words(query)]
        self.known = frozenset().union(*self.forms)
        self.acronyms = frozenset(_ACRONYM.findall(query))
        self.cased = frozenset(_WORD.findall(query)[1:])

    @staticmethod
    def _forms(word: str) -> frozenset[str]:
        if _HANGUL.fullmatch(word) is None:
            return frozenset((word,))
        return frozenset(word[: len(word) - n] for n in range(min(PARTICLE_SYLLABLES, len(word) - 1) + 1))

    def holds(self, phrase: Sequence[str]) -> bool:
        """``phrase`` occurs in the query word for word, in order."""
        return any(True for _ in self.starts(phrase))

    def starts(self, phrase: Sequence[str]) -> Iterator[int]:
        """Where ``phrase`` opens in the query, word for word, in order (indexes of ``forms``)."""
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
    """``query`` from its first question on, without the preamble before it ("Assume that you
    are a public equities analyst. Answer the following question by primarily using information
    that is shown in the balance sheet: what is the year end FY2018 net PPNE for 3M? Answer in
    USD billions." -> "what is the year end FY2018 net PPNE for 3M? Answer in USD billions.");
    the whole query when it asks no question. A row the preamble names ("Equities", by "a public
    equities analyst") is not what is asked; what follows the question may define it ("DPO is
    defined as: 365 * (average accounts payable ...").

    The statement a preamble names ("shown in the balance sheet") still names its table
    (``statements.NamedStatements`` reads the whole query)."""
    question = next((m for m in _QUESTION.finditer(query) if m.group(0).strip() != "?"), None)
    return query[question.start() :].lstrip() if question else query


T = TypeVar("T")


def promote_named_rows(
    hits: Sequence[T],
    query: str,
    parent_text: Callable[[T], str],
    depth: int = NAMED_ROW_DEPTH,
    statement: Callable[[T], float] | None = None,
) -> list[T]:
    """``hits`` reordered by reciprocal rank fusion with the list of those among the first
    ``depth`` whose table has a row the query names, the most specific label first.

    A common-size table (``tables.common_size``: every figure a percentage of the first row)
    repeats a statement's row labels beside percentages; it is not promoted, so where the query
    names a row of both, the statement that prints the figure moves past it, and the percentages
    keep the rank the lists gave them.

    ``statement``: how strongly the query names the statement a hit's table is
    (``statements.NamedStatements.strength`` of its payload); the tables it names are a list of
    their own, fused like the named rows, so a statement the query names and a row it names each
    move a table up."""
    held = QueryWords(from_question(query))
    texts = [parent_text(h) if n < depth else "" for n, h in enumerate(hits)]
    strengths = [named_row_strength(t, held) if t else 0.0 for t in texts]
    strengths = [0 if s and common_size(t) else s for s, t in zip(strengths, texts)]
    lists = [strengths, [statement(h) if n < depth else 0 for n, h in enumerate(hits)]] if statement else [strengths]
    named = [sorted((n for n, s in enumerate(given) if s), key=lambda n: (-given[n], n)) for given in lists]
    if not any(named):
        return list(hits)
    score = [1.0 / (RRF_K + n) for n in range(len(hits))]
    for ranked in named:
        for rank, n in enumerate(ranked):
            score[n] += 1.0 / (RRF_K + rank)
    return [hits[n] for n in sorted(range(len(hits)), key=lambda n: (-score[n], n))]
