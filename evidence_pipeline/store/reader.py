"""Searches keep the embedded store open between calls: one open per store and process,
handed over as soon as another opener queues for the store.

Opening a Qdrant Edge shard costs several hybrid queries, so ``reading_store`` keeps the shard
the last read opened, with the store's lock, for the next read in this process. An open shard
holds an exclusive ``flock`` on its WAL even idle (``test_store_reader.py``), so a kept shard is:

- never stale or torn: while it is kept this process holds the store's lock (``store/lock.py``),
  so a write happens only after it is closed, and the next read loads it as the writer left it;
- never in a writer's way: a watcher thread checks every ``WATCH_INTERVAL_S`` whether anyone
  queues (``lock.queue_is_waiting``) and closes the shard once the read in flight is done; a
  later read queues behind the writer like any opener, so a search loop cannot starve it;
- loaded again when the store folder or lock file was replaced (its inode changed), and closed
  before ``os.fork`` (a child would keep the WAL's lock alive after the parent let go).

Only reads go through here; writers use ``open_store``. Do not call ``open_store`` inside a
``reading_store`` block of the same store in the same thread: the shard in use cannot be handed
over, so the inner open waits for its timeout. At most ``MAX_KEPT`` stores stay open per
process; the least recently read is closed.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store.edge import EdgeStore
from evidence_pipeline.store.lock import lock_path_for, queue_is_waiting

log = logging.getLogger(__name__)

WATCH_INTERVAL_S = 0.02
MAX_KEPT = 4
# A fork waits this long for a read in flight in another thread, then forks without closing
# that store (the child then shares the shard's files and locks until it exits or execs).
_FORK_WAIT_S = 5.0

Identity = tuple[tuple[int, int], tuple[int, int] | None]


def _identity(path: Path) -> Identity | None:
    """(device, inode) of the store folder and of its lock file; None when either is gone."""
    try:
        folder, lock = os.stat(path), os.stat(lock_path_for(path))
    except OSError:
        return None
    return (folder.st_dev, folder.st_ino), (lock.st_dev, lock.st_ino)


class _Kept:
    """One kept shard: the open store, what it was opened as, and its watcher's signals."""

    def __init__(self, store: EdgeStore, identity: Identity):
        self.store = store
        self.identity = identity
        self.asked = threading.Event()  # someone queues for the store: let go
        self.stop = threading.Event()  # the shard was closed: the watcher ends


class KeptStore:
    """The store at one path, kept open by this process between reads."""

    def __init__(self, path: Path):
        self.path = path
        self._mutex = threading.Lock()
        self._kept: _Kept | None = None
        self._retired = False  # evicted or closed for good: reads open and close each time
        self.opens = 0  # shards loaded by reads of this store (tests and the benchmark read it)

    @property
    def is_kept(self) -> bool:
        return self._kept is not None

    @contextmanager
    def reading(self, settings: StoreSettings) -> Iterator[EdgeStore]:
        """The kept store, opened (queuing for the lock like any opener) when there is none,
        when someone queued since the last read, or when the folder was replaced."""
        with self._mutex:
            kept = self._kept
            if kept is not None and (kept.asked.is_set() or _identity(self.path) != kept.identity):
                self._drop()
            kept = self._kept
            if kept is None:
                store = EdgeStore(settings)
                self.opens += store.is_open
                if not store.is_open or self._retired:  # no shard yet (nothing locked), or keeping nothing
                    try:
                        yield store
                    finally:
                        store.close()
                    return
                kept = self._keep(store)
            try:
                yield kept.store
            except BaseException:
                self._drop()  # whatever went wrong, the next read starts from a fresh load
                raise

    def _keep(self, store: EdgeStore) -> _Kept:
        try:
            folder = os.stat(self.path)
        except OSError:
            store.close()
            raise
        kept = self._kept = _Kept(store, ((folder.st_dev, folder.st_ino), store.lock_identity))
        threading.Thread(target=self._watch, args=(kept,), name=f"store-reader {self.path.name}", daemon=True).start()
        return kept

    def _watch(self, kept: _Kept) -> None:
        while not kept.stop.wait(WATCH_INTERVAL_S):
            if queue_is_waiting(self.path):
                kept.asked.set()  # a read that comes first lets go itself
                with self._mutex:  # after the read in flight
                    if self._kept is kept:
                        self._drop()
                return

    def _drop(self) -> None:
        """Close the kept shard and let go of the lock (the mutex is held)."""
        kept, self._kept = self._kept, None
        if kept is None:
            return
        kept.stop.set()
        try:
            kept.store.close()
        except Exception as exc:  # the lock is released anyway (EdgeStore.close); the next read reloads
            log.warning("%s: closing the kept store failed: %s", self.path, exc)

    def close(self, timeout_s: float = -1, retire: bool = False) -> bool:
        """Close the kept shard after the read in flight (waiting at most ``timeout_s``; -1:
        no bound). ``retire``: keep nothing from now on. False when the wait timed out."""
        if not self._mutex.acquire(timeout=timeout_s):
            return False
        try:
            self._retired = self._retired or retire
            self._drop()
        finally:
            self._mutex.release()
        return True


class KeptStores:
    """The kept stores of this process, by resolved path, at most ``limit`` open."""

    def __init__(self, limit: int = MAX_KEPT):
        self.limit = limit
        self._lock = threading.Lock()
        self._stores: OrderedDict[Path, KeptStore] = OrderedDict()

    def get(self, path: Path) -> KeptStore:
        with self._lock:
            kept = self._stores.pop(path, None) or KeptStore(path)
            self._stores[path] = kept  # most recently read last
            evicted = [self._stores.popitem(last=False)[1] for _ in range(len(self._stores) - self.limit)]
        for old in evicted:
            old.close(retire=True)
        return kept

    def close_all(self, timeout_s: float = -1) -> None:
        with self._lock:
            stores = list(self._stores.values())
        for kept in stores:
            if not kept.close(timeout_s):
                log.warning("%s: a read still runs; the kept store stays open", kept.path)


KEPT = KeptStores()


@contextmanager
def reading_store(settings: StoreSettings) -> Iterator[EdgeStore]:
    """The Edge store at ``settings.path`` for reading, kept open for the next read."""
    with KEPT.get(Path(settings.path).resolve()).reading(settings) as store:
        yield store


def let_go(settings: StoreSettings) -> None:
    """Close this process's kept open of the store at ``settings.path``, if any (after the
    read in flight); the next read opens it again."""
    KEPT.get(Path(settings.path).resolve()).close()


def _reset_in_child() -> None:
    global KEPT
    KEPT = KeptStores()  # the parent's locks may have been held by its other threads


atexit.register(lambda: KEPT.close_all(1.0))
os.register_at_fork(before=lambda: KEPT.close_all(_FORK_WAIT_S), after_in_child=_reset_in_child)
