"""A Celery cluster on one machine: a private Redis and Dagster's Celery workers, as processes.

What ``tools.celery_backfill`` runs a backfill against. Each piece is a real server or
worker, started the way a deployment starts it (``redis-server``; ``dagster-celery worker
start``) and stopped when its ``with`` block ends, so nothing outlives the caller:

- Redis listens on 127.0.0.1 on a free port, keeps nothing on disk (``--save ''``), and runs
  in the caller's temporary folder;
- each worker runs its tasks in its own process, one at a time (``--pool solo``): one copy
  of Docling and of the embedding model per worker, loaded by its first step and kept
  between steps (a prefork pool would load them in each of its children, one per core).
  ``task_acks_late`` with a prefetch of one means an idle worker takes the next step
  instead of a busy one reserving it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

READY_TIMEOUT_S = 180.0


class ClusterError(RuntimeError):
    """Redis or a worker did not come up (the message names it and where its log is)."""


def redis_server_binary() -> str | None:
    return shutil.which("redis-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies left for init do not count)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def stop_group(proc: subprocess.Popen, grace_s: float = 15.0) -> None:
    """Stop ``proc`` and everything it started in its process group (``proc`` was started in
    a session of its own): SIGTERM, ``grace_s`` seconds to end, then SIGKILL."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        proc.wait()
        return
    if not _wait_group_gone(proc, grace_s):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _wait_group_gone(proc, 5.0)
    proc.wait()


def _wait_group_gone(proc: subprocess.Popen, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while _group_alive(proc.pid):
        proc.poll()  # reap the leader
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _start_redis(binary: str, workdir: Path, log: Path) -> tuple[subprocess.Popen, int]:
    """redis-server on a free port, answering PING; another port if one was taken meanwhile."""
    for _ in range(3):
        port = free_port()
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", str(workdir), "--daemonize", "no"],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 30
        while proc.poll() is None and not _redis_answers(port):
            if time.monotonic() > deadline:
                stop_group(proc, grace_s=1)
                raise ClusterError(f"redis-server did not answer on port {port} within 30 s (log: {log})")
            time.sleep(0.05)
        if proc.poll() is None:
            return proc, port
    raise ClusterError(f"redis-server exited at start three times (log: {log})")


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """A Redis server on a free localhost port for the length of the block; yields its URL (db 0)."""
    binary = redis_server_binary()
    if binary is None:
        raise ClusterError("redis-server not found on PATH (Debian: apt-get install redis-server)")
    workdir.mkdir(parents=True, exist_ok=True)
    proc, port = _start_redis(binary, workdir, workdir / "redis.log")
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop_group(proc, grace_s=5)


def worker_config() -> dict:
    """The workers' config file (``dagster-celery worker start -y``), as ``deploy/run_config/celery.yaml``:
    broker and result backend from CELERY_BROKER_URL and CELERY_RESULT_BACKEND."""
    return {
        "execution": {
            "config": {
                "broker": {"env": "CELERY_BROKER_URL"},
                "backend": {"env": "CELERY_RESULT_BACKEND"},
                "include": ["evidence_pipeline.orchestration.definitions"],
                "config_source": {"task_acks_late": True, "worker_prefetch_multiplier": 1},
            }
        }
    }


@dataclass
class Worker:
    name: str
    log: Path
    proc: subprocess.Popen


def wait_ready(workers: list[Worker], timeout_s: float = READY_TIMEOUT_S) -> None:
    """Return once every worker consumes from the queue; ``ClusterError`` if one exits or is late."""
    deadline = time.monotonic() + timeout_s
    for worker in workers:
        # Celery prints "<name>@<host> ready." once it consumes from the queue.
        while f"{worker.name}@" not in (text := worker.log.read_text(errors="replace")) or " ready." not in text:
            if worker.proc.poll() is not None:
                raise ClusterError(f"celery worker {worker.name} exited with {worker.proc.returncode} (log: {worker.log})")
            if time.monotonic() > deadline:
                raise ClusterError(f"celery worker {worker.name} not ready after {timeout_s:g} s (log: {worker.log})")
            time.sleep(0.2)


@contextmanager
def celery_workers(count: int, workdir: Path, env: Mapping[str, str]) -> Iterator[list[Worker]]:
    """``count`` Dagster Celery workers, started (``wait_ready`` waits for them: tasks sent
    meanwhile wait in the queue) for the length of the block; logs in ``workdir``.

    ``env`` must hold CELERY_BROKER_URL and CELERY_RESULT_BACKEND, DAGSTER_HOME (the
    instance the runs live in) and whatever the code location reads (EVIDENCE_EXECUTOR,
    the store path, ...)."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "celery_worker.yaml"
    config.write_text(yaml.safe_dump(worker_config(), sort_keys=False))
    cli = Path(sys.executable).with_name("dagster-celery")
    workers: list[Worker] = []
    try:
        for i in range(1, count + 1):
            name = f"worker{i}"
            log = workdir / f"{name}.log"
            with log.open("wb") as out:
                proc = subprocess.Popen(
                    [str(cli), "worker", "start", "-A", "dagster_celery.app", "-n", name, "-y", str(config),
                     "--loglevel", "INFO", "--", "--pool=solo", "--without-mingle", "--without-gossip"],
                    stdout=out, stderr=subprocess.STDOUT, env=dict(env), start_new_session=True,
                )  # fmt: skip
            workers.append(Worker(name, log, proc))
        yield workers
    finally:
        for worker in workers:
            stop_group(worker.proc)
