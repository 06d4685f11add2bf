"""Run the ingest job for a list of files in this process (what `evidence-pipeline ingest` does)."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import dagster as dg

from evidence_pipeline.corpus import doc_id_for, expand_paths, partition_key
from evidence_pipeline.errors import EvidencePipelineError
from evidence_pipeline.orchestration.assets import documents

INGEST_JOB = "ingest_document"


@dataclass
class DocumentOutcome:
    path: Path
    key: str
    success: bool
    units: int = 0
    children: int = 0
    error: str | None = None
    unchanged: bool = False

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
    def succeeded(self) -> int:
        return sum(o.success for o in self.outcomes)

    def line(self) -> str:
        units = sum(o.units for o in self.outcomes)
        children = sum(o.children for o in self.outcomes)
        unchanged = sum(o.unchanged for o in self.outcomes)
        return (
            f"ingested {self.succeeded - unchanged} of {len(self.outcomes)} documents "
            f"({unchanged} unchanged, skipped): {units} units, {children} children, {len(self.failures)} failed"
        )


def default_instance() -> dg.DagsterInstance:
    # With DAGSTER_HOME set (the Makefile sets one under data/) the runs show in `dagster dev`.
    return dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()


def _expected_names() -> set[str]:
    """Exceptions raised on purpose: a bad document or an unusable store, not a bug."""
    names, todo = {"Failure"}, [EvidencePipelineError]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo += cls.__subclasses__()
    return names


def _error_chain(error) -> list:
    chain = []
    while error is not None and len(chain) < 20:
        chain.append(error)
        error = error.cause or error.context
    return chain


def _one_line(error) -> str:
    """``StoreError: <message>`` from a serialized error, without its module path."""
    message = " ".join(error.message.strip().split())
    qualified = f"{error.cls_name}: "
    if qualified not in message:
        return message
    return error.cls_name + ": " + message.split(qualified, 1)[1]


def step_failure_cause(data) -> str:
    """The cause of a step failure in one line: a ``dg.Failure``'s description, else the
    exception the op raised (the first of the chain that is not Dagster's wrapper)."""
    if data.user_failure_data is not None and data.user_failure_data.description:
        return " ".join(data.user_failure_data.description.split())
    chain = _error_chain(data.error)
    if not chain:
        return "step failed"
    raised = [e for e in chain if not e.cls_name.startswith("Dagster")]
    return _one_line((raised or chain)[0])


def is_expected_failure(data) -> bool:
    if data.user_failure_data is not None:
        return True
    return any(e.cls_name in _expected_names() for e in _error_chain(data.error))


def failure_message(result: dg.ExecuteInProcessResult) -> str:
    causes = []
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data is not None:
            cause = step_failure_cause(event.step_failure_data)
            if cause not in causes:
                causes.append(cause)
    return "; ".join(causes) or "run failed"


class _QuietExpectedFailures(logging.Filter):
    """Drops the console records that follow a step that failed on purpose: its stack trace
    (~100 lines), one "Dependencies for step ... Not executing." per downstream step, and
    the run-failure line. The CLI prints one line per document; the run's event log keeps
    the full record."""

    def filter(self, record: logging.LogRecord) -> bool:
        meta = getattr(record, "dagster_meta", None)
        meta = meta if isinstance(meta, dict) else {}
        event = meta.get("dagster_event")
        if event is None:
            message = str(meta.get("orig_message", ""))
            return not (message.startswith("Dependencies for step ") and message.endswith("Not executing."))
        if event.is_step_failure and event.step_failure_data is not None:
            return not is_expected_failure(event.step_failure_data)
        return not event.is_run_failure


@dg.logger(
    config_schema={"log_level": dg.Field(str, is_required=False, default_value="WARNING")},
    description="Console logger of `evidence-pipeline ingest`: expected failures in one CLI line, traces at DEBUG.",
)
def ingest_console_logger(init_context: dg.InitLoggerContext) -> logging.Logger:
    level = init_context.logger_config["log_level"].upper()
    logger = logging.Logger("dagster", level=level)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s - dagster - %(levelname)s - %(message)s"))
    logger.addHandler(handler)
    if logging.getLevelName(level) != logging.DEBUG:
        logger.addFilter(_QuietExpectedFailures())
    return logger


def _metadata(result: dg.ExecuteInProcessResult, asset: str, key: str) -> int:
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat.asset_key == dg.AssetKey(asset) and key in mat.metadata:
            return int(mat.metadata[key].value)
    return 0


def _unchanged_keys(by_key: dict[str, Path], defs: dg.Definitions) -> set[str]:
    """Keys whose file (content hash) and pipeline version are already in the store."""
    from evidence_pipeline.orchestration.resources import current_pipeline_version
    from evidence_pipeline.pipeline import stored_version
    from evidence_pipeline.records import sha256_file

    resources = defs.resources
    version = current_pipeline_version(resources["parser"], resources["embedder"])
    unchanged = set()
    with resources["store"].open() as store:
        for key, path in by_key.items():
            if stored_version(store, doc_id_for(path)) == (sha256_file(str(path)), version):
                unchanged.add(key)
    return unchanged


def ingest_paths(
    paths: Iterable[str | Path],
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    progress: Callable[[Iterable], Iterable] = lambda items: items,
    *,
    force: bool = False,
    log_level: str = "WARNING",
) -> IngestSummary:
    """Register each file as a partition and materialize its assets; one failure stays one failure.

    A file whose content hash and pipeline version match what the store holds is skipped
    (``force`` re-ingests it): re-running over an unchanged corpus parses and embeds nothing.
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
    registered = set(instance.get_dynamic_partitions(documents.name))
    new = [k for k in by_key if k not in registered]
    if new:
        instance.add_dynamic_partitions(documents.name, new)
    job = defs.resolve_job_def(INGEST_JOB).with_logger_defs({"console": ingest_console_logger})
    unchanged = set() if force else _unchanged_keys(by_key, defs)
    for key, path in progress(list(by_key.items())):
        if key in unchanged:
            summary.outcomes.append(DocumentOutcome(path, key, True, unchanged=True))
            continue
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
            outcome = DocumentOutcome(
                path, key, True, units=_metadata(result, "split_units", "units"), children=_metadata(result, "child_embeddings", "children")
            )
        else:
            outcome = DocumentOutcome(path, key, False, error=failure_message(result))
        summary.outcomes.append(outcome)
    return summary
