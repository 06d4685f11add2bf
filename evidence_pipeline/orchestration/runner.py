"""Run the ingest job for a list of files in this process (what `evidence-pipeline ingest` does)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from evidence_pipeline.corpus import doc_id_for, expand_paths, partition_key
from evidence_pipeline.embedding import share_cores_with_parser
from evidence_pipeline.orchestration.asset_job import ingest_job_def
from evidence_pipeline.orchestration.assets import documents
from evidence_pipeline.orchestration.checks import empty_document_problems, parsed_warnings
from evidence_pipeline.orchestration.failures import failure_message, ingest_console_logger
from evidence_pipeline.work import WORK


@dataclass
class DocumentOutcome:
    path: Path
    key: str
    success: bool
    units: int = 0
    children: int = 0
    error: str | None = None
    unchanged: bool = False
    warning: str | None = None  # ingested, but nothing of it can be found (e.g. a scan)

    def failure_line(self) -> str:
        """``<file>: <cause>`` on one line (a cause that already opens with the file is not repeated)."""
        reason = " ".join((self.error or "failed").split())
        for named in (f"{self.path}: ", f"{self.path.resolve()}: "):
            if reason.startswith(named):
                reason = reason[len(named) :]
                break
        return f"{self.path}: {reason}"


@dataclass
class IngestSummary:
    outcomes: list[DocumentOutcome] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[DocumentOutcome]:
        return [o for o in self.outcomes if not o.success]

    @property
    def warnings(self) -> list[str]:
        """``<file>: <reason>`` for each document that ran but gave no evidence unit."""
        return [f"{o.path}: {o.warning}" for o in self.outcomes if o.success and o.warning]

    @property
    def succeeded(self) -> int:
        return sum(o.success for o in self.outcomes)

    def line(self) -> str:
        units = sum(o.units for o in self.outcomes)
        children = sum(o.children for o in self.outcomes)
        unchanged = sum(o.unchanged for o in self.outcomes)
        return (
            f"ingested {self.succeeded - unchanged} of {len(self.outcomes)} documents "
            f"({unchanged} unchanged, skipped): {units} units, {children} children, {len(self.failures)} failed"
            + (f", {len(self.warnings)} with warnings" if self.warnings else "")
        )


def default_instance() -> dg.DagsterInstance:
    # With DAGSTER_HOME set (the Makefile sets one under data/) the runs show in `dagster dev`.
    return dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()


def _metadata(result: dg.ExecuteInProcessResult, asset: str, key: str) -> int:
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat.asset_key == dg.AssetKey(asset) and key in mat.metadata:
            return int(mat.metadata[key].value)
    return 0


def _parse_warnings(result: dg.ExecuteInProcessResult) -> list[str]:
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat.asset_key == dg.AssetKey("parsed_docs"):
            return parsed_warnings({k: v.value for k, v in mat.metadata.items()})
    return []


def _unchanged_keys(by_key: dict[str, Path], defs: dg.Definitions) -> set[str]:
    """Keys whose file (content hash) and pipeline version are already in the store."""
    from evidence_pipeline.orchestration.resources import current_pipeline_version
    from evidence_pipeline.staleness import stored_state

    resources = defs.resources
    version = current_pipeline_version(resources["parser"], resources["embedder"], resources["pipeline_options"])
    with resources["store"].open() as store:
        return {key for key, path in by_key.items() if not stored_state(store, doc_id_for(path), path, version).stale}


def ingest_paths(
    paths: Iterable[str | Path],
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    progress: Callable[[Iterable], Iterable] = lambda items: items,
    *,
    force: bool = False,
    log_level: str = "WARNING",
    read_ahead: bool = True,
) -> IngestSummary:
    """Register each file as a partition and materialize its assets; one failure stays one failure.

    A file whose content hash and pipeline version match what the store holds is skipped
    (``force`` re-ingests it): re-running over an unchanged corpus parses and embeds nothing.
    ``read_ahead``: the parser's worker process parses the documents ahead of the runs, the
    first at once, each next while one is embedded and written (``WorkerParser.read_ahead``);
    the embedding runs on the cores the parser leaves (``embedding.share_cores_with_parser``),
    and the model loads meanwhile. Each document is one Dagster run.
    """
    paths = list(paths)
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        # Checked before any partition is registered: a typo leaves nothing behind.
        raise FileNotFoundError(f"no such file or folder: {', '.join(missing)}")
    summary = IngestSummary()
    by_key: dict[str, Path] = {}
    for path in expand_paths(paths):
        key = partition_key(doc_id_for(path))
        if key in by_key:
            summary.skipped.append(f"{path}: same document id as {by_key[key]}")
            continue
        by_key[key] = path
    if not by_key:
        return summary
    unchanged = set() if force else _unchanged_keys(by_key, defs)
    parser = _read_ahead_parser(defs) if read_ahead else None
    if parser is not None:
        parser.read_ahead([(p.resolve(), doc_id_for(p)) for k, p in by_key.items() if k not in unchanged])
        share_cores_with_parser(parser.busy)
    if len(unchanged) < len(by_key):
        _load_model_meanwhile(defs)
    registered = set(instance.get_dynamic_partitions(documents.name))
    new = [k for k in by_key if k not in registered]
    if new:
        instance.add_dynamic_partitions(documents.name, new)
    job = ingest_job_def(defs).with_logger_defs({"console": ingest_console_logger})
    try:
        _run_each(job, instance, by_key, unchanged, progress, log_level, summary)
    finally:
        if parser is not None:
            parser.read_ahead([])
            share_cores_with_parser(False)
    return summary


def _load_model_meanwhile(defs: dg.Definitions) -> None:
    """Load the embedding model (exporting it first, once, if its cache lacks it) on a thread
    while the first document is parsed; the run's embedding step waits for it if need be."""
    resource = (defs.resources or {}).get("embedder")
    if not hasattr(resource, "embedder"):
        return

    def load() -> None:
        try:
            resource.embedder().load()
        except Exception:  # noqa: BLE001 (the run's own load reports it, in its document's outcome)
            pass

    threading.Thread(target=load, name="evidence-model-load", daemon=True).start()


