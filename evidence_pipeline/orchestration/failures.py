"""Why a run failed, in one line, and a console that stays quiet about failures expected.

A document that fails on purpose (``dg.Failure``, ``ParseError``, ``StoreError``) is
reported by ``evidence-pipeline ingest`` as one line naming the file and the cause, read
from the step failure's error chain. Dagster's console would print ~100 lines of stack
trace for it first; ``ingest_console_logger`` drops those records below DEBUG. The run's
event log keeps the full record either way.
"""

from __future__ import annotations

import logging
import sys

import dagster as dg

from evidence_pipeline.errors import EvidencePipelineError


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
