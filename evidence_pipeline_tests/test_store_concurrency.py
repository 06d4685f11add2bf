"""One writer and many readers of the embedded store, in separate processes, take turns:
a second opener waits (bounded) instead of failing, and an ingest with searches running
beside it loses nothing."""

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evidence_pipeline.benchmark.concurrency import ingest_while_searching
from evidence_pipeline.errors import StoreError
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline.store.fingerprint import fingerprint_difference, store_fingerprint
from evidence_pipeline.store.lock import HANDOVER_S, StoreLock
from evidence_pipeline_tests.test_store import DIM, make_points

REPO = Path(__file__).resolve().parents[1]

# Opens the store given on the command line, waiting up to argv[2] s; prints the count and the wait.
_OPENER = textwrap.dedent(
    """
    import sys, time
    from evidence_pipeline.errors import StoreError
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store
    print("started", flush=True)
    t = time.perf_counter()
    try:
        with open_store(StoreSettings(path=sys.argv[1], lock_timeout_s=float(sys.argv[2]))) as store:
            print(f"count {store.count()} waited {time.perf_counter() - t:.3f}")
    except StoreError as exc:
        print(f"error {exc}")
    """
)


def _opener(path: Path, timeout_s: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", _OPENER, str(path), str(timeout_s)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "started"  # imports done: the wait starts now
    return proc


def _store_with_points(path: Path) -> StoreSettings:
    settings = StoreSettings(path=str(path))
    with open_store(settings) as store:
        store.ensure_collection(DIM)
        store.replace_document("a", make_points("a", {"a/p1": ["r1", "r2", "r3"]}))
    return settings


def test_a_second_process_waits_for_the_store_and_opens_it_when_released(tmp_path):
    settings = _store_with_points(tmp_path / "edge")
    with open_store(settings):
        proc = _opener(tmp_path / "edge", 30)
        time.sleep(1.0)
    out, err = proc.communicate(timeout=60)
    words = out.split()
    assert words[:2] == ["count", "3"], out + err
    assert 0.5 < float(words[3]) < 30  # it waited for the release, not for the bound


def test_waiting_past_the_bound_fails_with_one_line_naming_store_bound_and_holder(tmp_path):
    settings = _store_with_points(tmp_path / "edge")
    with open_store(settings):
        proc = _opener(tmp_path / "edge", 0.5)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == "", err
    assert out.startswith("error ") and out.count("\n") == 1, out
    assert str(tmp_path / "edge") in out and "more than 0.5 s" in out and "QDRANT_URL" in out
    assert f"pid {os.getpid()}" in out  # what holds it: this test process


def test_a_process_that_keeps_taking_the_store_does_not_starve_a_waiter(tmp_path):
    # The other process takes the store again as soon as it lets go; a waiter still gets
    # its turn within one holding time, never after the bound.
    hog = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
            import sys, time
            from pathlib import Path
            from evidence_pipeline.store.lock import HANDOVER_S, StoreLock
            lock = StoreLock(Path(sys.argv[1]))
            end = time.monotonic() + 6
            print("started", flush=True)
            while time.monotonic() < end:
                lock.acquire(30)
                time.sleep(0.05)
                lock.release()
            """
            ),
            str(tmp_path / "store"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert hog.stdout.readline().strip() == "started"
        time.sleep(0.2)
        waits = []
        for _ in range(8):
            lock = StoreLock(tmp_path / "store")
            t = time.perf_counter()
            lock.acquire(2.0)  # StoreError if starved
            waits.append(time.perf_counter() - t)
            lock.release()
            time.sleep(0.05)
        assert max(waits) < 2.0
    finally:
        hog.kill()
        hog.wait()


def test_the_same_process_does_not_wait_for_itself_when_told_not_to_wait(tmp_path):
    # "Not waiting" still gives an idle reader elsewhere its hand-over time (lock.HANDOVER_S), no more.
    settings = _store_with_points(tmp_path / "edge")
    with open_store(settings):
        t = time.perf_counter()
        with pytest.raises(StoreError, match="more than 0 s"):
            with open_store(settings.model_copy(update={"lock_timeout_s": 0})):
                pass
        assert time.perf_counter() - t < HANDOVER_S + 1.0


def test_reading_a_store_that_does_not_exist_creates_nothing(tmp_path):
    with open_store(StoreSettings(path=str(tmp_path / "none" / "store"))) as store:
        assert store.count() == 0 and store.document_version("a") is None
    assert not (tmp_path / "none").exists()


def test_lock_settings_from_the_environment(monkeypatch):
    monkeypatch.setenv("EVIDENCE_STORE_LOCK_TIMEOUT_S", "2.5")
    monkeypatch.setenv("EVIDENCE_STORE_UPSERT_BATCH", "16")
    s = StoreSettings.from_env()
    assert (s.lock_timeout_s, s.upsert_batch) == (2.5, 16)
    monkeypatch.setenv("EVIDENCE_STORE_LOCK_TIMEOUT_S", "soon")
    with pytest.raises(ValueError, match="EVIDENCE_STORE_LOCK_TIMEOUT_S='soon': expected a number"):
        StoreSettings.from_env()


def test_ingest_while_another_process_searches_loses_nothing(sop_reference, tmp_path):
    """6 generated documents ingested as the CLI does while another process runs
    ``evidence_pipeline.search`` every 0.3 s: no document and no search fails, and the
    store is exactly the one ingested with nobody searching."""
    store = tmp_path / "store"
    run, searches = ingest_while_searching(store, sop_reference["paths"], tmp_path, interval_s=0.3)
    assert run.failures == [] and run.documents == len(sop_reference["paths"])
    assert [s.error for s in searches if s.error] == []
    during = [s for s in searches if run.started <= s.started <= run.finished]
    assert len(during) >= 5  # the searches did overlap the ingest
    assert any(s.hits for s in during)  # and found what was written meanwhile
    with open_store(StoreSettings(path=str(store))) as s:
        got = store_fingerprint(s)
    assert fingerprint_difference(got, sop_reference["fingerprint"]) == ""
