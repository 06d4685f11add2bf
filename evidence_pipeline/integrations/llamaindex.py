"""A LlamaIndex retriever over the index: one ``NodeWithScore`` per parent (table or section chunk).

    from evidence_pipeline.integrations.llamaindex import EvidenceRetriever
    nodes = EvidenceRetriever(k=3).retrieve("What is the maximum flow rate of Aqueous Phase 1?")

A node's text is the parent's whole text, its id the parent id, its metadata
``METADATA_KEYS``. The metadata is kept out of what LlamaIndex shows a language model or
an embedding model (``excluded_*_metadata_keys``): the parent text already opens with its
document, section, pages and caption. Needs the ``llamaindex`` extra; ``llama-index-core``
reads NLTK data only from the copy inside its wheel, so nothing is downloaded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from evidence_pipeline.integrations.options import SearchOptions, hit_metadata
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings


class EvidenceRetriever(BaseRetriever):
    """Hybrid search (dense + BM25, RRF) over the evidence index, one node per parent."""

    def __init__(
        self,
        *,
        k: int | None = None,
        token_budget: int | None = None,
        doc_ids: Sequence[str] | None = None,
        store_settings: StoreSettings | None = None,
        embedding_settings: EmbeddingSettings | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self.options = SearchOptions(
            k=k,
            token_budget=token_budget,
            doc_ids=list(doc_ids) if doc_ids is not None else None,
            store_settings=store_settings,
            embedding_settings=embedding_settings,
        )
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = []
        for hit in self.options.search(query_bundle.query_str):
            metadata = hit_metadata(hit)
            node = TextNode(
                id_=hit.parent_id,
                text=hit.context_text,
                metadata=metadata,
                excluded_embed_metadata_keys=list(metadata),
                excluded_llm_metadata_keys=list(metadata),
            )
            nodes.append(NodeWithScore(node=node, score=hit.score))
        return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # Search embeds the query and reads the store: off the event loop.
        return await asyncio.to_thread(self._retrieve, query_bundle)
