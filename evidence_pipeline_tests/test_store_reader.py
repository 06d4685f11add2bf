"""Searches keep the embedded store open between calls (``store/reader.py``): a long-lived
process never reads stale or torn data, and never keeps a writer in another process waiting
for more than a hand-over."""

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evidence_pipeline.errors import SettingsError
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store, reading_store
from evidence_pipeline.store.lock import HANDOVER_S, lock_path_for
from evidence_pipeline.store.reader import KEPT
from evidence_pipeline_tests.test_store import DIM, make_points

REPO = Path(__file__).resolve().parents[1]

# Opens the shard with Edge itself, no lock file: what Edge alone allows while another process has it open.
_RAW_LOAD = textwrap.dedent(
    """
    import sys, qdrant_edge as qe
    try:
        qe.EdgeShard.load(sys.argv[1]).close()
        print("opened")
    except Exception as exc:
        print("failed:", exc)
    """
)

# Writes document w<i> (3 points) in a new open of the store, N times, waiting at most 10 s
# for each open; prints the longest wait.
_WRITER = textwrap.dedent(
    """
    import sys, time
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store
    from evidence_pipeline_tests.test_store import make_points
    settings = StoreSettings(path=sys.argv[1], lock_timeout_s=10)
    print("started", flush=True)
    waits = []
    for i in range(int(sys.argv[2])):
        t = time.perf_counter()
        with open_store(settings) as store:
            waits.append(time.perf_counter() - t)
            store.replace_document(f"w{i}", make_points(f"w{i}", {f"w{i}/p": ["x", "y", "z"]}))
        time.sleep(0.05)
    print(f"done {max(waits):.3f}", flush=True)
    """
)


def _store(path: Path, docs: dict[str, int]) -> StoreSettings:
    """A store holding ``docs`` (doc id -> number of points)."""
    settings = StoreSettings(path=str(path))
    with open_store(settings) as store:
        store.ensure_collection(DIM)
        for doc, n in docs.items():
            store.replace_document(doc, make_points(doc, {f"{doc}/p": [f"row {i}" for i in range(n)]}))
    return settings


def _kept(settings: StoreSettings):
    return KEPT.get(Path(settings.path).resolve())


def _count(settings: StoreSettings) -> int:
    with reading_store(settings) as store:
        return store.count()


