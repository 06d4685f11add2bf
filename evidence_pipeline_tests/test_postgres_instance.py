"""The Dagster instance on a real PostgreSQL cluster (Debian `postgresql`): partitions, a
materialization and the sensor's instance look-ups go through Postgres storage."""

import shutil
import socket
import tempfile
from pathlib import Path

import dagster as dg
import pytest

from evidence_pipeline.orchestration.assets import raw_pdfs
from evidence_pipeline.orchestration.history import latest_metadata
from evidence_pipeline.orchestration.resources import CorpusResource, StoreResource
from evidence_pipeline.orchestration.sensors import build_corpus_sensor
from evidence_pipeline.tools.postgres import LocalPostgres, available

pytestmark = pytest.mark.skipif(
    not available(), reason="PostgreSQL binaries (initdb, pg_ctl, psql) not installed: apt-get install -y postgresql"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def pg_url():
    pytest.importorskip("dagster_postgres", reason="dagster-postgres not installed (the `postgres` extra)")
    root = Path(tempfile.mkdtemp(prefix="evidence-pg-"))
    cluster = LocalPostgres(root / "cluster", port=_free_port())
    try:
        cluster.start()
        cluster.start()  # idempotent: a running cluster is left as it is
        yield cluster.url
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_instance(pg_url):
    with dg.instance_for_test(overrides={"storage": {"postgres": {"postgres_url": pg_url}}}) as instance:
        yield instance
        instance.wipe()  # runs and events; the partitions go one by one
        for key in instance.get_dynamic_partitions("documents"):
            instance.delete_dynamic_partition("documents", key)


def test_partition_materializes_with_the_instance_on_postgres(pg_instance, tmp_path):
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage

    assert isinstance(pg_instance.run_storage, PostgresRunStorage)
    assert isinstance(pg_instance.event_log_storage, PostgresEventLogStorage)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "limits.md").write_text("# Storage limits\n\n| Item | Min | Max |\n|---|---|---|\n| Temperature | 2 | 8 |\n")
    pg_instance.add_dynamic_partitions("documents", ["limits"])
    result = dg.materialize(
        [raw_pdfs], partition_key="limits", instance=pg_instance, resources={"corpus": CorpusResource(root=str(corpus))}
    )
    assert result.success
    meta = latest_metadata(pg_instance, "raw_pdfs", ["limits"])["limits"]
    assert meta["source_path"] == str(corpus / "limits.md") and len(meta["content_hash"]) == 64
    assert pg_instance.get_materialized_partitions(raw_pdfs.key) == {"limits"}


def test_sensor_ticks_against_postgres(pg_instance, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("a", "b", "c"):
        (corpus / f"{name}.md").write_text(f"# {name}\n\ntext {name}")
    sensor = build_corpus_sensor()
    resources = {"corpus": CorpusResource(root=str(corpus)), "store": StoreResource(path=str(tmp_path / "store"))}
    first = sensor(dg.build_sensor_context(instance=pg_instance, resources=resources))
    for request in first.dynamic_partitions_requests:
        pg_instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
    assert len(first.run_requests) == 1 and pg_instance.get_dynamic_partitions("documents") == ["a", "b", "c"]
    dg.materialize([raw_pdfs], partition_key="b", instance=pg_instance, resources={"corpus": CorpusResource(root=str(corpus))})
    # Reset cursor: every document is compared with Postgres; "b" was ingested as it is.
    again = sensor(dg.build_sensor_context(instance=pg_instance, resources=resources))
    assert [r.partition_key for r in again.run_requests] == ["a", "c"]
