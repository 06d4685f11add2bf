"""The deployment files load and validate: instance configs against Dagster's schema, run configs against the job."""

import importlib.util
import re
import tomllib
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._config import validate_config
from dagster._core.instance.config import dagster_instance_config
from dagster._serdes.config_class import class_from_code_pointer

from evidence_pipeline.orchestration.assets import STORE_POOL
from evidence_pipeline.orchestration.definitions import defs

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
INSTANCE_CONFIGS = sorted(DEPLOY.glob("*/dagster.yaml"))
# Postgres storage beside the embedded store: one machine, one store writer.
LOCAL_CONFIGS = [REPO / "data" / "dagster_home" / "dagster.yaml", DEPLOY / "postgres" / "dagster.yaml"]
SCALEOUT_CONFIGS = [p for p in INSTANCE_CONFIGS if p not in LOCAL_CONFIGS]


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize("path", SCALEOUT_CONFIGS + LOCAL_CONFIGS, ids=lambda p: str(p.relative_to(REPO)))
def test_instance_config_matches_dagsters_schema(path: Path):
    config, custom_class = dagster_instance_config(str(path.parent), path.name)
    assert custom_class is None
    assert config["telemetry"] == {"enabled": False} and config["nux"] == {"enabled": False}
    assert config["concurrency"]["pools"]["granularity"] == "op"


def test_scaleout_configs_use_postgres_and_a_queue():
    assert {p.parent.name for p in SCALEOUT_CONFIGS} == {"k8s", "celery"}
    for path in SCALEOUT_CONFIGS:
        config = yaml.safe_load(path.read_text())
        assert set(config["storage"]) == {"postgres"}
        # Dagster's default run coordinator queues runs; concurrency.runs bounds them.
        assert "run_coordinator" not in config and config["concurrency"]["runs"]["max_concurrent_runs"] > 0
        # A Qdrant server takes parallel writers.
        assert config["concurrency"]["pools"]["default_limit"] > 1
    assert yaml.safe_load((DEPLOY / "k8s" / "dagster.yaml").read_text())["run_launcher"]["class"] == "K8sRunLauncher"


def test_one_dagster_yaml_for_the_local_instance():
    # A dagster.yaml at the root beside DAGSTER_HOME's made `dagster dev` warn on every start.
    assert not (REPO / "dagster.yaml").exists()


def test_local_instance_allows_one_store_writer():
    for path in LOCAL_CONFIGS:
        assert yaml.safe_load(path.read_text())["concurrency"]["pools"]["default_limit"] == 1, path
    assert STORE_POOL == "qdrant_writer"


@pytest.mark.parametrize("path", INSTANCE_CONFIGS, ids=lambda p: p.parent.name)
def test_integration_class_configs_validate(path: Path):
    """Each pluggable class's own config schema (needs the `scaleout` extra)."""
    if not (_has("dagster_k8s") and _has("dagster_postgres")):
        pytest.skip("dagster-k8s / dagster-postgres not installed (pip install '.[scaleout]')")
    from dagster_postgres import DagsterPostgresStorage

    config = yaml.safe_load(path.read_text())
    checked = validate_config(DagsterPostgresStorage.config_type(), config["storage"]["postgres"])
    assert checked.success, checked.errors
    for section in ("run_launcher", "run_coordinator", "compute_logs"):
        if section in config:
            klass = class_from_code_pointer(config[section]["module"], config[section]["class"])
            checked = validate_config(klass.config_type(), config[section].get("config", {}))
            assert checked.success, (section, checked.errors)


def test_qdrant_server_run_config_validates_against_the_ingest_job(monkeypatch):
    monkeypatch.setenv("QDRANT_URL", "http://qdrant:6333")
    monkeypatch.setenv("QDRANT_API_KEY", "secret")
    run_config = yaml.safe_load((DEPLOY / "run_config" / "qdrant_server.yaml").read_text())
    job = defs.resolve_implicit_global_asset_job_def()
    assert dg.validate_run_config(job, run_config)["resources"]["store"]["config"]["url"] == "http://qdrant:6333"
    with pytest.raises(dg.DagsterInvalidConfigError):
        dg.validate_run_config(job, {"resources": {"store": {"config": {"url": 6333}}}})


def test_celery_executor_and_workers_read_the_broker_from_the_environment(monkeypatch):
    from dagster_celery.cli import get_validated_config

    from evidence_pipeline.orchestration.definitions import build_definitions
    from evidence_pipeline.tools.celery_local import worker_config

    monkeypatch.setenv("EVIDENCE_EXECUTOR", "celery")
    monkeypatch.setenv("CELERY_BROKER_URL", "pyamqp://guest@rabbitmq//")
    monkeypatch.setenv("CELERY_RESULT_BACKEND", "rpc://")
    job = build_definitions().resolve_implicit_global_asset_job_def()
    # No run config: runs that a sensor, a schedule or a backfill launches reach the broker too.
    execution = dg.validate_run_config(job, {})["execution"]["celery"]
    assert (execution["broker"], execution["backend"]) == ("pyamqp://guest@rabbitmq//", "rpc://")
    # The workers' config file, as dagster-celery's CLI reads it; the local tool writes the same.
    worker_file = DEPLOY / "run_config" / "celery.yaml"
    checked = get_validated_config(str(worker_file))
    assert (checked["broker"], checked["backend"]) == ("pyamqp://guest@rabbitmq//", "rpc://")
    assert checked["config_source"] == {"task_acks_late": True, "worker_prefetch_multiplier": 1}
    assert yaml.safe_load(worker_file.read_text()) == worker_config()


def test_scaleout_extra_pins_the_integrations_to_this_dagster():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    [dagster_pin] = [d for d in project["dependencies"] if re.match(r"dagster==", d)]
    assert dagster_pin == "dagster==1.13.27"
    assert sorted(project["optional-dependencies"]["scaleout"]) == [
        "dagster-celery==0.29.27",
        "dagster-k8s==0.29.27",
        "dagster-postgres==0.29.27",
    ]
