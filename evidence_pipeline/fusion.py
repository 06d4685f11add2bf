"""Reciprocal rank fusion (RRF): the one formula every fused ranking of the package uses.

A key's score is the sum, over the ranked lists that hold it, of ``weight / (k + rank)``.
The store fuses its dense and BM25 rankings with it, search fuses a candidate list with the
rows and statements a query names, and the routed list with the global one.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

RRF_K = 60
"""The fusion constant ``k``. 60 is the value of the RRF paper; a small ``k`` (Qdrant's plain
``FusionQuery(RRF)`` uses 2) lets the first ranks of one list dominate the fusion."""

SCORE_NOTE = f"score: reciprocal-rank fusion of dense and BM25 ranks, 1/({RRF_K}+rank) summed; compare within one query only"
"""What a search score is, in one line for people and agents reading results."""

K = TypeVar("K", bound=Hashable)


def rrf(rankings: Iterable[tuple[Iterable[K], float]], k: int = RRF_K, first_rank: int = 0) -> dict[K, float]:
    """The fused score of every key of ``rankings`` (``(keys in rank order, weight)`` pairs):
    the sum of ``weight / (k + rank)`` over the lists, ranks counted from ``first_rank``.

    Keys come in first-seen order (the first list's first, ...); scores are summed list by list
    in the order given, so the same rankings always give the same floating-point scores."""
    scores: dict[K, float] = {}
    for ranking, weight in rankings:
        for rank, key in enumerate(ranking, first_rank):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return scores
