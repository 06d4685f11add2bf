"""Parse documents in a long-lived worker process, with a time and a memory limit per document.

Why a separate process: a PDF library that crashes natively (segfault, abort), a runaway
allocation or a conversion that never ends would otherwise take the whole run down with it. Here
it kills the worker, that one document fails with a one-line reason, and the next document
starts a fresh worker. Docling and its converter load once per worker, not once per document;
the page limit and the other up-front checks run inside the worker too (``DoclingParser.parse``),
so even a file that crashes the PDF library while it is being counted fails alone.

Why "spawn": Docling runs native thread pools (torch, docling-parse), and a fork of a process
with running threads can inherit a lock held by a thread that no longer exists. As with any
"spawn" start, a script that parses through the worker needs the ``if __name__ == "__main__":``
guard (the worker re-imports the script's module); the console scripts, pytest and Dagster have it.

The memory limit is on the worker's resident memory, read from /proc every ``_POLL_S`` while a
document is parsed (no limit where there is no /proc). A worker that is still above the limit
when idle is replaced before the next document.

The caller's process never imports Docling: the worker returns the ``ParsedDoc`` as JSON.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
import weakref
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from evidence_pipeline.errors import ParseError
from evidence_pipeline.parser.docling_parser import DoclingParser
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.settings import ParserSettings
from evidence_pipeline.work import CLOCK, WORK

START_TIMEOUT_S = 300.0  # importing Docling and building the converter, on a busy machine
_POLL_S = 0.05


class _Stop(Exception):
    """The worker was stopped; ``reason`` says why (a limit, a crash)."""

    def __init__(self, reason: str):
        self.reason = reason


def _serve(conn, settings_json: str) -> None:
    """The worker's loop: build the converter once, then parse one request at a time."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    # A parent that ignores SIGTERM passes that on through exec (Dagster maps SIGTERM to the SIGINT
    # handler, which a shell ignores in a background job): the worker must still end when stopped,
    # or the interpreter's exit waits on it for ever.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        from docling.datamodel.base_models import InputFormat

        parser = DoclingParser(ParserSettings.model_validate_json(settings_json))
        parser.converter.initialize_pipeline(InputFormat.PDF)
    except BaseException as exc:  # report, so the parent can name the cause
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        path, doc_id, pages = request
        try:
            # the work counts and the stages' CPU seconds travel back with the document
            with WORK.delta() as counts, CLOCK.delta() as seconds:
                text = parser.parse(Path(path), doc_id=doc_id, pages=pages).model_dump_json()
            reply: tuple[Any, ...] = ("ok", text, counts, seconds)
        except ParseError as exc:
            reply = ("error", exc.reason)
        except MemoryError:
            reply = ("error", "ran out of memory while parsing")
        except Exception as exc:  # DoclingParser wraps what it expects; name anything else
            reply = ("error", f"unexpected {type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):  # the parent died mid-parse
            return


def _rss_mb(pid: int | None) -> float | None:
    """Resident memory of a process, from /proc (None where there is no /proc or no process yet)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return None


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = "; out of memory?" if -exitcode == signal.SIGKILL else ""
        return f"parser process died ({name}{hint})"
    return f"parser process exited unexpectedly (exit code {exitcode})"


def _stop(process, conn) -> None:
    """End the worker and reap it (no zombie stays). It holds nothing worth a clean shutdown,
    and unloading Docling takes seconds, so it is terminated rather than asked to leave."""
    if process.is_alive():
        process.terminate()
        process.join(2)
    if process.is_alive():
        process.kill()
        process.join(5)
    conn.close()


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, settings: ParserSettings):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, settings.model_dump_json()), name="evidence-parser", daemon=True)
        self.process.start()
        child.close()
        # Runs on close(), on garbage collection and at interpreter exit, whichever comes first.
        self._finalizer = weakref.finalize(self, _stop, self.process, self.conn)

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def rss_mb(self) -> float | None:
        return _rss_mb(self.process.pid) if self.process.is_alive() else None

    def wait(self, seconds: float, max_mb: int, what: str):
        """The worker's next message, or ``_Stop`` when it dies or passes a limit (the caller kills it then)."""
        deadline = time.monotonic() + seconds
        while True:
            if self.conn.poll(_POLL_S):
                try:
                    return self.conn.recv()
                except (EOFError, OSError):
                    self.process.join(5)
                    raise _Stop(_death(self.process.exitcode)) from None
            if not self.process.is_alive():
                if self.conn.poll(0):
                    continue
                raise _Stop(_death(self.process.exitcode))
            rss = _rss_mb(self.process.pid)
            if rss is not None and rss > max_mb:
                raise _Stop(f"{what} exceeded the {max_mb} MB memory limit (worker at {rss:.0f} MB)")
            if time.monotonic() > deadline:
                raise _Stop(f"{what} exceeded the {seconds:g} s time limit")

    def close(self) -> None:
        self._finalizer()


def _ahead_key(path: Path, doc_id: str | None) -> tuple | None:
    """A document as the read-ahead knows it: the file (and its size and change time) and its id."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (str(path.resolve()), doc_id, st.st_size, st.st_mtime_ns)


class ReadAhead:
    """Parses the planned documents ahead of the caller, in the plan's order, one at a time, on a
    thread that waits on the worker's pipe (the parsing itself runs in the worker process); at
    most ``depth`` parsed documents wait to be taken. The first starts as soon as there is a
    plan, so the worker's start-up and the first parse overlap whatever the caller does first."""

    def __init__(self, depth: int = 2) -> None:
        self.depth = depth
        self._lock = threading.Lock()
        self._upcoming: list[tuple] = []
        self._next = 0  # position in the plan of the next document to parse ahead
        self._ready: dict[tuple, Future] = {}  # parsed or being parsed, not taken yet
        self._running = False
        self._parse_now = None

    def plan(self, keys: list[tuple | None], parse_now=None) -> None:
        """Read ahead ``keys`` with ``parse_now(path, doc_id, pages)``; ``[]`` ends the read-ahead.
        Unclaimed results of an earlier plan are dropped (a running parse just ends)."""
        with self._lock:
            self._upcoming = [k for k in keys if k is not None]
            self._next = 0
            self._ready = {}
            self._parse_now = parse_now if self._upcoming else None
        self._kick()

    def take(self, key: tuple | None) -> Future | None:
        """The read-ahead parse of ``key`` (done or running), or None: the caller parses it itself
        (not planned, changed since, or not reached yet, which the read-ahead then skips)."""
        if key is None:
            return None
        with self._lock:
            future = self._ready.pop(key, None)
            if key in self._upcoming:
                i = self._upcoming.index(key)
                self._next = max(self._next, i + 1)
                for skipped in self._upcoming[:i]:  # asked past them: nobody takes them now
                    self._ready.pop(skipped, None)
        self._kick()
        return future

    def _kick(self) -> None:
        with self._lock:
            if self._running or self._parse_now is None or self._next >= len(self._upcoming) or len(self._ready) >= self.depth:
                return
            key = self._upcoming[self._next]
            self._next += 1
            future: Future = Future()
            self._ready[key] = future
            self._running = True
            parse_now = self._parse_now

        def run() -> None:
            try:
                future.set_result(parse_now(Path(key[0]), key[1], None))
            except BaseException as exc:  # noqa: BLE001 (handed to the caller that takes it)
                future.set_exception(exc)
            finally:
                with self._lock:
                    self._running = False
            self._kick()

        threading.Thread(target=run, name="evidence-parse-ahead", daemon=True).start()


class WorkerParser:
    """``DoclingParser`` behind a process boundary: same ``name``, same ``parse``; limits from settings.

    One worker serves every document (one at a time) until it crashes or passes a limit. Use as a
    context manager or call ``close()``; a worker still running at interpreter exit is stopped then.
    """

    def __init__(self, settings: ParserSettings | None = None):
        self.settings = settings if settings is not None else ParserSettings()
        self.name = DoclingParser(self.settings).name  # cheap: no converter is built here
        self._worker: _Worker | None = None
        self._spawned: _Worker | None = None  # started by ``prestart``, not known to be ready yet
        self._lock = threading.Lock()
        self._read_ahead = ReadAhead()

    @property
    def pid(self) -> int | None:
        """Process id of the current worker (None before the first document)."""
        worker = self._worker
        return worker.pid if worker is not None and worker.process.is_alive() else None

    def start(self) -> None:
        """Start the worker now rather than on the first document (it loads Docling)."""
        with self._lock:
            self._ready_worker("(parser worker start)")

    def prestart(self) -> None:
        """Start the worker process now and return at once: it loads Docling while the caller
        does other things; the first ``parse`` waits for it to be ready."""
        with self._lock:
            if self._worker is None and self._spawned is None:
                self._spawned = _Worker(self.settings)

    def busy(self) -> bool:
        """Whether the worker is parsing (for the caller's parse or ahead of it) right now."""
        return self._lock.locked()

    def parse(self, path: Path, doc_id: str | None = None, pages: tuple[int, int] | None = None) -> ParsedDoc:
        path = Path(path)
        DoclingParser._check(path)  # a missing or unsupported file needs no worker
        key = _ahead_key(path, doc_id) if pages is None else None
        ahead = self._read_ahead.take(key)
        reply = ahead.result() if ahead is not None else self._parse_now(path, doc_id, pages)
        if reply[0] == "ok":
            WORK.add(reply[2])
            CLOCK.add(reply[3])
            return ParsedDoc.model_validate_json(reply[1])
        raise ParseError(str(path), reply[1])

    def read_ahead(self, upcoming: list[tuple[Path, str | None]]) -> None:
        """The documents the caller will ask for, in order: the worker parses them ahead, the
        first at once, then each next while the caller works on the ones before it (embedding),
        so that parsing and embedding use the cores together. A document whose file changed
        meanwhile, or that is asked for out of order, is parsed again as usual. ``[]`` ends the
        read-ahead."""
        self._read_ahead.plan([_ahead_key(Path(p), d) for p, d in upcoming], self._parse_now)

    def _parse_now(self, path: Path, doc_id: str | None, pages: tuple[int, int] | None) -> tuple:
        with self._lock:
            worker = self._ready_worker(str(path))
            worker.conn.send((str(path), doc_id, pages))
            try:
                return worker.wait(self.settings.timeout_s, self.settings.max_memory_mb, "parse")
            except _Stop as stop:
                worker.close()
                self._worker = None
                return ("error", stop.reason)

    def _ready_worker(self, path: str) -> _Worker:
        worker = self._worker
        if worker is not None:
            rss = worker.rss_mb()
            if worker.process.is_alive() and (rss is None or rss <= self.settings.max_memory_mb):
                return worker
            worker.close()  # died while idle, or grew past the limit: start afresh
            self._worker = None
        worker, self._spawned = self._spawned or _Worker(self.settings), None
        try:
            reply = worker.wait(START_TIMEOUT_S, self.settings.max_memory_mb, "parser start-up (loading Docling)")
        except _Stop as stop:
            worker.close()
            raise ParseError(path, stop.reason) from None
        if reply[0] != "ready":
            worker.close()
            raise ParseError(path, f"the parser process could not start: {reply[1]}")
        self._worker = worker
        return worker

    def close(self) -> None:
        self._read_ahead.plan([])
        with self._lock:
            for worker in (self._worker, self._spawned):
                if worker is not None:
                    worker.close()
            self._worker = self._spawned = None

    def __enter__(self) -> WorkerParser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
