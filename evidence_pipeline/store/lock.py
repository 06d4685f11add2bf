"""One process at a time on an embedded store; the others wait, for a bounded time.

Qdrant Edge locks a shard's WAL while a process has it open, and a second opener fails at once
(``WouldBlock``). So that processes take turns instead of failing, every opener first takes an
exclusive ``flock`` on a file beside the shard (``<store>.lock``) and keeps it until Edge is
closed. An OS file lock because the kernel releases it when its holder exits or dies (never a
stale lock to clean up); an attempt is one system call, where a failed Edge load opens segments;
"is there a shard? no: create one" is one critical section; and the holder writes its pid and
command into the file, so that a waiter that gives up can say what holds the store.

Turns: a waiter first takes ``<store>.next.lock`` and keeps it until it holds the store, so a
process that releases the store and asks again at once queues behind it; two processes alternate,
among more the order beyond the next one is not first come, first served. ``flock`` cannot block
with a timeout (signals reach only the main thread, and Dagster evaluates sensors in threads), so
a waiter polls with ``LOCK_NB`` (``_FIRST_POLL_S``, backing off to ``_MAX_POLL_S``).

A reader that keeps the store open between searches (``store/reader.py``) holds the lock while
idle and lets go as soon as anyone queues (``queue_is_waiting``); every opener, even one told not
to wait (timeout 0: the sensor, the schedule), waits at least ``HANDOVER_S`` for its turn.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from evidence_pipeline.errors import StoreError

_FIRST_POLL_S = 0.005
_MAX_POLL_S = 0.025
# The least an opener waits, whatever its timeout: long enough for an idle reader in another
# process to notice the queue (``reader.WATCH_INTERVAL_S``) and close its shard on a busy machine.
HANDOVER_S = 1.0


def lock_path_for(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".lock")


def next_lock_path_for(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".next.lock")


def busy_message(store_path: Path, timeout_s: float, holder: str) -> str:
    """The one line a process prints when it gave up waiting for the store."""
    return (
        f"{store_path}: another process holds the embedded store ({holder}) for more than {timeout_s:g} s; "
        "use a Qdrant server (QDRANT_URL) for concurrent readers and writers, "
        "or wait longer (EVIDENCE_STORE_LOCK_TIMEOUT_S)"
    )


class StoreLock:
    """The exclusive lock of the store at ``store_path``, held from ``acquire`` to ``release``."""

    def __init__(self, store_path: Path):
        self.store_path = store_path
        self.path = lock_path_for(store_path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, timeout_s: float) -> None:
        """Take the lock, waiting up to ``timeout_s`` seconds (at least ``HANDOVER_S``); else ``StoreError``."""
        if self._fd is not None:
            return
        deadline = time.monotonic() + max(timeout_s, HANDOVER_S)
        next_fd = self._open(next_lock_path_for(self.store_path))
        store_fd: int | None = None
        try:
            store_fd = self._open(self.path)
            # In line first, then the store: one who comes back for it queues behind us.
            if not (_wait(next_fd, deadline) and _wait(store_fd, deadline)):
                raise StoreError(busy_message(self.store_path, timeout_s, self.holder()))
            self._fd, store_fd = store_fd, None
            self._describe_holder(self._fd)
        finally:
            for fd in (next_fd, store_fd):
                if fd is not None:
                    os.close(fd)  # closing a descriptor releases its flock

    def _open(self, path: Path) -> int:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"{path}: cannot create the store's lock file ({exc.strerror})") from exc

    def _describe_holder(self, fd: int) -> None:
        """Write who holds the lock into the file, for the message of a waiter that gives up."""
        command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:160]
        since = datetime.now(UTC).strftime("%H:%M:%S UTC")
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}: {command or 'python'}, since {since}".encode(), 0)
        except OSError:
            pass  # only the message of a waiter loses detail

    def holder(self) -> str:
        try:
            text = self.path.read_text(errors="replace").strip()
        except OSError:
            text = ""
        return text or "holder unknown"

    def identity(self) -> tuple[int, int] | None:
        """(device, inode) of the lock file this lock holds; None when not held."""
        if self._fd is None:
            return None
        st = os.fstat(self._fd)
        return st.st_dev, st.st_ino

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock

    def __enter__(self) -> StoreLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def queue_is_waiting(store_path: Path) -> bool:
    """True while another opener queues for the store (holds ``<store>.next.lock``), in this
    process or another. For the holder of the store: someone wants it."""
    try:
        fd = os.open(next_lock_path_for(store_path), os.O_RDWR)
    except OSError:
        return False  # no queue file: nobody has ever queued (an opener creates it first)
    try:
        if not _try_lock(fd):
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _wait(fd: int, deadline: float) -> bool:
    """Poll for the lock on ``fd`` until ``deadline`` (``time.monotonic``); True once held."""
    pause = _FIRST_POLL_S
    while not _try_lock(fd):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(pause * 2, _MAX_POLL_S)
    return True
