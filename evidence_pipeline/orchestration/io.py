"""The IO manager of the document assets: one pickle per asset and partition, batches included.

Dagster's default filesystem IO manager refuses an output that covers several
partitions, which is what a batched backfill run (``BackfillPolicy.multi_run``)
produces. This one lays files out as that IO manager does (``<base>/<asset key>/<partition
key>``, pickled) and adds two things:

- an output of a run over several partitions is a dict ``{partition_key: value}`` and
  is written as one file per partition, at the path a single-partition run uses, so
  batched and single runs read each other's outputs;
- an input over several partitions is a read-only mapping that unpickles a partition
  only when it is read, so a batch step holds one upstream document at a time.

It is built on Dagster's public ``IOManager`` alone (no private base class).
The base directory is the instance's storage folder unless ``base_dir`` is set; any
fsspec URL works there (e.g. ``s3://bucket/evidence-io`` with s3fs installed), which is
what runs on separate machines need.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
from upath import UPath  # universal-pathlib: a dependency of dagster, what its own IO managers use


def partition_path(asset_dir: UPath, key: str) -> UPath:
    """The file of one partition. As Dagster's own IO manager does, a leading ``/`` and
    ``..`` segments are escaped so that no key can write outside ``asset_dir``."""
    safe = "%2F" + key[1:] if key.startswith("/") else key
    safe = "/".join("%2E%2E" if part == ".." else part for part in safe.split("/"))
    return asset_dir / safe


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


class PartitionedPickleIOManager(dg.IOManager):
    def __init__(self, base_dir: str):
        self.base = UPath(base_dir)

    # -- paths ---------------------------------------------------------------------

    def _dir(self, context: dg.OutputContext | dg.InputContext) -> UPath:
        if isinstance(context, dg.InputContext):
            if context.has_asset_key:
                return self.base.joinpath(*context.asset_key.path)
            return self.base.joinpath(*context.upstream_output.get_identifier())
        if context.has_asset_key:
            return self.base.joinpath(*context.asset_key.path)
        return self.base.joinpath(*context.get_identifier())

    def _paths(self, context: dg.OutputContext | dg.InputContext) -> dict[str, UPath] | None:
        """partition key -> file; None for an unpartitioned output (one file at ``_dir``)."""
        if not (context.has_asset_key and context.has_asset_partitions):
            return None
        folder = self._dir(context)
        return {key: partition_path(folder, key) for key in context.asset_partition_keys}

    @staticmethod
    def _dump(path: UPath, obj: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as fh:
            pickle.dump(obj, fh, pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def _load(path: UPath) -> Any:
        with path.open("rb") as fh:
            return pickle.load(fh)

    # -- IOManager -----------------------------------------------------------------

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        paths = self._paths(context)
        if paths is None or len(paths) == 1:
            path = self._dir(context) if paths is None else next(iter(paths.values()))
            self._dump(path, obj)
            if obj is not None:
                context.add_output_metadata({"stored_at": dg.MetadataValue.path(str(path))})
            return
        if not isinstance(obj, Mapping) or set(obj) != set(paths):
            raise dg.DagsterInvariantViolationError(
                f"{context.asset_key.to_user_string()}: a run over {len(paths)} partitions must return "
                "a dict with one value per partition key"
            )
        for key, path in paths.items():
            self._dump(path, obj[key])
        context.add_output_metadata({"partitions_written": len(paths)})

    def load_input(self, context: dg.InputContext) -> Any:
        paths = self._paths(context)
        if paths is None:
            return self._load(self._dir(context))
        if not paths:
            return None
        if len(paths) == 1:
            return self._load(next(iter(paths.values())))  # the bare value, as Dagster's own
        return LazyPartitions(list(context.asset_partition_keys), lambda key: self._load(paths[key]))


class DocumentIOManager(dg.ConfigurableIOManagerFactory):
    """Pickles each document's stage outputs, one file per partition (batched runs included)."""

    base_dir: str | None = None

    def create_io_manager(self, context: dg.InitResourceContext) -> PartitionedPickleIOManager:
        base = self.base_dir or context.instance.storage_directory()
        return PartitionedPickleIOManager(base_dir=base)
