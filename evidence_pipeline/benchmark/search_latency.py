"""Latency of the public ``evidence_pipeline.search()``, as an application calls it, and of
the service's ``/search`` while an ingest runs in another process.

``public_search``: the same questions through ``search()`` on an existing store, kept open
between calls (the default) and opened per call (``StoreSettings.keep_open=False``), in
alternating rounds so that both meet the same machine load. Each call's time is split into the
query embedding and the store part (everything else), in wall time and in process CPU time.

``service_during_ingest``: the search service (``benchmark.service.running_service``) answers
``/search`` back to back while another process ingests the rest of the sample documents
(``benchmark.concurrency.run_ingest``): the latency of the requests made during the ingest, and
the failures on both sides.

    python -m evidence_pipeline.benchmark.search_latency [--children 100000] [--queries 100]
    python -m evidence_pipeline.benchmark.search_latency --store DIR --questions FILE.jsonl

The first runs both on the generated sample corpus (and ``public_search`` on a synthetic store
of ``--children`` children); the second runs ``public_search`` alone on a store an ingest built,
asking the questions of FILE (``shared/eval/FORMAT.md``). Each prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evidence_pipeline.benchmark.timing import load_1min, percentile
from evidence_pipeline.embedding import Embedder, TokenCounter
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings

if TYPE_CHECKING:
    import numpy as np

MODES = {"kept": True, "per_call": False}  # mode -> StoreSettings.keep_open


def _summary(ms: Sequence[float]) -> dict:
    return {"p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95), "max_ms": max(ms, default=float("nan"))}


def public_search(store: StoreSettings, embedder: Embedder, queries: Sequence[str], n_queries: int, rounds: int = 4) -> dict:
    """``search()`` p50/p95 kept open and per call, each split into embedding and store part."""
    from evidence_pipeline import search
    from evidence_pipeline.retrieval import search_store
    from evidence_pipeline.store import reading_store
    from evidence_pipeline.store.reader import let_go

    embedding = EmbeddingSettings(model=embedder.settings.model)
    times: dict[str, dict[str, list[float]]] = {m: {"total": [], "embed": [], "store": [], "store_cpu": []} for m in MODES}
    per_round = max(1, n_queries // rounds)
    load = load_1min()
    for r in range(rounds):
        order = list(MODES) if r % 2 == 0 else list(reversed(MODES))
        for mode in order:
            settings = store.model_copy(update={"keep_open": MODES[mode]})
            search(queries[0], 5, store_settings=settings, embedding_settings=embedding)  # warm-up (the kept open)
            for i in range(per_round):
                q = queries[(r * per_round + i) % len(queries)]
                start = time.perf_counter()
                hits = search(q, 5, store_settings=settings, embedding_settings=embedding)
                times[mode]["total"].append((time.perf_counter() - start) * 1000)
                if not hits:
                    raise RuntimeError(f"no hits for {q!r}: the benchmark store is empty")
                start = time.perf_counter()
                dense = embedder.embed_query(q).tolist()
                times[mode]["embed"].append((time.perf_counter() - start) * 1000)
                start, cpu = time.perf_counter(), time.process_time()
                with reading_store(settings) as st:
                    search_store(st, embedder, q, 5, dense=dense)
                times[mode]["store"].append((time.perf_counter() - start) * 1000)
                times[mode]["store_cpu"].append((time.process_time() - cpu) * 1000)
            let_go(settings)  # the other mode starts from a closed store
    out: dict = {"queries": per_round * rounds, "load": load, "load_end": load_1min()}
    for mode in MODES:
        out[mode] = {part: _summary(ms) for part, ms in times[mode].items()}
    out["ratio_p50"] = out["per_call"]["total"]["p50_ms"] / out["kept"]["total"]["p50_ms"]
    out["store_ratio_p50"] = out["per_call"]["store"]["p50_ms"] / out["kept"]["store"]["p50_ms"]
    return out


def sample_store(docs: Sequence[ParsedDoc], embedder: Embedder, counter: TokenCounter, path: Path) -> StoreSettings:
    """``docs`` ingested (in this process) into a new Edge store at ``path``."""
    from evidence_pipeline.pipeline import ingest_parsed
    from evidence_pipeline.store import open_store

    shutil.rmtree(path, ignore_errors=True)
    settings = StoreSettings(path=str(path))
    with open_store(settings) as st:
        for doc in docs:
            ingest_parsed(doc, st, embedder, counter)
    return settings


def service_during_ingest(store: StoreSettings, embedder: Embedder, queries: Sequence[str], ingest_paths: Sequence[Path]) -> dict:
    """/search back to back while another process ingests ``ingest_paths`` into ``store``."""
    from evidence_pipeline.benchmark.concurrency import run_ingest
    from evidence_pipeline.benchmark.service import running_service

    outcome: list = []

    def ingest() -> None:
        try:
            outcome.append(run_ingest(Path(store.path), ingest_paths))
        except Exception as exc:  # reported as the ingest's failure
            outcome.append(exc)

    ms, errors, during = [], [], 0
    with running_service(store, embedder) as client:
        for q in queries[:2]:  # warm-up
            client.ask(q)
        load = load_1min()
        ingester = threading.Thread(target=ingest, name="bench-ingest")
        ingester.start()
        i = 0
        while ingester.is_alive():
            q = queries[i % len(queries)]
            i += 1
            start = time.perf_counter()
            try:
                hits = client.ask(q)
                if not hits:
                    errors.append(f"no hits for {q!r}")
            except Exception as exc:  # a failed request is what this measures
                errors.append(f"{type(exc).__name__}: {exc}"[:300])
            ms.append((time.perf_counter() - start) * 1000)
            during += 1
        ingester.join()
    run = outcome[0]
    failed = [str(run)[-500:]] if isinstance(run, Exception) else run.failures
    return {
        "documents": len(ingest_paths),
        "ingest_s": None if isinstance(run, Exception) else run.seconds,
        "failed_documents": failed,
        "requests": during,
        "failed_requests": errors[:10],
        "n_failed_requests": len(errors),
        "load": load,
        "load_end": load_1min(),
        **_summary(ms),
    }


def synthetic_store(n_children: int, real_texts: Sequence[str], dim: int, path: Path, vectors: np.ndarray | None = None) -> StoreSettings:
    """``n_children`` synthetic children (``benchmark.synthetic``; ``vectors``: real embeddings
    to mix) in a new Edge store at ``path``, not indexed (``index_threshold`` 0)."""
    from evidence_pipeline.benchmark.synthetic import TextSampler, synthetic_documents
    from evidence_pipeline.store.edge import EdgeStore

    shutil.rmtree(path, ignore_errors=True)
    settings = StoreSettings(path=str(path), index_threshold=0)
    with EdgeStore(settings) as st:
        st.ensure_collection(dim)
        for doc_id, points in synthetic_documents(n_children, TextSampler(real_texts, seed=7), dim=dim, vectors=vectors):
            st.replace_document(doc_id, points)
    return settings


def store_vectors(settings: StoreSettings) -> np.ndarray:
    """Every dense vector in the store at ``settings`` (the real embeddings synthetic ones mix)."""
    import numpy as np

    from evidence_pipeline.store import open_store

    with open_store(settings) as st:
        return np.array([p.dense for d in st.documents() for p in st.iter_points(d.doc_id)], dtype=np.float32)


def top_parents(settings: StoreSettings, embedder: Embedder, queries: Sequence[str], k: int = 5) -> list[list[str]]:
    from evidence_pipeline.retrieval import search_store
    from evidence_pipeline.store import open_store

    with open_store(settings) as st:
        return [[h.parent_id for h in search_store(st, embedder, q, k)] for q in queries]


def indexed_vs_exact(settings: StoreSettings, embedder: Embedder, queries: Sequence[str], n_queries: int) -> dict:
    """``search()`` on the store as it is (every dense vector scanned: exact), then after
    building its HNSW graph (``EdgeStore.optimize``, what an ingest does past
    ``StoreSettings.index_threshold``): latency of both, the build time, and how often the
    indexed search returns what the exact one did (same first parent; share of the top 5)."""
    from evidence_pipeline.store.edge import EdgeStore

    exact_top = top_parents(settings, embedder, queries)
    exact = public_search(settings, embedder, queries, n_queries)
    with EdgeStore(settings) as st:
        start = time.perf_counter()
        st.optimize()
        build_s = time.perf_counter() - start
    indexed_top = top_parents(settings, embedder, queries)
    indexed = public_search(settings, embedder, queries, n_queries)
    pairs = list(zip(exact_top, indexed_top))
    return {
        "exact": exact,
        "indexed": indexed,
        "index_build_s": round(build_s, 1),
        "hnsw_ef": settings.hnsw_ef,
        "same_first": sum(a[:1] == b[:1] for a, b in pairs) / len(pairs),
        "top5_overlap": sum(len(set(a) & set(b)) for a, b in pairs) / max(1, sum(len(a) for a, _ in pairs)),
        "ratio_p50": exact["kept"]["total"]["p50_ms"] / indexed["kept"]["total"]["p50_ms"],
    }


def _existing_store(path: Path, questions: Path, n_queries: int) -> int:
    if not path.is_dir():
        raise SystemExit(f"error: {path}: no store there (ingest into it first)")
    from evidence_pipeline.evaluation.questions import load_questions

    queries = [q.question for q in load_questions(questions)]
    result = {"store": str(path), "questions": str(questions)}
    result["search"] = public_search(StoreSettings(path=str(path)), Embedder(), queries, n_queries)
    print(json.dumps(result, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence_pipeline.benchmark.search_latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=0, help="also a synthetic store of this many children")
    parser.add_argument("--queries", type=int, default=100, help="questions per mode (default 100)")
    parser.add_argument("--no-ingest", action="store_true", help="skip the service during an ingest")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for the query embedding (default 1, as the service)")
    parser.add_argument("--store", help="only search() on this existing embedded store")
    parser.add_argument("--questions", help="with --store: the JSON Lines question file to ask")
    parser.add_argument("--keep", help="build the stores in this folder and keep them (the synthetic one is DIR/synthetic, for --store)")
    args = parser.parse_args(argv)
    if args.store:
        if not args.questions:
            parser.error("--store needs --questions")
        return _existing_store(Path(args.store), Path(args.questions), args.queries)

    from evidence_pipeline import pipeline
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.tools.samples.corpus import corpus_questions, generate_corpus

    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    import torch

    torch.set_num_threads(args.threads)
    embedder, counter = Embedder(), token_counter(None)
    queries = [q.question for q in corpus_questions()]
    result: dict = {}
    with tempfile.TemporaryDirectory(prefix="search-latency-") as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        corpus = sorted(generate_corpus(work / "corpus"), key=lambda p: p.name)
        parser_ = DoclingParser()
        docs = [parser_.parse(p) for p in corpus]
        log(f"search(): sample store, {len(docs)} documents")
        store = sample = sample_store(docs, embedder, counter, work / "sample")
        result["sample"] = public_search(store, embedder, queries, args.queries)
        if not args.no_ingest:
            half = len(docs) // 2
            log(f"service /search during an ingest of {len(corpus) - half} documents")
            store = sample_store(docs[:half], embedder, counter, work / "service")
            result["service_during_ingest"] = service_during_ingest(store, embedder, queries, corpus[half:])
        if args.children:
            texts = [
                c.text for d in docs for c in pipeline.children_of(pipeline.document_units(d, pipeline.PipelineOptions(), counter), counter)
            ]
            log(f"search(): synthetic store, {args.children} children")
            real = store_vectors(sample)
            store = synthetic_store(args.children, texts, embedder.dim, work / "synthetic", vectors=real)
            result[f"synthetic_{args.children}"] = indexed_vs_exact(store, embedder, queries, args.queries)
    result["torch_threads"] = args.threads
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
