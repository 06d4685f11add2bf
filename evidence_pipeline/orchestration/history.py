"""What the instance remembers about each document: metadata of its latest materializations."""

from __future__ import annotations

from typing import Any, Iterable

import dagster as dg


def latest_metadata(instance: dg.DagsterInstance, asset: str, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """partition key -> plain metadata values of the asset's latest materialization of it.

    Keys never materialized are absent. One query per key; callers ask only about
    keys they cannot settle from their cursor.
    """
    found: dict[str, dict[str, Any]] = {}
    for key in keys:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[key]), limit=1
        ).records
        if records and records[0].asset_materialization is not None:
            found[key] = {k: v.value for k, v in records[0].asset_materialization.metadata.items()}
    return found
