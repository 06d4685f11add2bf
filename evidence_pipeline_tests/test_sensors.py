"""The corpus sensor, evaluated directly: new, changed, touched-but-unchanged, deleted files, cursor reset."""

import os
from pathlib import Path

import dagster as dg
import pytest

from evidence_pipeline.corpus import file_fingerprint
from evidence_pipeline.orchestration.asset_job import ASSET_JOB_NAME
from evidence_pipeline.orchestration.partition_ranges import RANGE_END_TAG, RANGE_START_TAG
from evidence_pipeline.orchestration.resources import CorpusResource, StoreResource
from evidence_pipeline.orchestration.sensors import BUCKETS, FileState, batched_run_requests, bucket_of, build_corpus_sensor, changed_files
from evidence_pipeline.records import sha256_file
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import Point, SparseVector, point_id
from evidence_pipeline.store.edge import EdgeStore

SENSOR = build_corpus_sensor()


class Folder:
    """A corpus folder, an instance and a store, and one sensor tick at a time."""

    def __init__(self, root: Path, instance: dg.DagsterInstance):
        self.corpus = root / "corpus"
        self.corpus.mkdir()
        self.store = StoreSettings(path=str(root / "store"))
        self.instance = instance
        self.cursor: str | None = None

    def write(self, rel: str, text: str) -> Path:
        path = self.corpus / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def tick(self) -> dg.SensorResult:
        context = dg.build_sensor_context(
            instance=self.instance,
            cursor=self.cursor,
            resources={"corpus": CorpusResource(root=str(self.corpus)), "store": StoreResource(path=self.store.path)},
        )
        result = SENSOR(context)
        # What the daemon does with the result: partitions first, then the cursor.
        for request in result.dynamic_partitions_requests:
            if isinstance(request, dg.AddDynamicPartitionsRequest):
                self.instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
            else:
                for key in request.partition_keys:
                    self.instance.delete_dynamic_partition(request.partitions_def_name, key)
        self.cursor = result.cursor
        return result

    def ingested(self, key: str, path: Path) -> None:
        """Record what a successful run records (the sensor reads raw_pdfs' content_hash)."""
        metadata = {"content_hash": sha256_file(str(path)), "source_path": str(path), "doc_id": path.stem}
        self.instance.report_runless_asset_event(dg.AssetMaterialization("raw_pdfs", partition=key, metadata=metadata))

    def partitions(self) -> list[str]:
        return list(self.instance.get_dynamic_partitions("documents"))


def requested(result: dg.SensorResult) -> list[str]:
    """Partition keys the run requests cover (ranges as 'start..end')."""
    out = []
    for r in result.run_requests:
        tags = r.tags
        out.append(r.partition_key or f"{tags[RANGE_START_TAG]}..{tags[RANGE_END_TAG]}")
    return out


@pytest.fixture
def folder(tmp_path):
    with dg.instance_for_test() as instance:
        yield Folder(tmp_path, instance)


def test_new_files_are_registered_and_requested_in_one_batch(folder):
    folder.write("a.md", "# A\n\none")
    folder.write("sub/b.md", "# B\n\ntwo")
    result = folder.tick()
    assert folder.partitions() == ["a", "b"]
    assert requested(result) == ["a..b"]
    assert result.run_requests[0].run_key.startswith("a..b:")


def test_unchanged_and_touched_files_request_nothing(folder):
    a = folder.write("a.md", "# A\n\none")
    folder.tick()
    folder.ingested("a", a)
    assert requested(folder.tick()) == []
    # Same bytes, new mtime: the cheap pre-check fails, the hash settles it.
    st = a.stat()
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert requested(folder.tick()) == []


def test_changed_content_requests_a_run_keyed_by_the_new_hash(folder):
    a = folder.write("a.md", "# A\n\none")
    first = folder.tick()
    folder.ingested("a", a)
    a.write_text("# A\n\none, revised")
    second = folder.tick()
    assert requested(second) == ["a"]
    assert second.run_requests[0].run_key != first.run_requests[0].run_key
    assert folder.partitions() == ["a"]


def test_cursor_reset_requests_only_what_the_instance_has_not_seen(folder):
    a = folder.write("a.md", "# A\n\none")
    b = folder.write("b.md", "# B\n\ntwo")
    folder.tick()
    folder.ingested("a", a)
    folder.ingested("b", b)
    b.write_text("# B\n\ntwo, revised while the sensor was reset")
    folder.write("c.md", "# C\n\nthree")
    folder.cursor = None
    result = folder.tick()
    assert requested(result) == ["b..c"]
    assert folder.partitions() == ["a", "b", "c"]


def _store_points(store: StoreSettings, doc_id: str, n: int = 3) -> None:
    points = [
        Point(
            id=point_id(doc_id, f"c{i}", f"{doc_id}-p"),
            dense=[1.0, float(i), 0.5],
            sparse=SparseVector(indices=[i + 1], values=[1.0]),
            payload={"doc_id": doc_id, "parent_id": f"{doc_id}-p", "parent_text": "text"},
        )
        for i in range(n)
    ]
    with open_store(store) as s:
        s.ensure_collection(3)
        s.replace_document(doc_id, points)


def test_deleted_file_removes_partition_and_points(folder):
    a = folder.write("a.md", "# A\n\none")
    b = folder.write("b.md", "# B\n\ntwo")
    folder.tick()
    for key, path in (("a", a), ("b", b)):
        folder.ingested(key, path)
        _store_points(folder.store, key)
    b.unlink()
    result = folder.tick()
    assert requested(result) == []
    assert folder.partitions() == ["a"]
    with open_store(folder.store) as s:
        assert s.count("b") == 0 and s.count("a") == 3


