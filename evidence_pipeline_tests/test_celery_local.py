"""The local Celery pieces start and leave nothing behind (``tools.celery_local``)."""

import socket
import subprocess
import sys
import time

import pytest

from evidence_pipeline.tools.celery_local import _group_alive, redis_server, redis_server_binary, stop_group


@pytest.mark.skipif(redis_server_binary() is None, reason="redis-server not installed (Debian package redis-server)")
def test_redis_answers_inside_the_block_and_is_gone_after(tmp_path):
    with redis_server(tmp_path) as url:
        host, port = url.removeprefix("redis://").split("/")[0].split(":")
        with socket.create_connection((host, int(port)), timeout=2) as s:
            s.sendall(b"SET k v\r\nGET k\r\n")
            assert s.recv(64).startswith(b"+OK\r\n")
    with pytest.raises(OSError):
        socket.create_connection((host, int(port)), timeout=0.5).close()
    assert not (tmp_path / "dump.rdb").exists()  # --save '': nothing written to disk


def test_stop_group_ends_the_children_a_process_started(tmp_path):
    """A parent whose child ignores SIGTERM: the parent ends at once, the child is killed after the grace period."""
    ready = tmp_path / "ready"
    child = f"import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); open({str(ready)!r}, 'w').close(); time.sleep(60)"
    parent = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {child!r}]); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", parent], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready.exists()
        started = time.monotonic()
        stop_group(proc, grace_s=1.0)
        assert not _group_alive(proc.pid)
        assert time.monotonic() - started >= 1.0  # the child outlived SIGTERM until SIGKILL
    finally:
        if _group_alive(proc.pid):
            stop_group(proc, grace_s=0)
