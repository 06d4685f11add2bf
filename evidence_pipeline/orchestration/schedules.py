"""Schedule: periodic re-ingestion of the documents whose index is stale.

A document is stale when what the store holds for it differs from what a run would
write now: its file's SHA-256 differs from the ``content_hash`` of its latest
``qdrant_points`` materialization, or the ``pipeline_version`` recorded there differs
from the current one (parser, embedding model, unit options, ``PIPELINE_VERSION``), or
it was never indexed (a failed ingest is retried here), or the store no longer holds
it. Bumping the pipeline version therefore re-ingests everything, in batched runs.

The sensor reacts to file changes within seconds; this catches what it cannot see:
code and model changes, failed runs, and a store that was wiped or replaced.
"""

import os
from pathlib import Path

import dagster as dg

from evidence_pipeline.corpus import scan
from evidence_pipeline.errors import StoreError
from evidence_pipeline.orchestration.asset_job import ASSET_JOB_NAME
from evidence_pipeline.orchestration.assets import documents
from evidence_pipeline.orchestration.history import latest_metadata
from evidence_pipeline.orchestration.resources import (
    CorpusResource,
    EmbedderResource,
    ParserResource,
    PipelineOptionsResource,
    StoreResource,
    current_pipeline_version,
)
from evidence_pipeline.orchestration.sensors import batched_run_requests
from evidence_pipeline.records import sha256_file
from evidence_pipeline.staleness import DocumentState, document_state
from evidence_pipeline.store.base import DocumentVersion

DEFAULT_CRON = "0 3 * * *"  # daily, 03:00


def reingest_cron() -> str:
    return os.environ.get("EVIDENCE_REINGEST_CRON") or DEFAULT_CRON


def build_reingest_schedule(cron: str | None = None) -> dg.ScheduleDefinition:
    @dg.schedule(
        job_name=ASSET_JOB_NAME,
        cron_schedule=cron or reingest_cron(),
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description=(
            "Re-ingests documents whose content hash or pipeline version differs from what is indexed "
            "(cron: $EVIDENCE_REINGEST_CRON, default daily at 03:00)."
        ),
    )
    def reingest_schedule(
        context: dg.ScheduleEvaluationContext,
        corpus: CorpusResource,
        store: StoreResource,
        parser: ParserResource,
        embedder: EmbedderResource,
        pipeline_options: PipelineOptionsResource,
    ):
        found = scan(Path(corpus.root))
        registered = list(context.instance.get_dynamic_partitions(documents.name))
        new_keys = [k for k in found.paths if k not in set(registered)]
        if new_keys:  # normally the sensor's job; done here so a stopped sensor loses nothing
            context.instance.add_dynamic_partitions(documents.name, new_keys)
        order = registered + new_keys
        version = current_pipeline_version(parser, embedder, pipeline_options)
        indexed = latest_metadata(context.instance, "qdrant_points", found.paths)
        try:
            with store.open(lock_timeout_s=0) as s:  # a busy store is not waited for
                stored: dict[str, str] | None = s.document_hashes()
        except StoreError as exc:  # the embedded store is busy: judge by the run history alone
            context.log.warning(f"store not readable, using materialization metadata only: {exc}")
            stored = None

        wanted: dict[str, str] = {}
        reasons: dict[DocumentState, int] = {}
        for key, path in found.paths.items():
            content_hash = sha256_file(str(path))
            meta = indexed.get(key)
            # The store holds what the history says was written (a document of no points holds nothing).
            store_holds = (
                None
                if stored is None or meta is None or not meta.get("points", 1)
                else (stored.get(meta.get("doc_id", "")) == content_hash)
            )
            last = DocumentVersion(meta.get("content_hash", ""), meta.get("pipeline_version", "")) if meta else None
            state = document_state(content_hash, last, version, store_holds=store_holds)
            if state.stale:
                reasons[state] = reasons.get(state, 0) + 1
                wanted[key] = f"{content_hash}|{version}"
        summary = ", ".join(f"{n} {state.value}" for state, n in reasons.items()) or "none"
        context.log.info(f"{len(found.paths)} documents, pipeline version {version}; stale: {summary}")
        if not wanted:
            return dg.SkipReason(f"all {len(found.paths)} documents are indexed with pipeline version {version}")
        return batched_run_requests(order, wanted, prefix="reingest:")

    return reingest_schedule
