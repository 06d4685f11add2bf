"""Query the index: dense + BM25 fused by RRF in Qdrant, one hit per parent."""

from __future__ import annotations

from typing import Callable, Sequence

from evidence_pipeline.embedding import Embedder, token_counter
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


def _shared_head(hit: SearchHit) -> str:
    """The lines a parent's text opens with that name its document and section (see EvidenceUnit)."""
    head = f"Document: {hit.doc_id} - {hit.doc_title}\n"
    if hit.section_path:
        head += "Section: " + " > ".join(hit.section_path) + "\n"
    return head


def context_texts(hits: Sequence[SearchHit]) -> list[str]:
    """Document-aware aggregation: when several parents share a document and section, the
    shared header is rendered once (with the first of them) and left out of the others."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    texts = []
    for hit in hits:
        key = (hit.doc_id, tuple(hit.section_path))
        head = _shared_head(hit)
        if key in seen and hit.parent_text.startswith(head):
            texts.append(hit.parent_text[len(head) :])
        else:
            texts.append(hit.parent_text)
        seen.add(key)
    return texts


def render_context(hits: Sequence[SearchHit]) -> str:
    return "\n\n".join(context_texts(hits))


def pack(hits: Sequence[SearchHit], token_budget: int, count_tokens: Callable[[str], int]) -> list[SearchHit]:
    """Parents in rank order while their aggregated text fits ``token_budget`` (the first always)."""
    packed: list[SearchHit] = []
    used = 0
    for hit, text in zip(hits, context_texts(hits)):
        n = count_tokens(text)
        if packed and used + n > token_budget:
            break
        packed.append(hit)
        used += n
    return packed


def search(
    query: str,
    k: int = 5,
    *,
    token_budget: int | None = None,
    store_settings: StoreSettings | None = None,
    embedding_settings: EmbeddingSettings | None = None,
    doc_ids: Sequence[str] | None = None,
) -> list[SearchHit]:
    """The k best distinct parents (tables or section chunks) for ``query``.

    With ``token_budget``, only the parents that fit it in rank order (counted in the
    embedding model's word pieces, shared headers once; see ``render_context``).
    Opens the store only for the query, so an ingest in another process can follow.
    """
    settings = embedding_settings or EmbeddingSettings.from_env()
    embedder = Embedder(settings)
    with open_store(store_settings or StoreSettings.from_env()) as store:
        hits = search_store(store, embedder, query, k, doc_ids=doc_ids)
    if token_budget is not None:
        hits = pack(hits, token_budget, token_counter(settings.model).count)
    return hits
