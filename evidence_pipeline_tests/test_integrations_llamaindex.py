"""The LlamaIndex retriever on two indexed sample documents: parents as nodes, same ranking as search."""

import asyncio

import pytest

pytest.importorskip("llama_index.core", reason="the llamaindex extra is not installed")

from llama_index.core.schema import MetadataMode  # noqa: E402

from evidence_pipeline import search  # noqa: E402
from evidence_pipeline.integrations.llamaindex import EvidenceRetriever  # noqa: E402
from evidence_pipeline.integrations.options import METADATA_KEYS  # noqa: E402
from evidence_pipeline_tests.sample_store import DOCS  # noqa: E402


def test_nodes_are_the_parents_search_returns_with_scores_and_metadata(sample_store):
    question, caption = sample_store.table_questions(DOCS[1])[0]
    nodes = EvidenceRetriever(k=3, store_settings=sample_store.settings).retrieve(question)
    hits = search(question, 3, store_settings=sample_store.settings)
    assert len(nodes) == 3
    assert nodes[0].node.metadata["caption"] == caption  # the table that answers it, first
    assert [(n.node.node_id, n.score) for n in nodes] == [(h.parent_id, h.score) for h in hits]
    for node, hit in zip(nodes, hits):
        assert node.node.metadata == {key: hit.model_dump()[key] for key in METADATA_KEYS}
        # What a language model or an embedding model is shown: the parent text alone.
        assert node.node.get_content(metadata_mode=MetadataMode.LLM) == hit.context_text
        assert node.node.get_content(metadata_mode=MetadataMode.EMBED) == hit.context_text
    where = nodes[0].node.metadata
    assert where["boxes"] and all(isinstance(b, dict) for b in where["boxes"])  # plain JSON, for any vector store


def test_options_filter_documents_and_budget(sample_store):
    question, _ = sample_store.table_questions(DOCS[1])[0]
    nodes = EvidenceRetriever(k=2, doc_ids=[DOCS[0]], store_settings=sample_store.settings).retrieve(question)
    assert len(nodes) == 2 and {n.node.metadata["doc_id"] for n in nodes} == {DOCS[0]}  # not the one asked about
    assert len(EvidenceRetriever(token_budget=1, store_settings=sample_store.settings).retrieve(question)) == 1


def test_async_retrieve_gives_the_same_nodes(sample_store):
    question, _ = sample_store.table_questions(DOCS[1])[0]
    retriever = EvidenceRetriever(k=2, store_settings=sample_store.settings)
    assert [n.node.node_id for n in asyncio.run(retriever.aretrieve(question))] == [n.node.node_id for n in retriever.retrieve(question)]
