"""Dagster at 100,000 documents, on PostgreSQL storage, with tiny generated PDFs.

    python -m evidence_pipeline.benchmark.dagster_scale --pg-url URL [--docs 100000] [--backfill 1000]
        [--batch 25] [--work data/bench-dagster] [--out data/reports/dagster-scale]

Empties the database (``make bench-dagster`` starts the local cluster and passes its URL), then
times each step:

1. writing ``--docs`` one-page PDFs into the corpus folder;
2. the corpus sensor's first tick (every file new) and the registration of its dynamic
   partitions, in requests of 10,000 keys;
3. an unchanged tick, a tick after one file changed (with the cursor's size each time), and a
   tick with the cursor reset;
4. an asset backfill of the first ``--backfill`` documents run by ``dagster-daemon`` in runs of
   ``--batch`` documents, two at a time: wall time, runs per minute, every partition materialized.

The sensor is evaluated in this process against the real instance; its run requests are counted,
not launched. Writes ``report.json`` and ``report.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg

MODULE = "evidence_pipeline.benchmark.dagster_scale"
REPO = Path(__file__).resolve().parents[2]
DONE = {"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED"}


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, round(time.perf_counter() - start, 2)


def instance_home(home: Path, pg_url: str) -> Path:
    """A DAGSTER_HOME holding deploy/postgres/dagster.yaml (its storage URL from DAGSTER_PG_URL)."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "deploy" / "postgres" / "dagster.yaml", home / "dagster.yaml")
    os.environ["DAGSTER_PG_URL"] = pg_url
    return home


