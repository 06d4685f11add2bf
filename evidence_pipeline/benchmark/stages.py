"""One function per measured stage. Each returns plain numbers (seconds, counts, load)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from evidence_pipeline import pipeline
from evidence_pipeline.benchmark.synthetic import TextSampler, synthetic_documents
from evidence_pipeline.benchmark.timing import load_1min, percentile, timed
from evidence_pipeline.embedding import Embedder, TokenCounter
from evidence_pipeline.records import EvidenceUnit, ParsedDoc
from evidence_pipeline.retrieval import search_store
from evidence_pipeline.settings import StoreSettings


def parse(parser, paths: Sequence[Path], budget_s: float | None = None) -> tuple[list[ParsedDoc], dict]:
    """Parse files in order; with ``budget_s``, stop after the file that crosses it."""
    docs: list[ParsedDoc] = []
    load = load_1min()
    start = time.perf_counter()
    with timed() as span:
        for path in paths:
            docs.append(parser.parse(path))
            if budget_s is not None and time.perf_counter() - start > budget_s:
                break
    pages = sum(d.n_pages for d in docs)
    return docs, {
        "docs": len(docs),
        "of_docs": len(paths),
        "pages": pages,
        "seconds": span.wall,
        "cpu_s": span.cpu,
        "load": load,
        "pages_per_s": pages / span.wall,
    }


def build(docs: Sequence[ParsedDoc], counter: TokenCounter) -> tuple[list[list[EvidenceUnit]], dict]:
    options = pipeline.PipelineOptions()
    load = load_1min()
    with timed() as span:
        units = [pipeline.document_units(d, options, counter) for d in docs]
    n = sum(map(len, units))
    return units, {"units": n, "seconds": span.wall, "cpu_s": span.cpu, "load": load, "units_per_s": n / span.wall}


def embed(units_per_doc: Sequence[list[EvidenceUnit]], embedder: Embedder, counter: TokenCounter, rounds: int) -> dict:
    """Our path (children fitted per document, then ``pipeline.embed_documents``, as
    ``ingest_files`` does, with the default backend and child vectors) against one raw fp32
    ``SentenceTransformer.encode`` of the texts the children stand for (``embed_text``: prefix
    and text), same batch size. The two alternate; the best round of each counts (least disturbed by
    other load). Each of our rounds embeds every text, as a first ingest does: the backend's memo
    (``OnnxEncoder.forget``) is emptied before it."""
    texts = [c.embed_text for units in units_per_doc for c in pipeline.children_of(units, counter)]
    batch = embedder.settings.batch_size
    # The baseline is fp32 sentence-transformers whatever backend ``embedder`` runs.
    from evidence_pipeline.embedding import _sentence_transformer

    model = _sentence_transformer(embedder.model_path)
    model.encode(texts[:batch], batch_size=batch, show_progress_bar=False)  # warm-up

    def ours() -> None:
        forget = getattr(embedder.model, "forget", None)  # the torch fallback keeps no memo
        if forget is not None:
            forget()
        pipeline.embed_documents([pipeline.children_of(units, counter) for units in units_per_doc], embedder)

    def raw() -> None:
        model.encode(texts, batch_size=batch, show_progress_bar=False)

    best = {"ours": float("inf"), "raw": float("inf")}
    best_cpu = dict(best)  # CPU seconds of this process: less swayed by other processes than wall time
    loads = []
    for r in range(rounds):
        order = [("raw", raw), ("ours", ours)] if r % 2 == 0 else [("ours", ours), ("raw", raw)]
        for name, fn in order:
            loads.append(load_1min())
            with timed() as span:
                fn()
            best[name] = min(best[name], span.wall)
            best_cpu[name] = min(best_cpu[name], span.cpu)
    n = len(texts)
    return {
        "children": n,
        "rounds": rounds,
        "batch_size": batch,
        "ours_s": best["ours"],
        "raw_s": best["raw"],
        "children_per_s": n / best["ours"],
        "raw_children_per_s": n / best["raw"],
        "ratio": best["raw"] / best["ours"],
        "ratio_cpu": best_cpu["raw"] / best_cpu["ours"],
        "load": max(loads),
    }


def _upsert(store, docs_factory: Callable) -> dict:
    n = 0
    load = load_1min()
    total = total_cpu = 0.0
    for doc_id, points in docs_factory():  # generating the points is not timed
        with timed() as span:
            store.replace_document(doc_id, points)
        total += span.wall
        total_cpu += span.cpu
        n += len(points)
    with timed() as span:
        flush = getattr(store, "flush", None)
        if flush is not None:
            flush()
    total += span.wall
    return {"points": n, "seconds": total, "cpu_s": total_cpu, "load": load, "points_per_s": n / total}


def _latencies(store, embedder: Embedder, queries: Sequence[str], n: int, k: int = 5) -> dict:
    for q in queries[:2]:  # warm-up: caches, first-query allocations
        search_store(store, embedder, q, k)
    total, embed_only = [], []
    load = load_1min()
    for i in range(n):
        q = queries[i % len(queries)]
        with timed() as span:
            hits = search_store(store, embedder, q, k)
        total.append(span.wall * 1000)
        with timed() as span:
            embedder.embed_query(q)
        embed_only.append(span.wall * 1000)
        if not hits:
            raise RuntimeError(f"no hits for {q!r}: the benchmark store is empty")
    return {
        "queries": n,
        "k": k,
        "p50_ms": percentile(total, 50),
        "p95_ms": percentile(total, 95),
        "embed_p50_ms": percentile(embed_only, 50),
        "load": load,
    }


def edge_store(
    n_children: int,
    sampler_factory: Callable[[], TextSampler],
    embedder: Embedder,
    queries: Sequence[str],
    n_queries: int,
    work: Path,
    then: Callable[[StoreSettings], dict] | None = None,
) -> dict:
    """``then``: measures more on the store once it is closed (its result under ``"then"``)."""
    from evidence_pipeline.store.edge import EdgeStore

    path = work / f"edge-{n_children}"
    shutil.rmtree(path, ignore_errors=True)
    settings = StoreSettings(path=str(path))
    try:
        with EdgeStore(settings) as store:
            result = _measure_store(store, n_children, sampler_factory, embedder, queries, n_queries)
        if then is not None:
            result["then"] = then(settings)
        return result
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _measure_store(
    store,
    n_children: int,
    sampler_factory: Callable[[], TextSampler],
    embedder: Embedder,
    queries: Sequence[str],
    n_queries: int,
) -> dict:
    """Upsert ``n_children`` synthetic children into an empty store, then time the queries."""
    store.ensure_collection(embedder.dim)
    upsert = _upsert(store, lambda: synthetic_documents(n_children, sampler_factory(), dim=embedder.dim))
    search = _latencies(store, embedder, queries, n_queries)
    return {"children": n_children, "upsert": upsert, "search": search}


def local_store(
    n_children: int,
    sampler_factory: Callable[[], TextSampler],
    embedder: Embedder,
    queries: Sequence[str],
    n_queries: int,
    work: Path,
) -> dict:
    """The same points in qdrant-client's local mode (``QdrantClient(path=...)``) through ``ServerStore``."""
    import warnings

    from qdrant_client import QdrantClient

    from evidence_pipeline.store.server import ServerStore

    path = work / f"local-{n_children}"
    shutil.rmtree(path, ignore_errors=True)
    client = QdrantClient(path=str(path))
    store = ServerStore(StoreSettings(collection="bench"), client=client)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "local mode is not recommended above 20,000 points"
            return _measure_store(store, n_children, sampler_factory, embedder, queries, n_queries)
    finally:
        client.close()
        shutil.rmtree(path, ignore_errors=True)
