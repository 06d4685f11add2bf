"""A backfill of the ingest job whose steps run on Celery workers, all on this machine.

    python -m evidence_pipeline.tools.celery_backfill CORPUS_DIR [--workers 2] [--out DIR] [--json]

Starts a private Redis (``tools.celery_local``), Dagster Celery workers (two by default) and a Dagster
instance in ``--out`` (a new folder; SQLite storage), registers every document of
CORPUS_DIR as a partition, and backfills the asset job over them with
``dagster job backfill``: one run per document, launched at once. The code location is
the project's own (``evidence_pipeline.orchestration.definitions`` with
``EVIDENCE_EXECUTOR=celery``): each run's process orchestrates, and every step
(parse, units, split, embed, BM25, Qdrant, checks) is a Celery task that a worker
executes. The store is the embedded one under ``--out``: its lock makes the workers'
writes take turns.

Prints what ran where (steps per worker, from the "Executing steps ... in celery
worker" events that the workers record in each run), the partitions materialized and
the wall time. Exit 0 when every run succeeded and every document is in the store.
The Celery extra (``pip install 'evidence_pipeline[celery]'``) and ``redis-server``
(Debian ``redis-server``) are needed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import yaml
from pydantic import BaseModel

from evidence_pipeline.orchestration.asset_job import ASSET_JOB_NAME
from evidence_pipeline.tools.celery_local import celery_workers, redis_server, stop_group, wait_ready

JOB = ASSET_JOB_NAME  # the one asset job that UI backfills, sensors and `ingest` run
CODE_LOCATION = "evidence_pipeline.orchestration.definitions"
CELERY_WORKER_METADATA = "Celery worker"  # dagster_celery.tasks records the worker's hostname under it
BACKFILL_TIMEOUT_S = 900.0

# The instance: SQLite under DAGSTER_HOME; runs launch as soon as they are submitted (no
# daemon needed); the embedded store's writer steps take one slot at a time, as in the
# project's local dagster.yaml.
INSTANCE_CONFIG = {
    "telemetry": {"enabled": False},
    "nux": {"enabled": False},
    "run_coordinator": {"module": "dagster._core.run_coordinator", "class": "DefaultRunCoordinator"},
    "concurrency": {"pools": {"default_limit": 1, "granularity": "op"}},
}


class RunRecord(BaseModel):
    run_id: str
    partition: str
    status: str
    steps_by_worker: dict[str, list[str]]  # worker hostname -> step keys it executed


class BackfillReport(BaseModel):
    backfill_id: str
    documents: list[str]  # partition keys backfilled
    runs: list[RunRecord]
    materialized: dict[str, list[str]]  # asset -> partitions materialized
    store_documents: dict[str, int]  # doc_id -> points in the store
    seconds: float
    out: str

    @property
    def workers(self) -> set[str]:
        return {w for run in self.runs for w in run.steps_by_worker}

    @property
    def ok(self) -> bool:
        return (
            len(self.runs) == len(self.documents)
            and all(r.status == "SUCCESS" for r in self.runs)
            and all(sorted(keys) == sorted(self.documents) for keys in self.materialized.values())
            and len(self.store_documents) == len(self.documents)
        )

    def lines(self) -> list[str]:
        out = [f"backfill {self.backfill_id}: {len(self.runs)} runs over {len(self.documents)} documents in {self.seconds:.1f} s"]
        for run in sorted(self.runs, key=lambda r: r.partition):
            where = "; ".join(f"{w}: {len(s)} steps" for w, s in sorted(run.steps_by_worker.items()))
            out.append(f"  {run.partition}: {run.status} ({where})")
        steps: dict[str, int] = {}
        for run in self.runs:
            for worker, keys in run.steps_by_worker.items():
                steps[worker] = steps.get(worker, 0) + len(keys)
        out.append("steps per worker: " + ", ".join(f"{w} {n}" for w, n in sorted(steps.items())))
        for asset, keys in self.materialized.items():
            out.append(f"  {asset}: {len(keys)} of {len(self.documents)} partitions materialized")
        points = sum(self.store_documents.values())
        out.append(f"store: {len(self.store_documents)} documents, {points} points")
        out.append(f'search it:  EVIDENCE_STORE_PATH={self.out}/store evidence-pipeline search "..."')
        out.append(f"its runs:   DAGSTER_HOME={self.out}/dagster_home dagster-webserver -m {CODE_LOCATION}")
        out.append(f"logs:       {self.out}/logs (one per worker; backfill.log: the runs)")
        return out


def cluster_env(out: Path, corpus: Path) -> dict[str, str]:
    """The environment of every process of the run: instance, code location, store, corpus."""
    env = dict(os.environ)
    env.update(
        DAGSTER_HOME=str(out / "dagster_home"),
        EVIDENCE_EXECUTOR="celery",
        EVIDENCE_STORE_PATH=str(out / "store"),
        EVIDENCE_CORPUS_DIR=str(corpus.resolve()),
    )
    # Console scripts of this interpreter (dagster, dagster-celery, celery) come first.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _instance(home: Path):
    import dagster as dg

    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text(yaml.safe_dump(INSTANCE_CONFIG, sort_keys=False))
    return dg.DagsterInstance.from_config(str(home))


def _launch(env: dict[str, str], keys: list[str], log: Path) -> tuple[str, subprocess.Popen]:
    """``dagster job backfill``: the backfill id it prints, and its process, whose group holds
    the code server it started and the runs' processes (the server lives until they end)."""
    command = [
        str(Path(sys.executable).with_name("dagster")), "job", "backfill", "-m", CODE_LOCATION, "-j", JOB,
        "--partitions", ",".join(keys), "--noprompt",
    ]  # fmt: skip
    # To a file, not a pipe: the code server keeps writing to it until the runs end.
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        code = proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        raise RuntimeError(f"dagster job backfill did not return within 300 s (log: {log})") from None
    found = re.search(r"Launched backfill job `([^`]+)`", log.read_text(errors="replace"))
    if code != 0 or not found:
        stop_group(proc)
        raise RuntimeError(f"dagster job backfill failed (exit {code}; log: {log})")
    return found.group(1), proc


