"""Stage 2, candidates: the parents of one scope that the fusion may order.

The store ranks a scope's children by dense similarity and BM25, fuses the two rankings by
RRF and keeps the best child of each parent (``Store.hybrid_search``). To that list come the
tables BM25 alone ranks first (``with_lexical``) and the tables of the statements the query
names (``with_statements``): they follow every fused parent, so none of them moves up unless
the query names one of its rows or its statement (``fuse``). A query the embedding model
cannot read (``dense`` None) is ranked by BM25 alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evidence_pipeline.retrieval.named_rows import NAMED_ROW_DEPTH
from evidence_pipeline.retrieval.named_statements import NamedStatements
from evidence_pipeline.retrieval.query import Query
from evidence_pipeline.retrieval.route import Scope
from evidence_pipeline.retrieval.rules import ALL_RULES, Rules
from evidence_pipeline.sparse import SparseVector
from evidence_pipeline.store.base import Store, StoredHit

LEXICAL_TABLES = 10
"""Tables of BM25's own ranking added to the candidates (``with_lexical``): a table whose row
the query names can rank low in the fused list, below prose that shares the query's other
words, while BM25 alone ranks it high (the label's words are rare in the prose around it)."""

STATEMENT_TABLES = 5
"""Parents of each statement the query names that may join the candidates (``with_statements``):
a statement split in pieces is one parent."""


@dataclass(frozen=True)
class Candidates:
    """One scope's candidate parents (one stored hit each) in rank order, and how many of the
    first of them the fusion may move up (``named_rows.promote_named_rows``' ``depth``)."""

    hits: list[StoredHit]
    depth: int


def with_lexical(fused: Sequence[StoredHit], lexical: Sequence[StoredHit]) -> list[StoredHit]:
    """The fused list, then the parents of ``lexical`` that it does not hold, in that order."""
    seen = {h.payload["parent_id"] for h in fused}
    return [*fused, *(h for h in lexical if h.payload["parent_id"] not in seen)]


def with_statements(
    found: Sequence[StoredHit], store: Store, sparse: SparseVector, statements: NamedStatements, doc_ids: Sequence[str] | None
) -> list[StoredHit]:
    """``found``, then BM25's ranking of the tables that are a statement the query names (payload
    ``statement``) that it does not hold: a statement whose rows the question does not name can be
    in neither the fused list nor BM25's first tables."""
    if not statements.kinds:
        return list(found)
    ranked = store.sparse_search(sparse, STATEMENT_TABLES, doc_ids=doc_ids, unit_kind="table", statements=statements.kinds)
    return with_lexical(found, ranked)


def candidates(store: Store, query: Query, dense: Sequence[float] | None, scope: Scope, k: int, rules: Rules = ALL_RULES) -> Candidates:
    """The ``Candidates`` of ``scope`` for ``query``: at least ``NAMED_ROW_DEPTH`` parents of the
    store's hybrid ranking (k when more), BM25's first ``LEXICAL_TABLES`` tables (``rules.lexical_tables``)
    and the statements' tables; with ``dense`` None, BM25's ranking alone."""
    depth = max(k, NAMED_ROW_DEPTH)
    if dense is None:
        return Candidates(store.sparse_search(query.sparse, depth, doc_ids=scope.doc_ids), NAMED_ROW_DEPTH)
    fused = store.hybrid_search(list(dense), query.sparse, depth, doc_ids=scope.doc_ids)
    found = fused
    if rules.lexical_tables:
        found = with_lexical(fused, store.sparse_search(query.sparse, LEXICAL_TABLES, doc_ids=scope.doc_ids, unit_kind="table"))
    found = with_statements(found, store, query.sparse, scope.statements, scope.doc_ids)
    return Candidates(found, len(found))
