"""Vector stores. ``open_store`` picks the backend from the settings and always closes it;
``reading_store`` is for searches: the embedded store stays open for the next one.

Backends are imported lazily so that importing ``evidence_pipeline.store.base``
(the contract) does not load qdrant_edge or qdrant_client.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store.base import Point, ReplaceResult, SparseVector, Store, StoredHit, point_id

__all__ = [
    "Point",
    "ReplaceResult",
    "SparseVector",
    "Store",
    "StoredHit",
    "make_store",
    "open_store",
    "point_id",
    "reading_store",
]


def make_store(settings: StoreSettings) -> Store:
    """The backend for ``settings``, opened: a Qdrant server when ``url`` is set, else Edge."""
    if settings.url:
        from evidence_pipeline.store.server import ServerStore

        return ServerStore(settings)
    from evidence_pipeline.store.edge import EdgeStore

    return EdgeStore(settings)


@contextmanager
def open_store(settings: StoreSettings) -> Iterator[Store]:
    """Open the store for the duration of a ``with`` block, closing it even on error.

    Closing matters for Edge: the shard is locked while open, and the next
    process (another Dagster step, the CLI) can only open it after this one closes.
    """
    store = make_store(settings)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def reading_store(settings: StoreSettings) -> Iterator[Store]:
    """The store for reads only. The embedded store is kept open between reads and handed
    over when another opener queues (``store/reader.py``), unless ``settings.keep_open`` is
    False; a server is opened per call as by ``open_store``."""
    if settings.url or not settings.keep_open:
        with open_store(settings) as store:
            yield store
        return
    from evidence_pipeline.store.reader import reading_store as kept

    with kept(settings) as store:
        yield store