def empty_database(pg_url: str) -> None:
    """Drop every table: the instance re-creates its schema on first use."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(pg_url)
    with engine.begin() as conn:
        conn.execute(sqlalchemy.text("DROP SCHEMA public CASCADE"))
        conn.execute(sqlalchemy.text("CREATE SCHEMA public"))
    engine.dispose()


def sensor_ticks(instance: dg.DagsterInstance, corpus: Path, store: Path, changed_file: Path) -> dict:
    from evidence_pipeline.benchmark.tiny_pdfs import rewrite
    from evidence_pipeline.orchestration.resources import CorpusResource, StoreResource
    from evidence_pipeline.orchestration.sensors import build_corpus_sensor

    sensor = build_corpus_sensor()
    resources = {"corpus": CorpusResource(root=str(corpus)), "store": StoreResource(path=str(store))}

    def tick(cursor: str | None) -> tuple[dg.SensorResult, float]:
        return _timed(lambda: sensor(dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources)))

    figures: dict = {}
    first, figures["first_tick_s"] = tick(None)
    figures["first_tick_run_requests"] = len(first.run_requests)
    figures["first_tick_cursor_bytes"] = len(first.cursor.encode())

    def register() -> int:
        n = 0
        for request in first.dynamic_partitions_requests:
            instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
            n += len(request.partition_keys)
        return n

    figures["partitions_registered"], figures["register_partitions_s"] = _timed(register)
    figures["partition_requests"] = len(first.dynamic_partitions_requests)

    unchanged, figures["unchanged_tick_s"] = tick(first.cursor)
    figures["unchanged_tick_run_requests"] = len(unchanged.run_requests)
    figures["unchanged_tick_cursor_bytes"] = len(unchanged.cursor.encode())

    rewrite(changed_file, 999_999)
    changed, figures["changed_tick_s"] = tick(unchanged.cursor)
    figures["changed_tick_run_requests"] = len(changed.run_requests)
    figures["changed_tick_cursor_bytes"] = len(changed.cursor.encode())

    reset, figures["reset_tick_s"] = tick(None)
    figures["reset_tick_run_requests"] = len(reset.run_requests)
    return figures


def launch_backfill(instance: dg.DagsterInstance, keys: list[str]) -> str:
    """An asset backfill of every ingest asset over ``keys``, as the UI's "Materialize" launches one.

    Dagster has no public Python call for this (the UI goes through GraphQL); the
    benchmark builds the same ``PartitionBackfill`` record the GraphQL mutation builds.
    """
    from dagster._core.execution.backfill import PartitionBackfill
    from dagster._core.utils import make_new_backfill_id

    from evidence_pipeline.orchestration.assets import ASSETS
    from evidence_pipeline.orchestration.definitions import defs

    backfill = PartitionBackfill.from_asset_partitions(
        backfill_id=make_new_backfill_id(),
        asset_graph=defs.resolve_asset_graph(),
        partition_names=keys,
        asset_selection=[a.key for a in ASSETS],
        backfill_timestamp=time.time(),
        tags={},
        dynamic_partitions_store=instance,
        all_partitions=False,
        title=f"dagster_scale: {len(keys)} documents",
        description=None,
        run_config=None,
    )
    instance.add_backfill(backfill)
    return backfill.backfill_id


def run_backfill(instance: dg.DagsterInstance, home: Path, keys: list[str], env: dict, timeout_s: float, log: Path) -> dict:
    from evidence_pipeline.orchestration.assets import ASSETS

    daemon_env = {**os.environ, **env, "DAGSTER_HOME": str(home)}
    with log.open("w") as out:
        daemon = subprocess.Popen(
            [str(Path(sys.executable).parent / "dagster-daemon"), "run", "-w", str(REPO / "workspace.yaml")],
            cwd=REPO,
            env=daemon_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            start = time.perf_counter()
            backfill_id = launch_backfill(instance, keys)
            status = ""
            while time.perf_counter() - start < timeout_s:
                status = instance.get_backfill(backfill_id).status.value
                if status in DONE:
                    break
                time.sleep(5)
            wall = time.perf_counter() - start
        finally:
            daemon.terminate()
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                daemon.kill()
    runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
    succeeded = [r for r in runs if r.status == dg.DagsterRunStatus.SUCCESS]
    missing = {asset.key.to_user_string(): len(set(keys) - instance.get_materialized_partitions(asset.key)) for asset in ASSETS}
    return {
        "backfill_documents": len(keys),
        "backfill_status": status,
        "backfill_wall_s": round(wall, 1),
        "backfill_runs": len(runs),
        "backfill_runs_succeeded": len(succeeded),
        "backfill_job_names": sorted({r.job_name for r in runs}),
        "runs_per_minute": round(len(runs) / (wall / 60), 2) if wall else 0.0,
        "documents_per_minute": round(len(keys) / (wall / 60), 1) if wall else 0.0,
        "partitions_not_materialized": missing,
        "every_partition_materialized": not any(missing.values()),
    }


def markdown(report: dict) -> str:
    lines = ["# Dagster at scale (Postgres storage, tiny PDFs)", "", f"`{report['command']}`", "", "| figure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in report.items() if k != "command"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.split("\n\n")[0])
    ap.add_argument("--pg-url", required=True, help="SQLAlchemy URL of the Postgres database (emptied first)")
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--backfill", type=int, default=1000, help="documents backfilled through the daemon (0: none)")
    ap.add_argument("--batch", type=int, default=25, help="documents per backfill run")
    ap.add_argument("--work", type=Path, default=Path("data/bench-dagster"))
    ap.add_argument("--out", type=Path, default=Path("data/reports/dagster-scale"))
    ap.add_argument("--timeout", type=float, default=3 * 3600, help="seconds to wait for the backfill")
    args = ap.parse_args(argv)

    # The backfill policy is read at import: this process, the daemon and its runs agree on it.
    os.environ["EVIDENCE_BACKFILL_BATCH"] = str(args.batch)
    from evidence_pipeline.benchmark.tiny_pdfs import key_for, rewrite, write_tiny_pdfs

    work = args.work.resolve()
    corpus, store = work / "corpus", work / "store"
    shutil.rmtree(store, ignore_errors=True)
    home = instance_home(work / "dagster_home", args.pg_url)
    report: dict = {"command": " ".join(["python -m", MODULE, *(argv if argv is not None else sys.argv[1:])])}
    report["documents"] = args.docs
    paths, report["write_pdfs_s"] = _timed(lambda: write_tiny_pdfs(corpus, args.docs))
    for path in sorted(corpus.rglob("*.pdf")):  # a larger earlier run's files are not this run's corpus
        if int(path.stem.split("-")[1]) >= args.docs:
            path.unlink()
    rewrite_target = paths[-1]
    rewrite(rewrite_target, args.docs - 1)  # the changed tick altered it in an earlier run

    empty_database(args.pg_url)
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        report.update(sensor_ticks(instance, corpus, store, rewrite_target))
        print(json.dumps(report, indent=1), flush=True)
        if args.backfill:
            env = {
                "EVIDENCE_CORPUS_DIR": str(corpus),
                "EVIDENCE_STORE_PATH": str(store),
                "EVIDENCE_BACKFILL_BATCH": str(args.batch),
                "DAGSTER_PG_URL": args.pg_url,
            }
            report["backfill_batch"] = args.batch
            keys = [key_for(i) for i in range(min(args.backfill, args.docs))]
            report.update(run_backfill(instance, home, keys, env, args.timeout, work / "daemon.log"))
    finally:
        instance.dispose()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "report.md").write_text(markdown(report))
    print(markdown(report))
    return 0 if report.get("every_partition_materialized", True) else 1


if __name__ == "__main__":
    raise SystemExit(main())
