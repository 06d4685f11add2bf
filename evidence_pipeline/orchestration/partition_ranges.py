"""A run over a range of partition keys, requested from a sensor or a schedule.

Dagster 1.13 has no public parameter or constant for this: ``RunRequest`` takes a single
``partition_key``, and the only way to ask for a range is two run tags that Dagster
reads back (``RunRequest.partition_key_range``, the run launcher, backfills). Their
names are spelled out here, once, instead of importing them from the private
``dagster._core.storage.tags``; ``test_sensors`` checks that Dagster still reads them.
"""

from __future__ import annotations

RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


def range_tags(first: str, last: str) -> dict[str, str]:
    """Run tags that make a run cover the partition keys from ``first`` to ``last`` (inclusive)."""
    return {RANGE_START_TAG: first, RANGE_END_TAG: last}
