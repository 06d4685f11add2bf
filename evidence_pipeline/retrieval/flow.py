"""Search, stage by stage: read the query, route, candidates, fuse, expand, focus, Markdown, pack.

``search_store`` runs the stages on an open store; ``search`` opens the configured store,
embeds the query first (so the store is held only for the query itself) and packs the hits
into a token budget when one is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from evidence_pipeline.embedding import Embedder, token_counter
from evidence_pipeline.records import SearchHit
from evidence_pipeline.retrieval.budget import pack
from evidence_pipeline.retrieval.candidates import candidates
from evidence_pipeline.retrieval.expand import WHOLE_TABLE_TOKENS, expand, to_hit
from evidence_pipeline.retrieval.focus import focus
from evidence_pipeline.retrieval.fuse import fuse, fuse_scopes
from evidence_pipeline.retrieval.named_statements import NamedStatements
from evidence_pipeline.retrieval.query import read_query
from evidence_pipeline.retrieval.route import DEFAULT_ROUTING, OFF, Route, Routing, Scope, route
from evidence_pipeline.retrieval.rules import ALL_RULES, Rules
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings
from evidence_pipeline.store import reading_store
from evidence_pipeline.store.base import Store, StoredHit
from evidence_pipeline.tables import markdown_tables

BUDGET_CANDIDATES = 50
"""With a token budget and no k, the parents considered for packing (a default k would stop the
budget early)."""
DEFAULT_K = 5


def search_store(
    store: Store,
    embedder: Embedder,
    query: str,
    k: int = 5,
    *,
    doc_ids: Sequence[str] | None = None,
    dense_only: bool = False,
    routing: Routing = DEFAULT_ROUTING,
    dense: Sequence[float] | None = None,
    whole_table_tokens: int = WHOLE_TABLE_TOKENS,
    rules: Rules = ALL_RULES,
) -> list[SearchHit]:
    """The k best distinct parents of ``store`` for ``query``, best first, within ``doc_ids`` when
    given. ``dense``: the query's embedding when the caller already has it. A query the embedder
    cannot read (``Embedder.reads``: it only spells it out) is ranked by BM25 alone and not
    embedded; ``dense_only`` ranks by the dense vector alone, one hit per parent, nothing more.
    ``rules``: the ranking rules that run (``rules.Rules``, all by default)."""
    hybrid = embedder.reads(query)
    if dense is None and (hybrid or dense_only):
        dense = embedder.embed_query(query).tolist()
    if dense_only:
        assert dense is not None
        return [to_hit(s) for s in store.dense_search(list(dense), k, doc_ids=doc_ids)]
    read = read_query(query)
    vector = dense if hybrid else None

    def ranked(scope: Scope) -> list[StoredHit]:  # candidates, fused within their scope
        return fuse(candidates(store, read, vector, scope, k, rules), read, scope, k, rules)

    routing = routing if rules.routing else OFF
    plan = route(store, read, routing, doc_ids)
    if not rules.named_statements:
        plan = _without_statements(plan)
    stored = fuse_scopes(plan, ranked, routing, k)
    hits = expand(store, stored, read, whole_table_tokens if rules.whole_table else 0)
    if rules.focused_tables:
        hits = [focus(h, read) for h in hits]
    return [as_markdown(h) for h in hits] if rules.markdown_tables else hits


def as_markdown(hit: SearchHit) -> SearchHit:
    """``hit`` with ``context`` set to its context text's tables in Markdown, when it has one."""
    text = hit.focus or hit.parent_text
    context = markdown_tables(text)
    return hit.model_copy(update={"context": context}) if context != text else hit


def _without_statements(plan: Route) -> Route:
    def bare(scope: Scope | None) -> Scope | None:
        return dataclasses.replace(scope, statements=NamedStatements("")) if scope is not None else None

    return Route(bare(plan.routed), bare(plan.scope))  # type: ignore[arg-type]


def check_query(query: str, k: int | None, token_budget: int | None) -> None:
    """ValueError with a one-line reason for input no search can answer."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError("the query is empty")
    if k is not None and k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if token_budget is not None and token_budget < 1:
        raise ValueError(f"the token budget must be at least 1, not {token_budget}")


def search(
    query: str,
    k: int | None = None,
    *,
    token_budget: int | None = None,
    store_settings: StoreSettings | None = None,
    embedding_settings: EmbeddingSettings | None = None,
    doc_ids: Sequence[str] | None = None,
) -> list[SearchHit]:
    """The k best distinct parents (tables or section chunks) for ``query`` (k defaults to 5).

    With ``token_budget``, the parents that fit it in rank order (counted in the embedding
    model's word pieces, shared headers once; see ``render_context``), the first always,
    even when it alone is larger (``budget_note`` says so). The budget is applied before
    k: without k, up to ``BUDGET_CANDIDATES`` parents are considered; with k, at most k.
    The embedded store stays open for the next search in this process and is handed over
    when another process queues for it (``store/reader.py``); the embedding model loads
    once per process. Raises ValueError for an empty query, k < 1 or a budget < 1.
    """
    check_query(query, k, token_budget)
    settings = embedding_settings or EmbeddingSettings.from_env()
    embedder = Embedder(settings)
    limit = k if k is not None else (BUDGET_CANDIDATES if token_budget is not None else DEFAULT_K)
    # Embed first: the embedded store admits one process at a time, so it is held only for the query.
    dense = embedder.embed_query(query).tolist() if embedder.reads(query) else None
    with reading_store(store_settings or StoreSettings.from_env()) as store:
        hits = search_store(store, embedder, query, limit, doc_ids=doc_ids, dense=dense)
    if token_budget is not None:
        hits = pack(hits, token_budget, token_counter(settings.model).count)
    return hits
