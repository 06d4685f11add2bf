"""The IO manager of the document assets: one pickle per asset and partition, batches included.

Dagster's default filesystem IO manager refuses an output that covers several
partitions, which is what a batched backfill run (``BackfillPolicy.multi_run``)
produces. This one is that same IO manager with two additions:

- an output of a run over several partitions is a dict ``{partition_key: value}`` and
  is written as one file per partition, at the path a single-partition run would use,
  so batched and single runs read each other's outputs;
- an input over several partitions is a read-only mapping that unpickles a partition
  only when it is read, so a batch step holds one upstream document at a time.

The base directory is the instance's storage folder unless ``base_dir`` is set; any
fsspec URL works there (e.g. ``s3://bucket/evidence-io`` with s3fs installed), which is
what runs on separate machines need.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Optional

import dagster as dg
from dagster._core.storage.fs_io_manager import PickledObjectFilesystemIOManager


class LazyPartitions(Mapping[str, Any]):
    """Upstream partitions, each loaded on access (a batch step holds one at a time)."""

    def __init__(self, keys: list[str], load):
        self._keys = keys
        self._load = load

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(key)
        return self._load(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class PartitionedPickleIOManager(PickledObjectFilesystemIOManager):
    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if not (context.has_asset_partitions and len(context.asset_partition_keys) > 1):
            return super().handle_output(context, obj)
        paths = self._get_paths_for_partitions(context)
        if not isinstance(obj, Mapping) or set(obj) != set(paths):
            raise dg.DagsterInvariantViolationError(
                f"{context.asset_key.to_user_string()}: a run over {len(paths)} partitions must return "
                "a dict with one value per partition key"
            )
        for key, path in paths.items():
            self.make_directory(path.parent)
            self.dump_to_path(context=context, obj=obj[key], path=path)
        context.add_output_metadata({"partitions_written": len(paths)})

    def load_partitions(self, context: dg.InputContext) -> Any:
        if len(context.asset_partition_keys) == 1:
            return super().load_partitions(context)  # the bare value, as Dagster's own
        paths = self._get_paths_for_partitions(context)

        def load(key: str) -> Any:
            return self._load_partition_from_path(context, key, paths[key])

        return LazyPartitions(list(context.asset_partition_keys), load)


class DocumentIOManager(dg.ConfigurableIOManagerFactory):
    """Pickles each document's stage outputs, one file per partition (batched runs included)."""

    base_dir: Optional[str] = None

    def create_io_manager(self, context: dg.InitResourceContext) -> PartitionedPickleIOManager:
        base = self.base_dir or context.instance.storage_directory()
        return PartitionedPickleIOManager(base_dir=base)