def _wait_for_runs(instance, backfill_id: str, count: int, timeout_s: float) -> list:
    import dagster as dg

    deadline = time.monotonic() + timeout_s
    while True:
        runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
        if len(runs) >= count and all(run.is_finished for run in runs):
            return runs
        if time.monotonic() > deadline:
            states = ", ".join(f"{r.tags.get('dagster/partition')}: {r.status.value}" for r in runs)
            raise TimeoutError(f"backfill {backfill_id} not finished after {timeout_s:g} s ({len(runs)} runs: {states})")
        time.sleep(1.0)


def _steps_by_worker(instance, run_id: str) -> dict[str, list[str]]:
    import dagster as dg

    by_worker: dict[str, list[str]] = {}
    for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        event = record.dagster_event
        worker = event.engine_event_data.metadata.get(CELERY_WORKER_METADATA)
        if worker is not None:
            by_worker.setdefault(str(worker.value), []).append(event.step_key)
    return by_worker


def _store_documents(env: dict[str, str]) -> dict[str, int]:
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store

    with open_store(StoreSettings(path=env["EVIDENCE_STORE_PATH"])) as store:
        return {doc_id: store.count(doc_id) for doc_id in sorted(store.document_hashes())}


def run_backfill(corpus: Path, out: Path, workers: int = 2, timeout_s: float = BACKFILL_TIMEOUT_S) -> BackfillReport:
    """Backfill every document of ``corpus`` through ``workers`` Celery workers; everything
    (instance, store, logs) is written under ``out``, which must not exist or be empty."""
    from evidence_pipeline.corpus import scan
    from evidence_pipeline.orchestration.assets import ASSETS, documents

    out = Path(out).resolve()  # DAGSTER_HOME must be absolute
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out}: not empty (the backfill needs a fresh instance and store)")
    corpus = Path(corpus)
    keys = sorted(scan(corpus).paths)
    if not keys:
        raise FileNotFoundError(f"{corpus}: no documents found")
    if any("," in key for key in keys):
        raise ValueError(f"{corpus}: a document id with a comma cannot be passed to `dagster job backfill`")
    env = cluster_env(out, corpus)
    started = time.monotonic()
    # Created here, once, before any other process opens it (SQLite schema migration).
    with _instance(Path(env["DAGSTER_HOME"])) as instance:
        instance.add_dynamic_partitions(documents.name, keys)
        logs = out / "logs"
        with redis_server(out / "redis") as url:
            env.update(CELERY_BROKER_URL=url, CELERY_RESULT_BACKEND=url[: -len("/0")] + "/1")
            with celery_workers(workers, logs, env) as started_workers:
                # Launched while the workers start: their first steps wait in the queue.
                backfill_id, cli = _launch(env, keys, logs / "backfill.log")
                try:
                    wait_ready(started_workers)
                    runs = _wait_for_runs(instance, backfill_id, len(keys), timeout_s)
                finally:
                    stop_group(cli)
        materialized = {asset.key.to_user_string(): sorted(instance.get_materialized_partitions(asset.key) & set(keys)) for asset in ASSETS}
        records = [
            RunRecord(
                run_id=run.run_id,
                partition=run.tags.get("dagster/partition", ""),
                status=run.status.value,
                steps_by_worker=_steps_by_worker(instance, run.run_id),
            )
            for run in runs
        ]
    return BackfillReport(
        backfill_id=backfill_id,
        documents=keys,
        runs=records,
        materialized=materialized,
        store_documents=_store_documents(env),
        seconds=time.monotonic() - started,
        out=str(out),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence_pipeline.tools.celery_backfill", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="folder of documents to backfill")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="new folder for the instance, store and logs (default: a temporary one)")
    parser.add_argument("--timeout", type=float, default=BACKFILL_TIMEOUT_S, help="seconds to wait for the runs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"error: {args.corpus}: no such folder", file=sys.stderr)
        return 2
    if importlib.util.find_spec("dagster_celery") is None:
        print("error: dagster-celery not installed; install the celery extra: pip install 'evidence_pipeline[celery]'", file=sys.stderr)
        return 2
    if args.workers < 1:
        print(f"error: --workers {args.workers}: at least one worker is needed", file=sys.stderr)
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="celery-backfill-"))
    try:
        report = run_backfill(args.corpus, out, workers=args.workers, timeout_s=args.timeout)
    except Exception as exc:  # one line, the logs under out/ say more
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(report.model_dump_json(indent=2) if args.json else "\n".join(report.lines()))
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
