"""One asset body for single-partition runs and batched backfill runs.

A run covers one partition (the sensor, ``evidence-pipeline ingest``) or a range of
them (a backfill under ``BackfillPolicy.multi_run``: models load once per run). An
upstream input is then the bare value or a mapping ``{partition_key: value}`` that
loads lazily (``io.LazyPartitions``), and the output must be the bare value or a dict
keyed by partition. These helpers hide the difference, so an asset body is a loop
over documents that holds one upstream document at a time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import dagster as dg

T = TypeVar("T")

# Documents per run of a backfill: models load once per run; the run holds at most this
# many documents' outputs of one stage in memory.
MAX_PARTITIONS_PER_RUN = int(os.environ.get("EVIDENCE_BACKFILL_BATCH", "8"))
BACKFILL_POLICY = dg.BackfillPolicy.multi_run(max_partitions_per_run=MAX_PARTITIONS_PER_RUN)


def partition_keys(context: dg.AssetExecutionContext) -> list[str]:
    """The run's partition keys. For a key range Dagster reads every dynamic partition from the
    instance to resolve it (100,000 keys at scale): a step asks once and passes the list on."""
    return list(context.partition_keys)


def by_partition(keys: list[str], value: Any) -> Mapping[str, Any]:
    """An upstream input as ``{partition_key: value}`` whatever the run covers."""
    return {keys[0]: value} if len(keys) == 1 else value


def each(context: dg.AssetExecutionContext, *inputs: Any, keys: list[str] | None = None) -> Iterator[tuple[str, tuple]]:
    """(key, (input values...)) per partition of the run, loading one document at a time."""
    keys = partition_keys(context) if keys is None else keys
    maps = [by_partition(keys, value) for value in inputs]
    for key in keys:
        yield key, tuple(m[key] for m in maps)


def output(keys: list[str], values: dict[str, T]) -> T | dict[str, T]:
    """The bare value for a one-partition run, else the dict the IO manager writes per partition."""
    return values[keys[0]] if len(keys) == 1 else values


def record_metadata(context: dg.AssetExecutionContext, keys: list[str], key: str, metadata: Mapping[str, Any]) -> None:
    """Metadata of one partition's materialization. A one-partition run attaches it to the
    output (which also works when a test calls the asset directly with
    ``build_asset_context``); a batch names the partition."""
    if len(keys) == 1:
        context.add_output_metadata(dict(metadata))
        return
    if key not in keys:
        raise dg.DagsterInvariantViolationError(f"metadata for partition {key!r}, which this run does not cover")
    _add_partition_metadata(context, key, metadata)


def _add_partition_metadata(context: dg.AssetExecutionContext, key: str, metadata: Mapping[str, Any]) -> None:
    """What ``context.add_asset_metadata(metadata, partition_key=key)`` records, without its check.

    Dagster 1.13 checks the key by resolving the run's key range, and for a dynamic
    partitions definition that reads every registered key from the instance: 100,000 keys,
    once per document and step, which made a 25-document run spend most of its time
    there. The caller has checked ``key`` against the run's keys (read once per step), so
    the metadata goes straight to the step's accumulator, the one the public call fills
    and the materialization events read. Where a Dagster version has no such accumulator,
    the public call does it (slower, same result).
    """
    step = getattr(context.op_execution_context, "_step_execution_context", None)
    accumulator = getattr(step, "_metadata_accumulator", None)
    if accumulator is None or not hasattr(accumulator, "with_additional_asset_metadata"):
        context.add_asset_metadata(dict(metadata), partition_key=key)
        return
    step._metadata_accumulator = accumulator.with_additional_asset_metadata(
        asset_key=context.assets_def.key, partition_key=key, metadata=dict(metadata)
    )


def run_batched(
    context: dg.AssetExecutionContext,
    inputs: tuple,
    compute: Callable[..., tuple[T, Mapping[str, Any]]],
    *,
    keyed: bool = False,
) -> T | dict[str, T]:
    """Apply ``compute(*values) -> (value, metadata)`` to each partition of the run
    (``compute(key, *values)`` when ``keyed``).

    Metadata is recorded per partition (the sensor and the schedule read it back). A
    ``dg.Failure`` of one document is collected and the others still computed, so a
    batch reports every failing file at once; the batch then fails as a whole, because
    a step cannot materialize only part of its partitions.
    """
    keys = partition_keys(context)
    values: dict[str, T] = {}
    failures: list[str] = []
    for key, args in each(context, *inputs, keys=keys):
        try:
            value, metadata = compute(key, *args) if keyed else compute(*args)
        except dg.Failure as exc:
            if len(keys) == 1:
                raise
            context.log.error(f"partition {key!r}: {exc.description}")
            failures.append(f"{key}: {exc.description}")
            continue
        record_metadata(context, keys, key, metadata)
        values[key] = value
    if failures:
        raise dg.Failure(
            description=f"{len(failures)} of {len(keys)} documents failed: " + "; ".join(failures),
            metadata={"failed": dg.MetadataValue.md("\n".join(f"- {f}" for f in failures))},
        )
    return output(keys, values)
