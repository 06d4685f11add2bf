"""Query the index: dense + BM25 fused by RRF in Qdrant, one hit per parent."""

from __future__ import annotations

from typing import Sequence

from evidence_pipeline.embedding import Embedder
from evidence_pipeline.records import SearchHit
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings
from evidence_pipeline.sparse import SparseEncoder
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import Store, StoredHit


def to_hit(stored: StoredHit) -> SearchHit:
    p = stored.payload
    return SearchHit(
        parent_id=p["parent_id"],
        unit_id=p["unit_id"],
        score=stored.score,
        doc_id=p["doc_id"],
        doc_title=p.get("doc_title", ""),
        pages=p.get("pages") or [],
        section_path=p.get("section_path") or [],
        caption=p.get("caption"),
        unit_kind=p["unit_kind"],
        matched_text=p["text"],
        parent_text=p["parent_text"],
    )


def search_store(
    store: Store,
    embedder: Embedder,
    query: str,
    k: int = 5,
    *,
    doc_ids: Sequence[str] | None = None,
    dense_only: bool = False,
) -> list[SearchHit]:
    dense = embedder.embed_query(query).tolist()
    if dense_only:
        stored = store.dense_search(dense, k, doc_ids=doc_ids)
    else:
        stored = store.hybrid_search(dense, SparseEncoder().encode_query(query), k, doc_ids=doc_ids)
    return [to_hit(s) for s in stored]


def search(
    query: str,
    k: int = 5,
    *,
    store_settings: StoreSettings | None = None,
    embedding_settings: EmbeddingSettings | None = None,
    doc_ids: Sequence[str] | None = None,
) -> list[SearchHit]:
    """The k best distinct parents (tables or section chunks) for ``query``.

    Opens the store only for the query, so an ingest in another process can follow.
    """
    embedder = Embedder(embedding_settings or EmbeddingSettings.from_env())
    with open_store(store_settings or StoreSettings.from_env()) as store:
        return search_store(store, embedder, query, k, doc_ids=doc_ids)
