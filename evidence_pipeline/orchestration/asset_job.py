"""The one name every run of the pipeline has: Dagster's asset job.

The sensor, the schedule, `evidence-pipeline ingest` and a backfill launched from the UI's
asset graph all target the assets, so Dagster runs each of them as its implicit asset job
and the UI lists every run the same way (as asset materializations, with the assets and
partitions it covered). A named job for the same assets would give the pipeline two
names: UI backfills of assets always run the implicit job.

Dagster 1.13 has no public constant for that job's name; it is spelled out here, once,
and ``test_orchestration`` checks that Dagster still uses it.
"""

from __future__ import annotations

import dagster as dg

ASSET_JOB_NAME = "__ASSET_JOB"


def ingest_job_def(defs: dg.Definitions) -> dg.JobDefinition:
    """The job that ingests documents (every asset, with their checks)."""
    return defs.resolve_implicit_global_asset_job_def()
