"""Latency of the search service's ``/search`` over real HTTP, on the sample corpus.

The documents are ingested into an Edge store, the app (``service.app.create_app``) runs
under uvicorn in a thread of this process on a free local port, and one keep-alive HTTP
connection sends the questions one after another. A request's time covers the whole
path an application sees: HTTP, query embedding, opening the store, the hybrid query,
closing the store, JSON. The report also gives the p50 of the query embedding alone and
of opening and closing the store alone, measured right after in the same process.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from pathlib import Path
from typing import Sequence
from urllib.parse import urlencode

from evidence_pipeline.benchmark.timing import load_1min, percentile
from evidence_pipeline.embedding import Embedder, TokenCounter
from evidence_pipeline.records import ParsedDoc
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


def service_latency(
    docs: Sequence[ParsedDoc], embedder: Embedder, counter: TokenCounter, queries: Sequence[str], n_queries: int, work: Path
) -> dict:
    import uvicorn

    from evidence_pipeline.pipeline import ingest_parsed
    from evidence_pipeline.service.app import create_app, query_threads
    from evidence_pipeline.store import open_store

    store = StoreSettings(path=str(work / "service-store"))
    with open_store(store) as st:
        for doc in docs:
            ingest_parsed(doc, st, embedder, counter)
        points = st.count()
    app = create_app(store=store, embedding=EmbeddingSettings(model=embedder.settings.model), api_key="")
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name="bench-service", daemon=True)
    previous = query_threads(1)  # as `evidence-pipeline serve` runs
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the search service did not start")
            time.sleep(0.05)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

        def ask(q: str) -> list:
            conn.request("GET", "/search?" + urlencode({"q": q, "k": 5}))
            response = conn.getresponse()
            body = response.read()
            if response.status != 200:
                raise RuntimeError(f"/search answered {response.status}: {body[:300]!r}")
            return json.loads(body)

        for q in queries[:2]:  # warm-up
            ask(q)
        load = load_1min()
        times = []
        for i in range(n_queries):
            start = time.perf_counter()
            hits = ask(queries[i % len(queries)])
            times.append((time.perf_counter() - start) * 1000)
            if not hits:
                raise RuntimeError(f"no hits for {queries[i % len(queries)]!r}")
        conn.close()
        # Where a request's time goes: the query embedding and the store's open + close.
        embed_ms, open_ms = [], []
        for i in range(min(n_queries, 20)):
            start = time.perf_counter()
            embedder.embed_query(queries[i % len(queries)])
            embed_ms.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            with open_store(store) as st:
                st.count()
            open_ms.append((time.perf_counter() - start) * 1000)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        query_threads(previous)
    return {"documents": len(docs), "points": points, "queries": n_queries,
            "p50_ms": percentile(times, 50), "p95_ms": percentile(times, 95), "load": load,
            "embed_p50_ms": percentile(embed_ms, 50), "store_open_close_p50_ms": percentile(open_ms, 50)}
