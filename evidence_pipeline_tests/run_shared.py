"""Work shared by the pytest-xdist workers of one run: a folder each worker finds, made once.

A session fixture runs once per worker; one that ingests or exports for tens of seconds then
runs once per worker for nothing. ``made_once`` hands every worker the same folder, under an
exclusive lock, and says whether an earlier worker of this run has already filled it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def made_once(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[tuple[Path, bool]]:
    """(folder, made): ``name``'s folder of this run, shared by its workers (the session's own
    without xdist), locked for the block; ``made`` is True when a worker has already filled it.
    The block that fills it leaves it marked made only when it ends without an error."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    root.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            done = root.parent / f".{name}.done"  # beside the folder: the folder holds only what was made
            made = done.is_file()
            yield root, made
            if not made:
                done.touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