def _read_ahead_parser(defs: dg.Definitions):
    """The parser the job's ``parsed_docs`` step will use (one per process and settings), when
    it can parse the next document in the background (the worker-process parser)."""
    resource = (defs.resources or {}).get("parser")
    parser = resource.parser() if hasattr(resource, "parser") else None
    return parser if hasattr(parser, "read_ahead") else None


def _run_each(job, instance, by_key: dict[str, Path], unchanged: set[str], progress, log_level: str, summary: IngestSummary) -> None:
    for key, path in progress(list(by_key.items())):
        if key in unchanged:
            summary.outcomes.append(DocumentOutcome(path, key, True, unchanged=True))
            continue
        WORK.count("dagster.runs")
        result = job.execute_in_process(
            partition_key=key,
            instance=instance,
            run_config={
                # Absolute: raw_pdfs records it, and a later run from the UI or the schedule
                # (another working directory) falls back to it for a file outside the corpus.
                "ops": {"raw_pdfs": {"config": {"path": str(path.resolve())}}},
                "loggers": {"console": {"config": {"log_level": log_level}}},
            },
            raise_on_error=False,
        )
        if result.success:
            units = _metadata(result, "split_units", "units")
            # The document card is a unit of every document: it alone means nothing was read.
            content = units - _metadata(result, "evidence_units", "cards")
            problems = empty_document_problems(content, _parse_warnings(result))
            outcome = DocumentOutcome(
                path,
                key,
                True,
                units=units,
                children=_metadata(result, "child_embeddings", "children"),
                warning="; ".join(problems) or None,
            )
        else:
            outcome = DocumentOutcome(path, key, False, error=failure_message(result))
        summary.outcomes.append(outcome)
