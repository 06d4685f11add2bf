"""A backfill of the ingest job on two Celery workers over a real Redis (``tools.celery_backfill``).

Everything is real and on this machine: ``redis-server`` on a private port, two
``dagster-celery`` workers, a SQLite Dagster instance, ``dagster job backfill`` launching
one run per document, each step a Celery task. The store it leaves is compared with the
reference store of an undisturbed in-process ingest of the same files.
"""

import shutil

import pytest
from dagster._core.execution.api import create_execution_plan

from evidence_pipeline.orchestration.assets import ASSETS
from evidence_pipeline.orchestration.definitions import build_definitions
from evidence_pipeline.store import open_store
from evidence_pipeline.store.fingerprint import fingerprint_difference, store_fingerprint
from evidence_pipeline.tools.celery_backfill import main, run_backfill
from evidence_pipeline.tools.celery_local import redis_server_binary


@pytest.mark.skipif(
    redis_server_binary() is None,
    reason="redis-server not installed (Debian package redis-server; .ci/run installs it)",
)
def test_backfill_on_two_celery_workers_indexes_what_an_in_process_ingest_indexes(sop_reference, tmp_path):
    # Three of the generated SOPs (two pages each), the smallest: a run's cost is the workers' model loads.
    paths = sorted(sop_reference["paths"], key=lambda p: p.stat().st_size)[:3]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in paths:
        shutil.copy(path, corpus / path.name)
    keys = sorted(p.stem for p in paths)

    report = run_backfill(corpus, tmp_path / "run", workers=2, timeout_s=600)

    assert report.documents == keys
    assert sorted(r.partition for r in report.runs) == keys  # one run per document
    assert [r.status for r in report.runs] == ["SUCCESS"] * 3, "\n".join(report.lines())
    assert report.materialized == {asset.key.to_user_string(): keys for asset in ASSETS}
    # Every step of every run was a Celery task, and both workers took some.
    plan_steps = {s.key for s in create_execution_plan(build_definitions().resolve_implicit_global_asset_job_def()).steps}
    for run in report.runs:
        executed = [step for steps in run.steps_by_worker.values() for step in steps]
        assert sorted(executed) == sorted(plan_steps), run.partition
    assert {w.split("@")[0] for w in report.workers} == {"worker1", "worker2"}, "\n".join(report.lines())
    # The store holds exactly the points an in-process ingest of the same files writes.
    assert report.store_documents == {k: sop_reference["points_by_doc"][k] for k in keys}
    with open_store(sop_reference["store"]) as s:
        want = store_fingerprint(s, keys)
    with open_store(sop_reference["store"].model_copy(update={"path": str(tmp_path / "run" / "store")})) as s:
        got = store_fingerprint(s)
    assert fingerprint_difference(got, want) == ""


def test_backfill_refuses_a_used_folder_an_empty_corpus_and_no_workers(tmp_path, capsys):
    used = tmp_path / "used"
    used.mkdir()
    (used / "store").mkdir()
    (tmp_path / "corpus").mkdir()
    with pytest.raises(FileExistsError, match="not empty"):
        run_backfill(tmp_path / "corpus", used)
    assert main([str(tmp_path / "corpus"), "--out", str(tmp_path / "fresh")]) == 1
    assert "no documents found" in capsys.readouterr().err
    assert main([str(tmp_path / "missing")]) == 2
    assert main([str(tmp_path / "corpus"), "--workers", "0"]) == 2
    assert "at least one worker" in capsys.readouterr().err
