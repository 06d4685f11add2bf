"""Latency of the search service's ``/search`` over real HTTP, on the sample corpus.

The documents are in an Edge store (``search_latency.sample_store``), the app (``service.app.create_app``) runs
under uvicorn in a thread of this process on a free local port, and one keep-alive HTTP
connection sends the questions one after another. A request's time covers the whole
path an application sees: HTTP, query embedding, the hybrid query on the store (kept open
between requests), JSON. The report also gives the p50 of the query embedding alone and of
opening and closing the store alone, measured right after in the same process.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from urllib.parse import urlencode

from evidence_pipeline.benchmark.timing import load_1min, percentile
from evidence_pipeline.embedding import Embedder
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings


def available() -> str | None:
    """None when the ``serve`` extra is installed, else why the figure is skipped."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        return f"the serve extra is not installed ({exc.name})"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    """One keep-alive HTTP connection to the service; ``ask`` returns /search's hits."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def ask(self, q: str, k: int = 5) -> list:
        self.conn.request("GET", "/search?" + urlencode({"q": q, "k": k}))
        response = self.conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"/search answered {response.status}: {body[:300]!r}")
        return json.loads(body)

    def close(self) -> None:
        self.conn.close()


@contextmanager
def running_service(store: StoreSettings, embedder: Embedder) -> Iterator[Client]:
    """The app on ``store`` under uvicorn in a thread of this process, on a free local port,
    with 1 torch thread as ``evidence-pipeline serve`` runs; a client connected to it."""
    import uvicorn

    from evidence_pipeline.service.app import create_app, query_threads

    app = create_app(store=store, embedding=EmbeddingSettings(model=embedder.settings.model), api_key="")
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name="bench-service", daemon=True)
    previous = query_threads(1)
    thread.start()
    client = None
    try:
        deadline = time.monotonic() + 120
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the search service did not start")
            time.sleep(0.05)
        client = Client(port)
        yield client
    finally:
        if client is not None:
            client.close()
        server.should_exit = True
        thread.join(timeout=30)
        query_threads(previous)


def service_latency(store: StoreSettings, documents: int, embedder: Embedder, queries: Sequence[str], n_queries: int) -> dict:
    """/search over HTTP on ``store`` (``documents`` sample documents), one request at a time."""
    from evidence_pipeline.store import open_store
    from evidence_pipeline.store.reader import let_go

    with open_store(store) as st:
        points = st.count()
    with running_service(store, embedder) as client:
        for q in queries[:2]:  # warm-up
            client.ask(q)
        load = load_1min()
        times = []
        for i in range(n_queries):
            start = time.perf_counter()
            hits = client.ask(queries[i % len(queries)])
            times.append((time.perf_counter() - start) * 1000)
            if not hits:
                raise RuntimeError(f"no hits for {queries[i % len(queries)]!r}")
        # Where a request's time goes: the query embedding and the store's open + close (what
        # a search pays with ``keep_open=False``), with the service's 1 thread.
        let_go(store)
        embed_ms, open_ms = [], []
        for i in range(min(n_queries, 20)):
            start = time.perf_counter()
            embedder.embed_query(queries[i % len(queries)])
            embed_ms.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            with open_store(store) as st:
                st.count()
            open_ms.append((time.perf_counter() - start) * 1000)
    return {
        "documents": documents,
        "points": points,
        "queries": n_queries,
        "p50_ms": percentile(times, 50),
        "p95_ms": percentile(times, 95),
        "load": load,
        "embed_p50_ms": percentile(embed_ms, 50),
        "store_open_close_p50_ms": percentile(open_ms, 50),
    }
