"""The one way from a document to points, and the one answer to "is this document stale?"."""

from datetime import UTC, datetime

import numpy as np
import pytest

from evidence_pipeline import pipeline
from evidence_pipeline.embedding import token_counter
from evidence_pipeline.payload import PointPayload
from evidence_pipeline.records import sha256_file
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.staleness import DocumentState, document_state, stored_state
from evidence_pipeline.store.base import DocumentVersion, point_id
from evidence_pipeline.store.edge import EdgeStore

MD = """# Mixing procedure

## 4 Flow rates

Set the pumps before the run.

Table 1: Pump flow rates

| Phase | Flow (mL/min) |
|---|---|
| Aqueous phase | 36 |
| Ethanol phase | 12 |

The limits apply during LNP mixing.
"""


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    from evidence_pipeline.parser import DoclingParser

    path = tmp_path_factory.mktemp("pipeline") / "mixing.md"
    path.write_text(MD)
    return DoclingParser().parse(path)


def _vectors(n: int, dim: int = 4) -> np.ndarray:
    return np.eye(n, dim, dtype=np.float32) + 0.1


def test_document_points_one_per_child_in_order(doc):
    units, children = pipeline.prepare(doc, token_counter(None), pipeline.PipelineOptions())
    dense = _vectors(len(children))
    sparse = pipeline.sparse_vectors(children)
    points = pipeline.document_points(doc, units, children, dense, sparse, "v7")

    assert [p.id for p in points] == [point_id("mixing", c.child_id, c.parent_id) for c in children]
    assert [p.dense for p in points] == dense.tolist()
    assert [p.sparse for p in points] == sparse
    by_unit = {u.unit_id: u for u in units}
    for point, child in zip(points, children):
        payload = PointPayload.model_validate(point.payload)
        assert (payload.child_id, payload.text, payload.child_kind) == (child.child_id, child.text, child.kind)
        assert payload.parent_text == by_unit[child.unit_id].text
        assert (payload.doc_id, payload.content_hash, payload.pipeline_version) == ("mixing", doc.content_hash, "v7")
    table_rows = [PointPayload.model_validate(p.payload) for p in points if p.payload["child_kind"] == "row"]
    assert {r.caption for r in table_rows} == {"Table 1: Pump flow rates"}
    assert any("Aqueous phase" in r.text and "36" in r.text for r in table_rows)


def test_document_points_refuses_vectors_that_do_not_match_the_children(doc):
    units, children = pipeline.prepare(doc, token_counter(None), pipeline.PipelineOptions())
    with pytest.raises(ValueError, match=f"{len(children)} children"):
        pipeline.document_points(doc, units, children, _vectors(len(children) - 1), pipeline.sparse_vectors(children), "v")


def test_write_points_replaces_the_document(doc, tmp_path):
    units, children = pipeline.prepare(doc, token_counter(None), pipeline.PipelineOptions())
    points = pipeline.document_points(doc, units, children, _vectors(len(children)), pipeline.sparse_vectors(children), "v1")
    with EdgeStore(StoreSettings(path=str(tmp_path / "store"))) as store:
        assert pipeline.write_points(store, "mixing", points).upserted == len(points)
        assert store.document_version("mixing") == (doc.content_hash, "v1")
        fewer = pipeline.write_points(store, "mixing", points[:2])
        assert (fewer.upserted, fewer.deleted, store.count("mixing")) == (2, len(points) - 2, 2)


@pytest.mark.parametrize(
    "indexed, version, store_holds, expected",
    [
        (None, "v1", None, DocumentState.NEVER_INDEXED),
        (("h0", "v1"), "v1", None, DocumentState.CONTENT_CHANGED),
        (("h1", "v0"), "v1", None, DocumentState.VERSION_CHANGED),
        (("h1", "v0"), None, None, DocumentState.FRESH),  # content-only callers (the sensor)
        (("h1", "v1"), "v1", False, DocumentState.MISSING_FROM_STORE),
        (("h1", "v1"), "v1", True, DocumentState.FRESH),
        (("", ""), "v1", None, DocumentState.CONTENT_CHANGED),  # points that disagree (interrupted replace)
    ],
)
def test_document_state(indexed, version, store_holds, expected):
    indexed = DocumentVersion(*indexed) if indexed else None
    state = document_state("h1", indexed, version, store_holds=store_holds)
    assert state is expected and state.stale == (expected is not DocumentState.FRESH)


def test_stored_state_reads_the_store_and_hashes_the_file(doc, tmp_path):
    units, children = pipeline.prepare(doc, token_counter(None), pipeline.PipelineOptions())
    points = pipeline.document_points(doc, units, children, _vectors(len(children)), pipeline.sparse_vectors(children), "v1")
    source = tmp_path / "mixing.md"
    source.write_text(MD)
    assert sha256_file(str(source)) == doc.content_hash
    with EdgeStore(StoreSettings(path=str(tmp_path / "store"))) as store:
        assert stored_state(store, "mixing", source, "v1") is DocumentState.NEVER_INDEXED
        pipeline.write_points(store, "mixing", points)
        assert stored_state(store, "mixing", source, "v1") is DocumentState.FRESH
        assert stored_state(store, "mixing", source, "v2") is DocumentState.VERSION_CHANGED
        source.write_text(MD.replace("36", "40"))
        assert stored_state(store, "mixing", source, "v1") is DocumentState.CONTENT_CHANGED


def test_ingest_records_the_time_a_skipped_reingest_keeps_it_and_a_changed_file_renews_it(tmp_path):
    from evidence_pipeline.benchmark.tiny_pdfs import rewrite, write_tiny_pdfs
    from evidence_pipeline.embedding import Embedder
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline_tests.test_store import now_ms, within

    [pdf] = write_tiny_pdfs(tmp_path / "docs", 1, start=7)
    parser, embedder, counter = DoclingParser(), Embedder(), token_counter(None)
    with EdgeStore(StoreSettings(path=str(tmp_path / "store"))) as store:
        start = now_ms()
        assert not pipeline.ingest_file(pdf, store, parser, embedder, counter).skipped
        [first] = store.documents()
        assert within(first.ingested_at, start, datetime.now(UTC))
        assert store.ingest_records()[first.doc_id].sha256 == sha256_file(str(pdf)) == first.content_hash

        assert pipeline.ingest_file(pdf, store, parser, embedder, counter).skipped  # unchanged: the old time
        assert store.documents()[0].ingested_at == first.ingested_at

        rewrite(pdf, 8)
        start = now_ms()
        assert not pipeline.ingest_file(pdf, store, parser, embedder, counter).skipped
        [changed] = store.documents()
        assert within(changed.ingested_at, start, datetime.now(UTC)) and changed.ingested_at > first.ingested_at
        assert changed.content_hash == sha256_file(str(pdf)) != first.content_hash
