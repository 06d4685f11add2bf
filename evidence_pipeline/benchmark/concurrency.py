"""One writer and a reader on the embedded store at once: an ingest in one process while
another process searches every ``--interval`` seconds.

    python -m evidence_pipeline.benchmark.concurrency [PATH ...] [--interval 0.5] [--limit 10] [--alone] [--json]

PATH: files or folders (default: the generated sample corpus). Prints the documents that
failed, the searches that failed, and the latency of the searches made during the ingest
(p50 / p95 / max; a search that meets the ingest writing waits for its turn). With
``--alone`` the same ingest also runs with no searches, into a second store: its time, and
whether both stores hold exactly the same points (``store.fingerprint``).

Both sides run in child processes of this module, as the product runs them: the ingest is
``orchestration.runner.ingest_paths`` (what ``evidence-pipeline ingest`` runs), each search
is ``evidence_pipeline.search``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from evidence_pipeline.benchmark.inputs import documents
from evidence_pipeline.benchmark.timing import load_1min, percentile

MODULE = "evidence_pipeline.benchmark.concurrency"
DEFAULT_QUERY = "What are the limits given in the table?"
_READY_TIMEOUT_S = 300


class IngestRun(BaseModel):
    documents: int
    failures: list[str]  # "file: cause", one per failed document
    started: float  # wall clock (time.time()), comparable across processes
    finished: float

    @property
    def seconds(self) -> float:
        return self.finished - self.started


class SearchRecord(BaseModel):
    started: float
    seconds: float
    hits: int = 0
    error: str | None = None


class ConcurrencyReport(BaseModel):
    documents: int
    failed_documents: list[str]
    ingest_s: float
    interval_s: float
    searches: int  # started while the ingest ran
    failed_searches: list[str]
    search_p50_ms: float
    search_p95_ms: float
    search_max_ms: float
    load_1min: float
    alone_ingest_s: float | None = None
    same_store: bool | None = None
    store_difference: str = ""


# -- child processes -----------------------------------------------------------------


def ingest_worker(paths: list[str]) -> IngestRun:
    """Ingest ``paths`` into the store of the environment (``EVIDENCE_STORE_PATH``) as the CLI does."""
    import dagster as dg

    from evidence_pipeline.orchestration.definitions import defs
    from evidence_pipeline.orchestration.runner import ingest_paths

    started = time.time()
    summary = ingest_paths(paths, defs, dg.DagsterInstance.ephemeral(), log_level="CRITICAL")
    return IngestRun(
        documents=len(summary.outcomes),
        failures=[f"{o.path}: {o.error}" for o in summary.failures],
        started=started,
        finished=time.time(),
    )


def search_worker(interval_s: float, query: str, ready: Path, stop: Path) -> None:
    """Search the store of the environment every ``interval_s`` (start to start) until ``stop``
    exists; one JSON ``SearchRecord`` per line on stdout. ``ready`` appears once the model is loaded."""
    from evidence_pipeline import search
    from evidence_pipeline.embedding import Embedder
    from evidence_pipeline.settings import EmbeddingSettings

    _ = Embedder(EmbeddingSettings.from_env()).model
    ready.touch()
    next_start = time.time()
    while not stop.exists():
        started, t = time.time(), time.perf_counter()
        try:
            record = SearchRecord(started=started, seconds=0.0, hits=len(search(query, k=5)))
        except Exception as exc:  # a failed search is what this measures: keep its message
            record = SearchRecord(started=started, seconds=0.0, error=f"{type(exc).__name__}: {exc}")
        record.seconds = time.perf_counter() - t
        print(record.model_dump_json(), flush=True)
        next_start += interval_s
        time.sleep(max(0.0, next_start - time.time()))


# -- the measurement -----------------------------------------------------------------


def child_env(store: Path) -> dict[str, str]:
    env = dict(os.environ, EVIDENCE_STORE_PATH=str(store))
    env.pop("DAGSTER_HOME", None)  # the ingest uses an ephemeral instance, never the user's
    return env


def run_ingest(store: Path, paths: Sequence[Path], timeout_s: float = 1800) -> IngestRun:
    """``ingest_worker`` in a fresh process, into ``store``."""
    out = subprocess.run(
        [sys.executable, "-m", MODULE, "ingest-worker", *map(str, paths)],
        env=child_env(store),
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    if out.returncode != 0:
        raise RuntimeError(f"ingest process exited with {out.returncode}: {out.stderr.strip()[-2000:]}")
    return IngestRun.model_validate_json(out.stdout.strip().splitlines()[-1])


def ingest_while_searching(
    store: Path, paths: Sequence[Path], workdir: Path, interval_s: float = 0.5, query: str = DEFAULT_QUERY
) -> tuple[IngestRun, list[SearchRecord]]:
    """Start the search loop, wait until its model is loaded, ingest, stop the loop."""
    ready, stop = workdir / "search.ready", workdir / "search.stop"
    for f in (ready, stop):
        f.unlink(missing_ok=True)
    log = (workdir / "search.stderr").open("w")
    searcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            MODULE,
            "search-worker",
            "--interval",
            str(interval_s),
            "--query",
            query,
            "--ready",
            str(ready),
            "--stop",
            str(stop),
        ],
        env=child_env(store),
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while not ready.exists():
            if searcher.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"search process did not start: {(workdir / 'search.stderr').read_text()[-2000:]}")
            time.sleep(0.05)
        run = run_ingest(store, paths)
        stop.touch()
        out, _ = searcher.communicate(timeout=120)
    finally:
        if searcher.poll() is None:
            searcher.kill()
            searcher.wait()
        log.close()
    return run, [SearchRecord.model_validate_json(line) for line in out.splitlines() if line.startswith("{")]


def measure(
    paths: Sequence[Path], workdir: Path, interval_s: float = 0.5, alone: bool = False, query: str = DEFAULT_QUERY
) -> ConcurrencyReport:
    run, records = ingest_while_searching(workdir / "store", paths, workdir, interval_s, query)
    during = [r for r in records if run.started <= r.started <= run.finished]
    ms = [r.seconds * 1000 for r in during]
    report = ConcurrencyReport(
        documents=run.documents,
        failed_documents=run.failures,
        ingest_s=run.seconds,
        interval_s=interval_s,
        searches=len(during),
        failed_searches=[r.error for r in records if r.error],
        search_p50_ms=percentile(ms, 50),
        search_p95_ms=percentile(ms, 95),
        search_max_ms=max(ms, default=float("nan")),
        load_1min=load_1min(),
    )
    if alone:
        from evidence_pipeline.settings import StoreSettings
        from evidence_pipeline.store import open_store
        from evidence_pipeline.store.fingerprint import fingerprint_difference, store_fingerprint

        reference = run_ingest(workdir / "alone", paths)
        with open_store(StoreSettings(path=str(workdir / "store"))) as s:
            got = store_fingerprint(s)
        with open_store(StoreSettings(path=str(workdir / "alone"))) as s:
            want = store_fingerprint(s)
        difference = fingerprint_difference(got, want)
        report = report.model_copy(
            update={"alone_ingest_s": reference.seconds, "same_store": not difference, "store_difference": difference}
        )
    return report


def text(report: ConcurrencyReport) -> str:
    lines = [
        f"documents ingested while searching: {report.documents}, failed: {len(report.failed_documents)}",
        *(f"  FAILED {f}" for f in report.failed_documents),
        f"ingest: {report.ingest_s:.1f} s" + (f" (alone: {report.alone_ingest_s:.1f} s)" if report.alone_ingest_s else ""),
        f"searches during the ingest (one every {report.interval_s:g} s, another process): {report.searches}, "
        f"failed: {len(report.failed_searches)}",
        *(f"  FAILED {e}" for e in report.failed_searches[:5]),
        f"search latency during the ingest: p50 {report.search_p50_ms:.0f} ms, p95 {report.search_p95_ms:.0f} ms, "
        f"max {report.search_max_ms:.0f} ms",
        f"load average (1 min) at the end: {report.load_1min:.1f}",
    ]
    if report.same_store is not None:
        lines.append("store equals the one ingested alone: " + ("yes" if report.same_store else f"NO ({report.store_difference})"))
    return "\n".join(lines)


def _worker(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE} {argv[0]}")
    if argv[0] == "ingest-worker":
        parser.add_argument("paths", nargs="+")
        args = parser.parse_args(argv[1:])
        print(ingest_worker(args.paths).model_dump_json())
        return 0
    parser.add_argument("--interval", type=float, required=True)
    parser.add_argument("--query", required=True)
    parser.add_argument("--ready", type=Path, required=True)
    parser.add_argument("--stop", type=Path, required=True)
    args = parser.parse_args(argv[1:])
    search_worker(args.interval, args.query, args.ready, args.stop)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("ingest-worker", "search-worker"):  # the child processes
        return _worker(argv)
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="files or folders (default: the generated sample corpus)")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between search starts (default 0.5)")
    parser.add_argument("--limit", type=int, default=10, help="at most this many documents (default 10)")
    parser.add_argument("--query", default=DEFAULT_QUERY)
    parser.add_argument("--alone", action="store_true", help="also ingest without searches and compare the stores")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="concurrency-") as tmp:
        workdir = Path(tmp)
        paths = documents(args.paths, workdir)
        paths = paths[: args.limit]
        report = measure(paths, workdir, args.interval, args.alone, args.query)
    print(report.model_dump_json(indent=2) if args.json else text(report))
    return 0 if not (report.failed_documents or report.failed_searches or report.same_store is False) else 1


if __name__ == "__main__":
    sys.exit(main())
