"""Hybrid search over the store: dense + BM25 fused by RRF, one hit per parent.

``search`` (and ``search_store`` on an open store, both in ``flow``) reads the query once
(``query.read_query``) and runs the stages in order, each a function of its own module:
``route.route`` (the documents the query names, the scopes to search), ``candidates.candidates``
(each scope's parents), ``fuse.fuse`` and ``fuse.fuse_scopes`` (the rows and statements the
query names move their tables up; the routed scope ranks first), ``expand.expand`` (group and
expand: one hit per parent, split tables joined) and ``budget.pack`` (a token budget). The
rules the stages apply live beside them: ``named_documents`` (by the documents' cards),
``named_rows`` and ``named_statements``; every fusion is ``fusion.rrf``.
"""

from __future__ import annotations

from evidence_pipeline.context import context_texts, render_context
from evidence_pipeline.records import SearchHit
from evidence_pipeline.retrieval.budget import budget_note, pack
from evidence_pipeline.retrieval.candidates import LEXICAL_TABLES, STATEMENT_TABLES, with_lexical, with_statements
from evidence_pipeline.retrieval.expand import WHOLE_TABLE_TOKENS, to_hit, whole_table
from evidence_pipeline.retrieval.flow import BUDGET_CANDIDATES, DEFAULT_K, check_query, search, search_store
from evidence_pipeline.retrieval.fuse import routed_first, weighted_rrf
from evidence_pipeline.retrieval.query import Query, read_query
from evidence_pipeline.retrieval.route import CARD_FIELDS, DEFAULT_ROUTING, Routing, routed_documents, routing_index, stored_cards

__all__ = [
    "BUDGET_CANDIDATES", "CARD_FIELDS", "DEFAULT_K", "DEFAULT_ROUTING", "LEXICAL_TABLES", "Query", "Routing",
    "STATEMENT_TABLES", "SearchHit", "WHOLE_TABLE_TOKENS", "budget_note", "check_query", "context_texts", "pack",
    "read_query", "render_context", "routed_documents", "routed_first", "routing_index", "search", "search_store",
    "stored_cards", "to_hit", "weighted_rrf", "whole_table", "with_lexical", "with_statements",
]  # fmt: skip
