"""The Dagster code location: ``dagster dev -m evidence_pipeline.orchestration.definitions``."""

from __future__ import annotations

import os

import dagster as dg

from evidence_pipeline.orchestration.assets import ASSETS, documents
from evidence_pipeline.orchestration.checks import CHECKS
from evidence_pipeline.orchestration.io import DocumentIOManager
from evidence_pipeline.orchestration.resources import (
    CorpusResource,
    EmbedderResource,
    ParserResource,
    PipelineOptionsResource,
    StoreResource,
)
from evidence_pipeline.orchestration.schedules import build_reingest_schedule
from evidence_pipeline.orchestration.sensors import build_corpus_sensor

# The checks alone, partitioned like them: a run checks its document or its range of them,
# a backfill of this job checks every document.
check_job = dg.define_asset_job(
    "check_documents",
    selection=dg.AssetSelection.checks(*CHECKS),
    partitions_def=documents,
    description="Run the asset checks over documents already ingested (one partition, a range, or a backfill of all).",
)


def default_resources() -> dict[str, dg.ConfigurableResource | dg.ConfigurableIOManagerFactory]:
    """Resources configured from the environment (see the README's configuration table)."""
    return {
        "parser": ParserResource.from_env(),
        "embedder": EmbedderResource.from_env(),
        "store": StoreResource.from_env(),
        "corpus": CorpusResource.from_env(),
        # Unit and split options; they enter the pipeline version.
        "pipeline_options": PipelineOptionsResource(),
        # Outputs of every stage, one file per document; EVIDENCE_IO_DIR may be an fsspec URL.
        "io_manager": DocumentIOManager(base_dir=os.environ.get("EVIDENCE_IO_DIR") or None),
    }


def executor() -> dg.ExecutorDefinition:
    """EVIDENCE_EXECUTOR: ``in_process`` (default), ``multiprocess`` or ``celery`` (the celery extra;
    CELERY_BROKER_URL and CELERY_RESULT_BACKEND name the broker and the result backend)."""
    name = os.environ.get("EVIDENCE_EXECUTOR", "in_process")
    if name == "celery":
        from dagster_celery import celery_executor

        # Broker and result backend come from the environment of the process that runs the
        # job, so runs a sensor, a schedule or a backfill launches (no run config) reach the
        # workers too. Workers read the same variables (deploy/run_config/celery.yaml).
        return celery_executor.configured(
            {"broker": {"env": "CELERY_BROKER_URL"}, "backend": {"env": "CELERY_RESULT_BACKEND"}},
            name="celery",
        )
    if name == "multiprocess":
        return dg.multiprocess_executor
    if name != "in_process":
        raise ValueError(f"EVIDENCE_EXECUTOR={name!r}: expected in_process, multiprocess or celery")
    # One process per run: models load once and a 7-step run costs no process starts.
    return dg.in_process_executor


def build_definitions(resources: dict | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        # Ingest runs target the assets (asset_job): one name for the pipeline in the UI.
        jobs=[check_job],
        sensors=[build_corpus_sensor()],
        schedules=[build_reingest_schedule()],
        resources={**default_resources(), **(resources or {})},
        executor=executor(),
    )


defs = build_definitions()