def _run(code: str, *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_an_idle_open_edge_shard_locks_out_other_processes_so_a_kept_one_is_handed_over(tmp_path):
    settings = _store(tmp_path / "edge", {"a": 3})
    with open_store(settings):  # an open shard, idle: Edge alone refuses a second process
        assert "WouldBlock" in _run(_RAW_LOAD, settings.path)
    assert _count(settings) == 3 and _kept(settings).is_kept
    # The kept shard is held between reads, but an opener that queues gets it.
    out = _run(
        textwrap.dedent(
            """
        import sys, time
        from evidence_pipeline.settings import StoreSettings
        from evidence_pipeline.store import open_store
        t = time.perf_counter()
        with open_store(StoreSettings(path=sys.argv[1], lock_timeout_s=0)) as store:
            print(store.count(), f"{time.perf_counter() - t:.3f}")
        """
        ),
        settings.path,
    )
    count, waited = out.split()
    assert count == "3" and float(waited) < HANDOVER_S
    assert not _kept(settings).is_kept


def test_reads_reuse_one_open_of_the_store(tmp_path):
    settings = _store(tmp_path / "edge", {"a": 3, "b": 2})
    kept = _kept(settings)
    opens = kept.opens
    for _ in range(5):
        with reading_store(settings) as store:
            assert store.count() == 5 and store.count("b") == 2
    assert kept.opens == opens + 1 and kept.is_kept
    # keep_open=False (EVIDENCE_STORE_KEEP_OPEN=0): every read opens and closes
    plain = settings.model_copy(update={"keep_open": False})
    for _ in range(2):
        with reading_store(plain) as store:
            assert store.count() == 5
    assert kept.opens == opens + 1


def test_keep_open_from_the_environment(monkeypatch):
    monkeypatch.setenv("EVIDENCE_STORE_KEEP_OPEN", "0")
    assert StoreSettings.from_env().keep_open is False
    monkeypatch.delenv("EVIDENCE_STORE_KEEP_OPEN")
    assert StoreSettings.from_env().keep_open is True
    monkeypatch.setenv("EVIDENCE_STORE_KEEP_OPEN", "maybe")
    with pytest.raises(SettingsError, match="EVIDENCE_STORE_KEEP_OPEN='maybe': expected 1 or 0"):
        StoreSettings.from_env()


def test_a_reader_in_a_loop_neither_starves_a_writer_nor_reads_a_torn_or_stale_store(tmp_path):
    """Another process writes 3-point documents one open at a time while this one reads in a
    tight loop: every write gets the store within a hand-over, every read sees whole documents
    in order, and the read after the writer is done sees all of them."""
    settings = _store(tmp_path / "edge", {"a": 3})
    writes = 8
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, settings.path, str(writes)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "started"
    counts = []
    while writer.poll() is None:
        counts.append(_count(settings))
    out = writer.stdout.read().split()
    assert writer.returncode == 0 and out[0] == "done", out
    assert float(out[1]) < HANDOVER_S + 1.0  # the longest a write waited for the reader to let go
    assert len(counts) > writes  # the reads did run between the writes
    assert all(c % 3 == 0 for c in counts) and counts == sorted(counts)  # whole documents, never back in time
    assert _count(settings) == 3 * (writes + 1)


def test_a_store_folder_replaced_behind_the_lock_is_read_anew(tmp_path):
    path = tmp_path / "edge"
    settings = _store(path, {"a": 3})
    assert _count(settings) == 3 and _kept(settings).is_kept
    # Deleted with its lock file and made again by another process: no lock stood in its way.
    shutil.rmtree(path)
    lock_path_for(path).unlink()
    _run(
        textwrap.dedent(
            """
        import sys
        from pathlib import Path
        from evidence_pipeline_tests.test_store_reader import _store
        _store(Path(sys.argv[1]), {"b": 2, "c": 2})
        """
        ),
        str(path),
    )
    with reading_store(settings) as store:
        assert store.count() == 4 and store.count("a") == 0


def test_a_fork_closes_the_kept_store_first(tmp_path):
    settings = _store(tmp_path / "edge", {"a": 3})
    assert _count(settings) == 3 and _kept(settings).is_kept
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    assert not _kept(settings).is_kept
    assert _count(settings) == 3


def test_searches_in_a_long_lived_process_see_an_ingest_by_another_process(sample_corpus, parse_cached, tmp_path, monkeypatch):
    """The real thing: generated sample PDFs, a real ingest in another process (as
    ``evidence-pipeline ingest`` runs it) while this process keeps searching with
    ``evidence_pipeline.search``. No search fails or sees half a document, the ingest
    is not held up, and the searches after it find the new document."""
    import threading

    from evidence_pipeline import search
    from evidence_pipeline.benchmark.concurrency import run_ingest
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.pipeline import ingest_parsed

    first, new = sample_corpus / "SOP-8812.pdf", sample_corpus / "SOP-MFG-231.pdf"
    settings = StoreSettings(path=str(tmp_path / "store"))
    with open_store(settings) as store:
        ingest_parsed(parse_cached(first), store, Embedder(), token_counter(None))
        before = store.count()
    assert search("Aqueous Phase flow rate", store_settings=settings, doc_ids=[new.stem]) == []

    monkeypatch.setenv("EVIDENCE_STORE_LOCK_TIMEOUT_S", "20")  # a starved writer fails well before the ingest's bound
    done: list = []
    ingest = threading.Thread(target=lambda: done.append(run_ingest(Path(settings.path), [new], timeout_s=600)))
    ingest.start()
    seen, errors = [], []
    while ingest.is_alive():
        try:
            hits = search("What does the procedure require?", 5, store_settings=settings)
            with reading_store(settings) as store:
                seen.append(store.count(new.stem))
            assert hits and all(h.parent_text and h.doc_id in (first.stem, new.stem) for h in hits)
        except Exception as exc:  # what the test is about: keep it
            errors.append(f"{type(exc).__name__}: {exc}")
        time.sleep(0.05)  # searching back to back, but leaving the ingest a core
    ingest.join()
    run = done[0]
    assert run.failures == [] and run.documents == 1, run.failures
    assert len(seen) >= 10  # the searches did run during the ingest
    assert errors == []
    with reading_store(settings) as store:
        final = store.count(new.stem)
        assert store.count() > before and store.count(first.stem) == before
    assert final > 0 and set(seen) <= {0, final}  # the new document is absent or whole, never half
    hits = search("Aqueous Phase flow rate", 3, store_settings=settings, doc_ids=[new.stem])
    assert hits and {h.doc_id for h in hits} == {new.stem}


def test_the_routing_index_is_reused_while_the_store_is_unchanged_and_rebuilt_after_a_write(tmp_path):
    from evidence_pipeline.benchmark.synthetic import TextSampler, synthetic_documents
    from evidence_pipeline.retrieval import routing_index

    docs = list(synthetic_documents(300, TextSampler(["flow rate of the aqueous phase in mL/min"]), dim=DIM))
    settings = StoreSettings(path=str(tmp_path / "edge"))
    with open_store(settings) as store:
        store.ensure_collection(DIM)
        for doc_id, points in docs[:2]:
            store.replace_document(doc_id, points)
    with reading_store(settings) as store:
        index = routing_index(store)
        assert [d for d, _ in index.resolve(f"what does {docs[1][0]} say")][:1] == [docs[1][0]]
    with reading_store(settings) as store:
        assert routing_index(store) is index  # the kept store did not change: its cards are not read again
    with open_store(settings) as store:  # a write: handed over, then read anew
        store.replace_document(*docs[2])
    with reading_store(settings) as store:
        rebuilt = routing_index(store)
        assert rebuilt is not index
        assert [d for d, _ in rebuilt.resolve(f"what does {docs[2][0]} say")][:1] == [docs[2][0]]
