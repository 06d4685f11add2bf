"""The store fingerprint: what two stores are compared by after a crash, a concurrent run or a backfill."""

import time

from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store.base import SparseVector
from evidence_pipeline.store.edge import EdgeStore
from evidence_pipeline.store.fingerprint import fingerprint_difference, point_hash, store_fingerprint
from evidence_pipeline_tests.test_store import DIM, make_points


def test_the_folder_a_file_was_read_from_is_not_content_but_everything_else_is():
    [point] = make_points("a", {"a/p1": ["one"]})
    here = point.model_copy(update={"payload": {**point.payload, "source": "/corpus/a.pdf"}})
    there = point.model_copy(update={"payload": {**point.payload, "source": "/tmp/copy/a.pdf"}})
    assert point_hash(here) == point_hash(there)
    edited = here.model_copy(update={"payload": {**here.payload, "parent_text": here.payload["parent_text"] + "."}})
    reweighted = here.model_copy(update={"sparse": SparseVector(indices=here.sparse.indices, values=[v + 1 for v in here.sparse.values])})
    assert point_hash(edited) != point_hash(here) and point_hash(reweighted) != point_hash(here)
    got, want = {here.id: point_hash(here)}, {there.id: point_hash(edited)}
    assert fingerprint_difference(got, want) == "0 points missing, 0 extra (stale or other ids), 1 with other content, of 1"


def test_the_ingest_time_is_kept_outside_the_points_so_two_ingests_compare_equal(tmp_path):
    points = make_points("a", {"a/p1": ["one", "two"], "a/p2": ["three"]})
    stores = []
    for name in ("first", "second"):
        store = EdgeStore(StoreSettings(path=str(tmp_path / name)))
        store.ensure_collection(DIM)
        store.replace_document("a", points)
        stores.append(store)
        time.sleep(0.002)  # the second ingest is recorded at a later millisecond
    first, second = stores
    try:
        assert first.ingest_records()["a"].ingested_at < second.ingest_records()["a"].ingested_at
        assert fingerprint_difference(store_fingerprint(second), store_fingerprint(first)) == ""
    finally:
        first.close()
        second.close()
