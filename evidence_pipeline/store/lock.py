"""One process at a time on an embedded store; the others wait, for a bounded time.

Qdrant Edge locks a shard's WAL while a process has it open, and a second opener
fails at once (``WouldBlock``). So that a search and an ingest in two processes take
turns instead of failing, every opener first takes an exclusive lock on a file beside
the shard (``<store>.lock``) and keeps it until Edge is closed.

Why an OS file lock (``flock``) and not retries of Edge's own load:

- the kernel releases it when its holder exits or dies, kill -9 included: there is
  never a stale lock to clean up;
- an attempt is one system call; a failed Edge load costs ~80 ms of opening segments
  of a store that another process is writing (measured);
- it also covers creating the store: "is there a shard? no: create one" is one
  critical section, so two first writers cannot both create;
- the holder writes its pid and command into the file, so a waiter that gives up can
  say what holds the store.

``flock`` cannot block with a timeout (only a signal interrupts the wait, and signals
reach only the main thread: Dagster evaluates sensors in threads), so a waiter polls
with ``LOCK_NB``, every 5 ms at first and at most every 50 ms: it gets the store at
most ~50 ms after the holder lets go. Waiters are not served in arrival order.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from evidence_pipeline.errors import StoreError

_FIRST_POLL_S = 0.005
_MAX_POLL_S = 0.05


def lock_path_for(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".lock")


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
        """Take the lock, waiting up to ``timeout_s`` seconds (0: one attempt); else ``StoreError``."""
        if self._fd is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the store's lock file ({exc.strerror})") from exc
        deadline = time.monotonic() + timeout_s
        pause = _FIRST_POLL_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    holder = self.holder()
                    os.close(fd)
                    raise StoreError(busy_message(self.store_path, timeout_s, holder)) from None
                time.sleep(min(pause, left))
                pause = min(pause * 2, _MAX_POLL_S)
            except OSError as exc:
                os.close(fd)
                raise StoreError(f"{self.path}: cannot lock the store ({exc.strerror})") from exc
        self._fd = fd
        self._describe_holder()

    def _describe_holder(self) -> None:
        """Write who holds the lock into the file, for the message of a waiter that gives up."""
        command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:160]
        since = datetime.now(timezone.utc).strftime("%H:%M:%S UTC")
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, f"pid {os.getpid()}: {command or 'python'}, since {since}".encode(), 0)
        except OSError:
            pass  # only the message of a waiter loses detail

    def holder(self) -> str:
        try:
            text = self.path.read_text(errors="replace").strip()
        except OSError:
            text = ""
        return text or "holder unknown"

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock

    def __enter__(self) -> "StoreLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
