"""What every adapter asks of search, and the metadata every adapter returns with a parent."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evidence_pipeline.records import SearchHit
from evidence_pipeline.retrieval import search
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings
from evidence_pipeline.store.base import SCORE_NOTE

__all__ = ["METADATA_KEYS", "SCORE_NOTE", "SearchOptions", "hit_metadata"]

# The SearchHit fields an adapter puts in a document's metadata; the parent's text is the
# document itself. ``matched_text`` is the child that ranked the parent (a row sentence,
# a sentence of a section); ``score`` is the reciprocal-rank-fusion score (SCORE_NOTE);
# ``boxes`` and ``row_box`` say where the parent and the matched row are printed (``records.PageBox``
# as plain dicts; [] and None for formats without pages).
METADATA_KEYS = (
    "doc_id", "doc_title", "pages", "caption", "statement", "section_path", "unit_kind", "parent_id", "matched_text", "score",
    "boxes", "row_box",
)  # fmt: skip


def hit_metadata(hit: SearchHit) -> dict[str, Any]:
    """The hit's ``METADATA_KEYS`` as plain JSON values (boxes as dicts)."""
    dumped = hit.model_dump(include=set(METADATA_KEYS))
    return {key: dumped[key] for key in METADATA_KEYS}


class SearchOptions(BaseModel):
    """Arguments of ``retrieval.search`` that a retriever holds between queries.

    Store and embedding settings default to the environment (``StoreSettings.from_env``),
    read at each query. The embedding model loads once per process, at the first query.
    """

    model_config = ConfigDict(frozen=True)

    k: int | None = Field(None, ge=1, description="at most k parents (default 5; with token_budget, as many as fit)")
    token_budget: int | None = Field(None, ge=1, description="keep the parents that fit this many word pieces")
    doc_ids: list[str] | None = Field(None, description="search only these documents")
    store_settings: StoreSettings | None = None
    embedding_settings: EmbeddingSettings | None = None

    def search(self, query: str) -> list[SearchHit]:
        return search(
            query,
            self.k,
            token_budget=self.token_budget,
            store_settings=self.store_settings or StoreSettings.from_env(),
            embedding_settings=self.embedding_settings or EmbeddingSettings.from_env(),
            doc_ids=self.doc_ids,
        )
