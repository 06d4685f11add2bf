"""Parent coverage: the parents that hold most of a query's distinctive words, as a whole.

The store ranks a parent by its best child (a row, a sentence): one sentence that shares a few
words with the query can lift a long synopsis or another section above the paragraph that
holds every word asked. Coverage scores each candidate parent by the query's words its whole
text holds, each weighted by how few of the candidates hold it (``log(1 + n / df)``, the
candidates standing in for the corpus), and the candidates are fused by RRF with themselves
in coverage order (weight ``COVERAGE_WEIGHT``).
"""

from __future__ import annotations

import bisect
import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

from evidence_pipeline.bm25_query import STOPWORDS, tokenize
from evidence_pipeline.fusion import RRF_K, rrf

COVERAGE_WEIGHT = 1.0
"""Weight of the coverage-ordered list against the candidates' own order (weight 1)."""

K1, B = 1.2, 0.75
"""BM25's term-frequency saturation and length normalisation, over the candidates' lengths."""
CHARS_PER_TOKEN = 6.0
"""A text's length in tokens, estimated from its characters (the normalisation needs no more)."""

T = TypeVar("T")


def query_words(query: str) -> frozenset[str]:
    """The BM25 tokens of ``query`` that carry content (no stopwords, no single characters)."""
    return frozenset(t for t in tokenize(query) if t not in STOPWORDS and len(t) > 1)


def coverage_scores(texts: Sequence[str], words: frozenset[str]) -> list[float]:
    """For each text, BM25 of the query ``words`` with the texts themselves as the corpus: a word
    weighs ``log(1 + n / df)`` (df: the texts that hold it), saturated by its count and
    normalised by the text's length against the texts' mean. A word counts where a word of the
    text opens with it (its plural, its other endings), found in one scan of the folded text."""
    stems = _stems(words)
    single = tuple(stem for stem in stems if _WORD.fullmatch(stem))
    spanning = [stem for stem in stems if stem not in single]  # "sop-qa-070", "3.5"
    counts = [
        # a text that holds a stem spanning words anywhere is scanned as a whole
        Counter(m.group(1) for m in _words_pattern(stems).finditer(_folded(text)))
        if any(stem in _folded(text) for stem in spanning)
        else _stem_counts(text, single)
        for text in texts
    ]
    lengths = [max(len(text) / CHARS_PER_TOKEN, 1.0) for text in texts]
    n = len(texts)
    df = Counter(w for c in counts for w in c)
    weight = {w: math.log(1.0 + n / d) for w, d in df.items()}
    mean = sum(lengths) / n
    scores = []
    for length, c in zip(lengths, counts):
        norm = K1 * (1.0 - B + B * length / mean)
        scores.append(sum(weight[w] * f * (K1 + 1.0) / (f + norm) for w, f in c.items()))
    return scores


_WORD = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=256)
def _stems(words: frozenset[str]) -> tuple[str, ...]:
    """The prefixes a text's words are matched by, the longest first: a word matches the
    longest stem it opens with ("study" -> "stud", so "studies" counts too)."""
    return tuple(sorted({w[:-1] if w.endswith("y") and len(w) > 4 else w for w in words}, key=lambda w: (-len(w), w)))


@functools.lru_cache(maxsize=256)
def _words_pattern(stems: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![^\W_])(" + "|".join(re.escape(w) for w in stems) + r")[^\W_]*")


@functools.lru_cache(maxsize=1024)
def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


@functools.lru_cache(maxsize=1024)
def _word_counts(text: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The distinct words of the folded ``text`` in sorted order, and how often each occurs.
    Read once per text (an LRU): every search scores its candidates' parents."""
    counted = sorted(Counter(_WORD.findall(_folded(text))).items())
    return tuple(w for w, _ in counted), tuple(n for _, n in counted)


def _stem_counts(text: str, stems: tuple[str, ...]) -> Counter[str]:
    """How many words of ``text`` each stem (one word each, the longest first) opens, a word
    counted for the longest stem it opens with: what ``_words_pattern`` finds, without a scan."""
    words, counts = _word_counts(text)
    found: Counter[str] = Counter()
    taken: set[int] = set()
    for stem in stems:
        n = bisect.bisect_left(words, stem)
        while n < len(words) and words[n].startswith(stem):
            if n not in taken:
                taken.add(n)
                found[stem] += counts[n]
            n += 1
    return found


def by_coverage(
    hits: Sequence[T], query: str, text: Callable[[T], str], weight: float = COVERAGE_WEIGHT, movable: Callable[[T], bool] | None = None
) -> list[T]:
    """``hits`` fused with themselves ordered by coverage (ties keep their order); with
    ``movable``, only those hits are reordered, among the places they hold."""
    words = query_words(query)
    if len(hits) < 2 or not words:
        return list(hits)
    if movable is not None:
        places = [n for n, h in enumerate(hits) if movable(h)]
        moved = by_coverage([hits[n] for n in places], query, text, weight)
        out = list(hits)
        for n, h in zip(places, moved):
            out[n] = h
        return out
    scores = coverage_scores([text(h) for h in hits], words)
    ordered = sorted(range(len(hits)), key=lambda n: (-scores[n], n))
    fused = rrf([(range(len(hits)), 1.0), (ordered, weight)], RRF_K)
    return [hits[n] for n in sorted(range(len(hits)), key=lambda n: (-fused[n], n))]
