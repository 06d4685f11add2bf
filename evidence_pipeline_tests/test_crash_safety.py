"""kill -9 at any moment, then the same ingest again, gives exactly the store of an
uninterrupted ingest: the same point ids and payloads, nothing stale, nothing missing.

After every kill the store is first opened as a reader would open it (Edge replays its
WAL), and ``document_version`` must call a document current exactly when the store holds
it completely; that is what lets the next ingest skip it or redo it.
"""

import os
import random
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg

from evidence_pipeline.orchestration.definitions import build_definitions
from evidence_pipeline.orchestration.resources import StoreResource
from evidence_pipeline.orchestration.runner import ingest_paths
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import INGEST_RECORDS
from evidence_pipeline.store.fingerprint import fingerprint_difference, store_fingerprint
from evidence_pipeline_tests.test_store import DIM, make_points

REPO = Path(__file__).resolve().parents[1]
DOC = "doc"


def version_points(version: str):
    """A document of 600 points (v2), or an older version of 400 (v1) sharing ids with it."""
    n_parents = 60 if version == "v2" else 40
    parents = {f"{DOC}/p{i}": [f"row {j} of parent {i}, {version}" for j in range(10)] for i in range(n_parents)}
    return make_points(DOC, parents, seed=version, content_hash=version)


_WRITER = textwrap.dedent(
    """
    import sys, time
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store
    from evidence_pipeline_tests.test_crash_safety import DOC, version_points
    from evidence_pipeline_tests.test_store import DIM
    points = version_points("v2")
    with open_store(StoreSettings(path=sys.argv[1], upsert_batch=4)) as store:
        store.ensure_collection(DIM)
        print("writing", flush=True)
        t = time.perf_counter()
        store.replace_document(DOC, points)
        print(f"done {time.perf_counter() - t:.4f}", flush=True)
    """
)


