"""The embedded store builds its dense search index (HNSW) once enough points lack one."""

from __future__ import annotations

import numpy as np

from evidence_pipeline.benchmark.synthetic import TextSampler, synthetic_documents
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import point_id
from evidence_pipeline.store.edge import EdgeStore

DIM = 384
N = 8_000  # Edge indexes a segment past ~10 MB of vectors: 8,000 of 384 floats is past it


def _fill(store: EdgeStore) -> list:
    store.ensure_collection(DIM)
    docs = list(synthetic_documents(N, TextSampler(["flow rate of the aqueous phase in mL/min"]), dim=DIM))
    for doc_id, points in docs:
        store.replace_document(doc_id, points)
    return [p for _, points in docs for p in points]


def test_index_is_built_past_the_threshold_and_search_still_finds_each_point(tmp_path):
    settings = StoreSettings(path=str(tmp_path / "s"), index_threshold=N // 2)
    with open_store(settings) as store:
        points = _fill(store)
        assert store.unindexed() == N
        probes = [points[i] for i in np.random.default_rng(0).choice(N, 25, replace=False)]
        exact = [store.dense_search(p.dense, 1)[0].payload["parent_id"] for p in probes]
        assert exact == [p.payload["parent_id"] for p in probes]  # a point is its own nearest

        assert store.index_if_due() is True
        assert store.unindexed() == 0
        assert store.index_if_due() is False  # nothing left to index
        indexed = [store.dense_search(p.dense, 1)[0].payload["parent_id"] for p in probes]
        assert indexed == exact
        # a document written after the build is searched too (its points are scanned exactly)
        late = {**points[0].payload, "doc_id": "late", "parent_id": "late-p", "child_id": "late-c"}
        extra = points[0].model_copy(update={"id": point_id("late", "late-c", "late-p"), "payload": late})
        store.replace_document("late", [extra])
        assert store.unindexed() == 1
        assert {h.payload["parent_id"] for h in store.dense_search(extra.dense, 2)} >= {"late-p"}


def test_below_the_threshold_or_with_it_off_nothing_is_built(tmp_path):
    path = str(tmp_path / "s")
    with open_store(StoreSettings(path=path, index_threshold=N + 1)) as store:
        _fill(store)
        assert store.index_if_due() is False
        assert store.unindexed() == N
    # the same points reopened with the build switched off
    with open_store(StoreSettings(path=path, index_threshold=0)) as store:
        assert store.index_if_due() is False
        assert store.unindexed() == N


def test_index_settings_from_the_environment(monkeypatch):
    monkeypatch.setenv("EVIDENCE_STORE_INDEX_THRESHOLD", "0")
    monkeypatch.setenv("EVIDENCE_STORE_HNSW_EF", "512")
    settings = StoreSettings.from_env()
    assert (settings.index_threshold, settings.hnsw_ef) == (0, 512)


def _legacy_store(path):
    """An Edge store made before point ids carried their parent: ids that say nothing of it."""
    import uuid

    from evidence_pipeline.store.edge import _PARENT_KEYED
    from evidence_pipeline_tests.test_store import make_points

    points = make_points("d", {"d/p0": ["flow rate 1.8 mL/min", "flow limits"], "d/p1": ["mixing speed"], "d/p2": ["flow check"]})
    legacy = [p.model_copy(update={"id": str(uuid.uuid5(uuid.NAMESPACE_URL, p.payload["child_id"]))}) for p in points]
    with EdgeStore(StoreSettings(path=str(path))) as store:
        store.ensure_collection(len(points[0].dense))
    (path / _PARENT_KEYED).unlink()
    with EdgeStore(StoreSettings(path=str(path))) as store:
        store.replace_document("d", legacy)
    return points


def test_a_store_made_before_parent_keyed_ids_groups_by_payload_and_copies_into_keyed_ids(tmp_path):
    from evidence_pipeline.sparse import SparseEncoder
    from evidence_pipeline.store.copy import copy_store

    points = _legacy_store(tmp_path / "old")
    query_dense, query_sparse = points[0].dense, SparseEncoder().encode_query("flow")

    def parents(store):
        return [h.payload["parent_id"] for h in store.hybrid_search(query_dense, query_sparse, 3)]

    with EdgeStore(StoreSettings(path=str(tmp_path / "old"))) as old:
        before = parents(old)
        assert sorted(before) == ["d/p0", "d/p1", "d/p2"]  # p0's two children still count as one parent
        with EdgeStore(StoreSettings(path=str(tmp_path / "new"))) as new:
            copy_store(old, new)
            assert parents(new) == before
            assert new.point_ids("d") == {p.id for p in points}  # ids made again from the payloads
