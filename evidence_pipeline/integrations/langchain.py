"""A LangChain retriever over the index: one ``Document`` per parent (table or section chunk).

    from evidence_pipeline.integrations.langchain import EvidenceRetriever
    docs = EvidenceRetriever(k=3).invoke("What is the maximum flow rate of Aqueous Phase 1?")

``page_content`` is the parent's whole text (a table as HTML with its caption, header map,
footnotes and context), ``metadata`` holds ``METADATA_KEYS``. Needs the ``langchain`` extra.
"""

from __future__ import annotations

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from evidence_pipeline.integrations.options import SearchOptions, hit_metadata
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings


class EvidenceRetriever(BaseRetriever):
    """Hybrid search (dense + BM25, RRF) over the evidence index, one document per parent."""

    k: int | None = Field(None, ge=1, description="at most k parents (default 5; with token_budget, as many as fit)")
    token_budget: int | None = Field(None, ge=1, description="keep the parents that fit this many word pieces")
    doc_ids: list[str] | None = Field(None, description="search only these documents")
    store_settings: StoreSettings | None = Field(None, description="default: the environment (EVIDENCE_STORE_PATH, QDRANT_URL)")
    embedding_settings: EmbeddingSettings | None = None

    @property
    def options(self) -> SearchOptions:
        return SearchOptions(
            k=self.k,
            token_budget=self.token_budget,
            doc_ids=self.doc_ids,
            store_settings=self.store_settings,
            embedding_settings=self.embedding_settings,
        )

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [Document(page_content=hit.context_text, metadata=hit_metadata(hit), id=hit.parent_id) for hit in self.options.search(query)]
