"""The Dagster code location: ``dagster dev -m evidence_pipeline.orchestration.definitions``."""

from __future__ import annotations

import dagster as dg

from evidence_pipeline.orchestration.assets import ASSETS, documents
from evidence_pipeline.orchestration.resources import CorpusResource, EmbedderResource, ParserResource, StoreResource
from evidence_pipeline.orchestration.sensors import build_corpus_sensor

ingest_job = dg.define_asset_job(
    "ingest_document",
    selection=dg.AssetSelection.assets(*ASSETS),
    partitions_def=documents,
    description="Ingest one document: parse, build evidence units, embed, write to Qdrant.",
)


def default_resources() -> dict[str, dg.ConfigurableResource]:
    """Resources configured from the environment (see the README's configuration table)."""
    return {
        "parser": ParserResource.from_env(),
        "embedder": EmbedderResource.from_env(),
        "store": StoreResource.from_env(),
        "corpus": CorpusResource.from_env(),
    }


def build_definitions(resources: dict[str, dg.ConfigurableResource] | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=ASSETS,
        jobs=[ingest_job],
        sensors=[build_corpus_sensor(ingest_job)],
        resources={**default_resources(), **(resources or {})},
        # One process per run: models load once and a 7-step run costs no process starts.
        executor=dg.in_process_executor,
    )


defs = build_definitions()