def test_deletion_after_cursor_reset_uses_the_recorded_path(folder, tmp_path):
    a = folder.write("a.md", "# A\n\none")
    b = folder.write("b.md", "# B\n\ntwo")
    folder.tick()
    folder.ingested("a", a)
    folder.ingested("b", b)
    _store_points(folder.store, "b")
    # Ingested from outside the corpus folder (`evidence-pipeline ingest other.md`): not the sensor's to delete.
    outside = tmp_path / "other.md"
    outside.write_text("# Other")
    folder.instance.add_dynamic_partitions("documents", ["other"])
    folder.ingested("other", outside)
    b.unlink()
    folder.cursor = None
    result = folder.tick()
    assert requested(result) == []
    assert folder.partitions() == ["a", "other"]
    with open_store(folder.store) as s:
        assert s.count("b") == 0


def test_deletion_waits_while_the_store_is_held(folder):
    a = folder.write("a.md", "# A\n\none")
    folder.tick()
    folder.ingested("a", a)
    _store_points(folder.store, "a")
    a.unlink()
    with EdgeStore(folder.store):  # a running ingest holds the embedded store
        folder.tick()
    assert folder.partitions() == ["a"]
    folder.tick()
    assert folder.partitions() == []
    with open_store(folder.store) as s:
        assert s.count("a") == 0


def test_same_document_id_twice_is_skipped(folder):
    folder.write("x/a.md", "# A")
    folder.write("y/a.md", "# other A")
    result = folder.tick()
    assert folder.partitions() == ["a"] and requested(result) == ["a"]


def test_batches_follow_partition_order_and_size():
    order = ["a", "b", "c", "d", "e", "f"]
    wanted = {k: "h" for k in ["a", "b", "c", "e", "f"]}
    requests = batched_run_requests(order, wanted, max_per_run=2)
    got = [(r.partition_key, r.tags.get(RANGE_START_TAG), r.tags.get(RANGE_END_TAG)) for r in requests]
    assert got == [(None, "a", "b"), ("c", None, None), (None, "e", "f")]
    assert len({r.run_key for r in requests}) == 3


def test_batched_requests_are_partition_ranges_dagster_reads():
    # The range tags are spelled out in partition_ranges (no public constant): Dagster must read them back.
    [request] = batched_run_requests(["a", "b"], {"a": "h", "b": "h"})
    assert request.partition_key_range == dg.PartitionKeyRange("a", "b")


def test_only_files_whose_fingerprint_moved_are_hashed(tmp_path):
    """The per-file comparison alone, without Dagster: what is new, changed, touched or the same."""
    files = {name: tmp_path / f"{name}.md" for name in ("same", "touched", "edited", "new")}
    for name, path in files.items():
        path.write_text(f"# {name}")
    last = {
        name: {
            "fingerprint": file_fingerprint(files[name].stat()),
            "content_hash": sha256_file(str(files[name])),
            "source_path": str(files[name]),
        }
        for name in ("same", "touched", "edited")
    }
    os.utime(files["touched"], ns=(1, 1))  # new mtime, same bytes
    files["edited"].write_text("# edited, longer now")
    hashed: list[str] = []

    def content_hash(path: str) -> str:
        hashed.append(Path(path).stem)
        return sha256_file(path)

    states = {k: FileState(str(p), file_fingerprint(p.stat())) for k, p in files.items()}
    wanted = changed_files(states, last, content_hash=content_hash)
    assert sorted(hashed) == ["edited", "new", "touched"]  # "same" is vouched for by its fingerprint
    assert wanted == {k: sha256_file(str(files[k])) for k in ("edited", "new")}
    # Moved to another folder with the same fingerprint: the path differs, so it is hashed (and unchanged).
    moved = {"same": FileState(str(tmp_path / "elsewhere" / "same.md"), states["same"].fingerprint)}
    assert changed_files(moved, last, content_hash=lambda p: last["same"]["content_hash"]) == {}


def test_cursor_stays_bounded_and_an_unchanged_folder_asks_nothing(folder):
    n = 1500
    paths = {f"doc-{i:05d}": folder.write(f"d{i // 500}/doc-{i:05d}.md", f"# Doc {i}\n\nbody {i}") for i in range(n)}
    first = folder.tick()
    assert len(folder.partitions()) == n
    assert sum(len(r.partition_keys) for r in first.dynamic_partitions_requests) == n
    cursor = folder.cursor
    # A fixed number of digests, no per-file entry: under 25 bytes per bucket.
    assert len(cursor.encode()) <= BUCKETS * 25 and "doc-00042" not in cursor

    unchanged = folder.tick()
    assert requested(unchanged) == [] and unchanged.dynamic_partitions_requests == []
    assert folder.cursor == cursor

    # One file changes: its bucket is re-checked against the instance. Of its bucket-mates,
    # one was ingested, one is in a running run, the rest were never run (requested again).
    buckets: dict[int, list[str]] = {}
    for key in paths:
        buckets.setdefault(bucket_of(key), []).append(key)
    target, *mates = max(buckets.values(), key=len)
    assert len(mates) >= 3
    for key in [target, mates[0]]:
        folder.ingested(key, paths[key])
    folder.instance.add_run(
        dg.DagsterRun(job_name=ASSET_JOB_NAME, status=dg.DagsterRunStatus.STARTED, tags={"dagster/partition": mates[1]})
    )
    paths[target].write_text("# revised")
    changed = folder.tick()
    assert sorted(k for r in requested(changed) for k in r.split("..")) == sorted([target] + mates[2:])
    assert len(folder.cursor.encode()) <= BUCKETS * 25
