"""The LangChain retriever on two indexed sample documents: parents as documents, same ranking as search."""

import asyncio

import pytest

pytest.importorskip("langchain_core", reason="the langchain extra is not installed")

from pydantic import ValidationError  # noqa: E402

from evidence_pipeline import search  # noqa: E402
from evidence_pipeline.integrations.langchain import EvidenceRetriever  # noqa: E402
from evidence_pipeline.integrations.options import METADATA_KEYS  # noqa: E402
from evidence_pipeline_tests.sample_store import DOCS  # noqa: E402


def test_documents_are_the_parents_search_returns_with_their_metadata(sample_store):
    question, caption = sample_store.table_questions()[0]
    docs = EvidenceRetriever(k=3, store_settings=sample_store.settings).invoke(question)
    hits = search(question, 3, store_settings=sample_store.settings)
    assert len(docs) == 3
    assert docs[0].metadata["caption"] == caption  # the table that answers it, first
    assert [d.page_content for d in docs] == [h.context_text for h in hits]  # a large table focused on the rows asked
    assert [d.id for d in docs] == [h.parent_id for h in hits]
    for doc, hit in zip(docs, hits):
        assert doc.metadata == {key: hit.model_dump()[key] for key in METADATA_KEYS}
    where = docs[0].metadata
    assert where["boxes"] and all(isinstance(b, dict) for b in where["boxes"])  # plain JSON, for any vector store
    assert caption in docs[0].page_content and "|---|" in docs[0].page_content  # the table, in Markdown


def test_options_filter_documents_and_budget(sample_store):
    question, _ = sample_store.table_questions()[0]
    docs = EvidenceRetriever(k=4, doc_ids=[DOCS[1]], store_settings=sample_store.settings).invoke(question)
    assert len(docs) == 4 and {d.metadata["doc_id"] for d in docs} == {DOCS[1]}  # not the one asked about
    assert len(EvidenceRetriever(token_budget=1, store_settings=sample_store.settings).invoke(question)) == 1


def test_async_invoke_gives_the_same_documents(sample_store):
    question, _ = sample_store.table_questions()[0]
    retriever = EvidenceRetriever(k=2, store_settings=sample_store.settings)
    assert asyncio.run(retriever.ainvoke(question)) == retriever.invoke(question)


def test_bad_options_and_queries_are_refused(sample_store):
    with pytest.raises(ValidationError, match="k"):
        EvidenceRetriever(k=0)
    with pytest.raises(ValueError, match="the query is empty"):
        EvidenceRetriever(store_settings=sample_store.settings).invoke("  ")
