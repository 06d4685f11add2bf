"""Stage 3, fuse: one ranked list of parents from the candidates of each scope.

Within a scope, the section chunks among the candidates are reordered by how much of the
query their whole text holds (``coverage``), the candidates are fused by reciprocal rank
(``fusion.rrf``) with the tables whose rows the query names and the tables of the statements it
names (``named_rows.promote_named_rows``), reference material moves below the rest
(``reference``), and the list is cut to k. Each step is a rule of ``rules.Rules``. Across scopes (``fuse_scopes``), the routed
documents' list ranks first and the caller's scope fills the rest (``Routing.mode`` "first"),
or the two lists are fused by weighted RRF ("fusion"). Every parent comes once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from evidence_pipeline.fusion import RRF_K, rrf
from evidence_pipeline.retrieval.candidates import Candidates
from evidence_pipeline.retrieval.coverage import by_coverage
from evidence_pipeline.retrieval.named_rows import promote_named_rows
from evidence_pipeline.retrieval.query import Query
from evidence_pipeline.retrieval.reference import reference_last
from evidence_pipeline.retrieval.route import Route, Routing, Scope
from evidence_pipeline.retrieval.rules import ALL_RULES, Rules
from evidence_pipeline.store.base import StoredHit


def _prose(hit: StoredHit) -> bool:
    return hit.payload.get("unit_kind") != "table"


def _parent_text(hit: StoredHit) -> str:
    return hit.payload.get("parent_text", "")


def fuse(candidates: Candidates, query: Query, scope: Scope, k: int, rules: Rules = ALL_RULES) -> list[StoredHit]:
    """The first ``k`` candidates once the prose that covers the query's words has moved up
    (``rules.parent_coverage``), the rows and statements ``query`` names in ``scope`` have moved
    their tables up (``rules.named_rows``) and reference material has moved below the rest
    (``rules.reference_last``)."""
    statements = scope.statements
    hits = candidates.hits
    if rules.parent_coverage:
        hits = by_coverage(hits, query.text, _parent_text, movable=_prose)
    if rules.named_rows:
        hits = promote_named_rows(hits, query, _parent_text, depth=candidates.depth, statement=lambda hit: statements.strength(hit.payload))
    elif statements.kinds:
        hits = promote_named_rows(hits, "", _parent_text, depth=candidates.depth, statement=lambda hit: statements.strength(hit.payload))
    if rules.reference_last:
        hits = reference_last(hits, lambda hit: hit.payload, query.text)
    return hits[:k]


def weighted_rrf(rankings: Sequence[tuple[Sequence[StoredHit], float]], k: int, rrf_k: int = RRF_K) -> list[StoredHit]:
    """Reciprocal rank fusion of ``(hits, weight)`` lists by parent, ranks counted from 1, k
    parents; a parent keeps its first-seen hit with the fused score. Equal scores are ordered as
    the earliest list that holds them ranks them, then by parent id (one order on every run)."""
    first: dict[str, tuple[int, int, StoredHit]] = {}
    for n, (ranking, _) in enumerate(rankings):
        for rank, hit in enumerate(ranking):
            first.setdefault(hit.payload["parent_id"], (n, rank, hit))
    scores = rrf((((h.payload["parent_id"] for h in ranking), weight) for ranking, weight in rankings), rrf_k, first_rank=1)
    order = sorted(scores, key=lambda p: (-scores[p], first[p][0], first[p][1], p))[:k]
    return [first[p][2].model_copy(update={"score": scores[p]}) for p in order]


def routed_first(routed: Sequence[StoredHit], stored: Sequence[StoredHit], k: int) -> list[StoredHit]:
    """The routed list's parents, then the other list's other parents, k in all."""
    seen = {h.payload["parent_id"] for h in routed}
    return [*routed, *(h for h in stored if h.payload["parent_id"] not in seen)][:k]


def fuse_scopes(plan: Route, ranked: Callable[[Scope], list[StoredHit]], routing: Routing, k: int) -> list[StoredHit]:
    """The k parents of ``plan``'s scopes, each scope ranked by ``ranked``: the caller's scope
    alone when nothing is routed; else the routed list first (the caller's scope is ranked only
    when the routed one holds fewer than k), or both fused by ``weighted_rrf``."""
    if plan.routed is None:
        return ranked(plan.scope)
    routed = ranked(plan.routed)
    if routing.mode == "first":
        return routed[:k] if len(routed) >= k else routed_first(routed, ranked(plan.scope), k)
    return weighted_rrf([(routed, routing.weight), (ranked(plan.scope), 1.0)], k)
