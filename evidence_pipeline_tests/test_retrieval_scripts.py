"""Queries the dense model cannot read (Korean for the packaged English MiniLM) rest on BM25."""

from __future__ import annotations

import pytest

from evidence_pipeline.sparse import SparseEncoder
from evidence_pipeline_tests.test_store import backend, make_points  # noqa: F401  (fixture)

KOREAN_QUESTION = "LNP 혼합 시 수상 1의 최대 유량은 몇 mL/min인가?"


def test_the_english_model_reads_english_and_only_spells_korean():
    from evidence_pipeline.embedding import token_counter

    counter = token_counter(None)
    assert not counter.reads(KOREAN_QUESTION)
    assert not counter.reads("다공성 부하 사이클의 멸균 온도는?")
    for question in ("What is the maximum flow rate of Aqueous Phase 1 in mL/min?", "SOP-8812", "USP <85> limit", "pH"):
        assert counter.reads(question), question


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant")
def test_sparse_search_ranks_by_bm25_alone_grouped_by_parent(backend):  # noqa: F811
    texts = {"d/flow": ["수상 1 유량 최대 1.8", "수상 2 유량 최대 2.25"], "d/pressure": ["수상 1 압력 최대 2.4"]}
    store = backend()
    store.ensure_collection(8)
    store.replace_document("d", make_points("d", texts))
    store.replace_document("e", make_points("e", {"e/flow": ["유량 최대"]}))
    sparse = SparseEncoder().encode_query("수상 1의 최대 유량은")
    hits = store.sparse_search(sparse, 5)
    assert [h.payload["parent_id"] for h in hits][:2] == ["d/flow", "d/pressure"]
    assert len({h.payload["parent_id"] for h in hits}) == len(hits)
    assert [h.payload["parent_id"] for h in store.sparse_search(sparse, 5, doc_ids=["e"])] == ["e/flow"]
    assert store.sparse_search(SparseEncoder().encode_query("the of"), 5) == []


def test_a_korean_question_finds_its_table_with_the_governing_warning(tmp_path, parse_cached):
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.pipeline import ingest_parsed
    from evidence_pipeline.retrieval import search
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store
    from evidence_pipeline.tools.samples.docs_korean import korean_lnp_doc
    from evidence_pipeline.tools.samples.render import render

    pdf, _ = render(korean_lnp_doc())
    path = tmp_path / "SOP-KR-101.pdf"
    path.write_bytes(pdf)
    settings = StoreSettings(path=str(tmp_path / "store"))
    with open_store(settings) as store:
        ingest_parsed(parse_cached(path), store, Embedder(), token_counter(None))
    top = search(KOREAN_QUESTION, 1, store_settings=settings)[0]
    assert top.caption == "표 1: 펌프 유량 한계"
    assert "냉각 재킷이 작동 중인지 확인한다" in top.parent_text and "1.8" in top.parent_text