def _writer(path: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    return proc


def _state(path: Path, want: dict[str, str]) -> str:
    """Open the store a killed writer left; check what document_version says against what it holds."""
    with open_store(StoreSettings(path=str(path))) as store:
        got = store_fingerprint(store, [DOC])
        version = store.document_version(DOC)
        n = store.count(DOC)
    complete = fingerprint_difference(got, want) == ""
    assert (version == ("v2", "1")) == complete, (version, n, fingerprint_difference(got, want))
    if complete:
        return "complete"
    return "old" if version == ("v1", "1") else f"incomplete ({n} points)"


def test_a_replace_killed_between_writes_is_seen_as_incomplete_and_redone(tmp_path):
    reference = tmp_path / "reference"
    proc = _writer(reference)
    out, _ = proc.communicate(timeout=120)
    duration = float(out.split()[-1])
    with open_store(StoreSettings(path=str(reference))) as store:
        want = store_fingerprint(store, [DOC])
    assert len(want) == 600

    old = tmp_path / "old"
    with open_store(StoreSettings(path=str(old))) as store:
        store.ensure_collection(DIM)
        store.replace_document(DOC, version_points("v1"))

    rng = random.Random(4)
    states = []
    for trial, start in enumerate(["empty", "empty", "v1", "v1"]):
        path = tmp_path / f"trial{trial}"
        if start == "v1":
            shutil.copytree(old, path)
        proc = _writer(path)
        time.sleep(rng.uniform(0.1, 0.9) * duration)
        proc.kill()  # SIGKILL
        proc.wait()
        states.append(_state(path, want))
        with open_store(StoreSettings(path=str(path))) as store:  # the same write again
            store.replace_document(DOC, version_points("v2"))
        assert _state(path, want) == "complete"
    # The kills landed between writes, where only doc_points tells a partial document.
    assert any(s.startswith("incomplete") for s in states), states


def test_a_creation_killed_halfway_leaves_no_half_made_store(tmp_path):
    # A new shard is made in a side folder and renamed into place; a killed creation leaves
    # only that folder, which readers ignore and the next creation clears.
    store = tmp_path / "store"
    (tmp_path / ".store.creating" / "segments").mkdir(parents=True)
    with open_store(StoreSettings(path=str(store))) as s:
        assert s.count() == 0 and not store.exists()
        s.ensure_collection(DIM)
        s.replace_document(DOC, version_points("v1"))
    assert not (tmp_path / ".store.creating").exists()
    with open_store(StoreSettings(path=str(store))) as s:
        assert s.count(DOC) == 400 and s.document_version(DOC) == ("v1", "1")


def test_an_ingest_records_creation_killed_halfway_is_ignored_then_cleared(tmp_path):
    # The records' shard is made in a side folder inside the store and renamed into place too.
    settings = StoreSettings(path=str(tmp_path / "store"))
    with open_store(settings) as s:
        s.ensure_collection(DIM)
        s.replace_document(DOC, make_points(DOC, {f"{DOC}/p1": ["r1", "r2"]}))
    shutil.rmtree(tmp_path / "store" / INGEST_RECORDS)
    side = tmp_path / "store" / f".{INGEST_RECORDS}.creating"
    (side / "segments").mkdir(parents=True)
    with open_store(settings) as s:
        assert [(d.points, d.ingested_at) for d in s.documents()] == [(2, None)]
        s.replace_document(DOC, make_points(DOC, {f"{DOC}/p1": ["r1", "r2", "r3"]}))
    assert not side.exists()
    with open_store(settings) as s:
        assert [d.ingested_at is not None for d in s.documents()] == [True]


def _dagster_home(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return path


# Stage of one document -> the stage outputs that exist when it is running (the IO manager
# writes each output under $DAGSTER_HOME/storage/<asset>/<partition>).
_RUNNING_AFTER = {
    "parse": ["raw_pdfs"],
    "embed": ["split_units"],
    "upsert": ["child_embeddings", "bm25_index"],
}


def _wal_stamps(store: Path) -> dict:
    # Edge maps its WAL files into memory: the first write after the store was opened
    # changes a WAL file's mtime.
    try:
        return {f.name: f.stat().st_mtime_ns for f in (store / "wal").iterdir()}
    except FileNotFoundError:
        return {}


def _kill_during(proc: subprocess.Popen, store: Path, storage: Path, stage: str, key: str, delay_s: float) -> None:
    """SIGKILL ``proc`` ``delay_s`` after ``stage`` of document ``key`` began; for "upsert",
    after the first write of qdrant_points reached the store's WAL."""
    deadline = time.monotonic() + 300

    def wait(ready, poll_s: float) -> None:
        while not ready() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(poll_s)

    wait(lambda: all((storage / asset / key).exists() for asset in _RUNNING_AFTER[stage]), 0.01)
    if stage == "upsert":  # the step that writes starts within a second: watch closely
        before = _wal_stamps(store)
        wait(lambda: _wal_stamps(store) != before, 0.0005)
    time.sleep(delay_s)
    proc.kill()
    proc.wait()


def test_ingest_killed_during_parse_embed_and_upsert_then_run_again_gives_the_reference_store(sop_reference, tmp_path):
    """``evidence-pipeline ingest`` of two generated SOPs killed 4 times (seeded delays): while
    a document is parsed, while it is embedded, just after the first write of the first
    document (the store being created) and of the second (a document half written, with
    one point per write); each time the same ingest is run again to completion."""
    paths = sorted(sop_reference["paths"], key=lambda p: p.stat().st_size)[:2]
    keys = [p.stem for p in paths]
    with open_store(sop_reference["store"]) as s:
        want = {k: store_fingerprint(s, [k]) for k in keys}
    rng = random.Random(9)
    plan = [("parse", rng.choice(keys)), ("embed", rng.choice(keys)), ("upsert", keys[0]), ("upsert", keys[1])]
    for trial, (stage, key) in enumerate(plan):
        store = tmp_path / f"store{trial}"
        home = _dagster_home(tmp_path / f"home{trial}")
        env = {
            **os.environ,
            "EVIDENCE_STORE_PATH": str(store),
            "DAGSTER_HOME": str(home),
            "EVIDENCE_STORE_UPSERT_BATCH": "1",  # one write per point: a document takes many
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "evidence_pipeline.cli", "ingest", *map(str, paths), "--quiet"],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        delay = rng.uniform(0, 0.005) if stage == "upsert" else rng.uniform(0, 0.3)
        _kill_during(proc, store, home / "storage", stage, key, delay)

        # A reader opens what the killed ingest left; a document is current only when complete.
        current = set()
        with open_store(StoreSettings(path=str(store))) as s:
            for k in keys:
                version = s.document_version(k)
                complete = fingerprint_difference(store_fingerprint(s, [k]), want[k]) == ""
                assert (version not in (None, ("", ""))) == complete, (stage, k, s.count(k), version)
                current |= {k} if complete else set()

        # The same ingest again, to completion: complete documents are skipped, the rest redone.
        defs = build_definitions({"store": StoreResource(path=str(store), upsert_batch=1)})
        summary = ingest_paths(paths, defs, dg.DagsterInstance.ephemeral())
        assert summary.failures == [], [o.error for o in summary.failures]
        assert {o.key for o in summary.outcomes if o.unchanged} == current
        with open_store(StoreSettings(path=str(store))) as s:
            for k in keys:
                assert fingerprint_difference(store_fingerprint(s, [k]), want[k]) == "", (stage, k)
            assert sorted(s.document_hashes()) == sorted(keys)  # nothing else in the store
