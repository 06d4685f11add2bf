"""What the instance remembers about each document: metadata of its latest materializations."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import dagster as dg

# Partitions asked about in one query: an SQL IN list that SQLite and Postgres both take.
KEYS_PER_QUERY = 500
RECORDS_PER_PAGE = 1000


def latest_metadata(instance: dg.DagsterInstance, asset: str, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """partition key -> plain metadata values of the asset's latest materialization of it.

    Keys never materialized are absent. Keys are asked about in chunks (one query per
    chunk and page, newest first; the first record seen of a key is its latest), so a
    sensor that must look at 100,000 documents after a cursor reset makes hundreds of
    queries, not 100,000.
    """
    keys = list(dict.fromkeys(keys))
    found: dict[str, dict[str, Any]] = {}
    asset_key = dg.AssetKey(asset)
    for start in range(0, len(keys), KEYS_PER_QUERY):
        chunk = keys[start : start + KEYS_PER_QUERY]
        wanted = set(chunk)
        cursor = None
        while wanted:
            result = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=chunk),
                limit=len(chunk) if len(chunk) == 1 else RECORDS_PER_PAGE,
                cursor=cursor,
                ascending=False,
            )
            for record in result.records:
                mat = record.asset_materialization
                if mat is not None and mat.partition in wanted:
                    found[mat.partition] = {k: v.value for k, v in mat.metadata.items()}
                    wanted.discard(mat.partition)
            if not result.has_more or len(chunk) == 1:
                break
            cursor = result.cursor
    return found
