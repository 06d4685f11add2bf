"""Embedding backends side by side: children/s against raw fp32 ``SentenceTransformer.encode``
measured in the same run, query-embedding latency, and how close each backend's vectors are
to fp32 torch (``settings.EMBED_BACKENDS``; what ``EVIDENCE_EMBED_BACKEND`` chooses).

Each backend and the raw baseline alternate round by round; the best round of each counts
(least disturbed by other load). CPU seconds are kept too: on a shared machine they are
steadier than wall time.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from evidence_pipeline.benchmark.timing import load_1min, percentile, timed
from evidence_pipeline.embedding import Embedder
from evidence_pipeline.settings import EMBED_BACKENDS, EmbeddingSettings


def _embedder(backend: str, batch_size: int) -> tuple[Embedder, float]:
    embedder = Embedder(EmbeddingSettings(backend=backend, batch_size=batch_size))
    with timed() as span:
        embedder.load()  # an ONNX backend exports here when the cache lacks its model
    return embedder, span.wall


def measure(texts: Sequence[str], queries: Sequence[str], rounds: int = 2, batch_size: int = 32) -> dict:
    texts, queries = list(texts), list(queries)
    from evidence_pipeline.embedding import _sentence_transformer, resolve_model

    raw_model = _sentence_transformer(resolve_model(None))  # sentence-transformers itself, fp32 on torch
    reference = raw_model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)

    def raw() -> None:
        raw_model.encode(texts, batch_size=batch_size, show_progress_bar=False)

    out: dict = {"children": len(texts), "queries": len(queries), "rounds": rounds, "batch_size": batch_size, "backends": {}}
    best_raw, best_raw_cpu = float("inf"), float("inf")
    loads = []
    for backend in EMBED_BACKENDS:
        embedder, load_s = _embedder(backend, batch_size)
        vectors = embedder.embed(texts)  # also the warm-up
        cosines = np.sum(vectors * reference, axis=1)
        best, best_cpu = float("inf"), float("inf")
        for r in range(rounds):
            order = [("raw", raw), ("ours", lambda: embedder.embed(texts))]  # noqa: B023  (run in this iteration)
            for name, fn in order if r % 2 == 0 else order[::-1]:
                loads.append(load_1min())
                with timed() as span:
                    fn()
                if name == "raw":
                    best_raw, best_raw_cpu = min(best_raw, span.wall), min(best_raw_cpu, span.cpu)
                else:
                    best, best_cpu = min(best, span.wall), min(best_cpu, span.cpu)
        latencies = []
        for q in queries:
            start = time.perf_counter()
            embedder.embed_query(q)
            latencies.append((time.perf_counter() - start) * 1000)
        out["backends"][backend] = {
            "load_s": load_s,
            "seconds": best,
            "cpu_s": best_cpu,
            "children_per_s": len(texts) / best,
            "cosine_min": float(cosines.min()),
            "cosine_mean": float(cosines.mean()),
            "query_p50_ms": percentile(latencies, 50),
            "query_p95_ms": percentile(latencies, 95),
        }
    out["raw_s"], out["raw_cpu_s"] = best_raw, best_raw_cpu
    out["raw_children_per_s"] = len(texts) / best_raw
    for r in out["backends"].values():
        r["ratio"] = best_raw / r["seconds"]
        r["ratio_cpu"] = best_raw_cpu / r["cpu_s"]
    out["load"] = max(loads)
    return out


def figures(e: dict, fig) -> list[dict]:
    """The report's rows for ``measure``'s result (``fig``: report._fig)."""
    rows = []
    for backend, r in e["backends"].items():
        rows.append(
            fig(
                f"embed.backend.{backend}.children_per_s",
                f"embed {backend}",
                r["children_per_s"],
                "children/s",
                baseline=e["raw_children_per_s"],
                ratio=r["ratio"],
                target=">= 2x raw fp32 encode",
                met=r["ratio"] >= 2.0,
                note=f"CPU-time ratio {r['ratio_cpu']:.2f}x; cosine to fp32 min {r['cosine_min']:.4f} "
                f"mean {r['cosine_mean']:.4f}; {e['children']} children; load {r['load_s']:.1f} s",
            )
        )
        rows.append(
            fig(
                f"embed.backend.{backend}.query_p50_ms",
                f"  query embedding p50, {backend}",
                r["query_p50_ms"],
                "ms",
                note=f"p95 {r['query_p95_ms']:.1f} ms, {e['queries']} queries",
            )
        )
    return rows


def _children_of_parsed(folder: str, limit: int, seed: int = 7) -> list[str]:
    """The texts ingest embeds for every document parsed into ``folder``, a seeded sample of ``limit``."""
    import random

    from evidence_pipeline.benchmark.inputs import parsed_children

    texts = [c.embed_text for _, children in parsed_children(folder) for c in children]
    random.Random(seed).shuffle(texts)
    return texts[:limit]


if __name__ == "__main__":
    import argparse
    import json

    from evidence_pipeline.tools.samples.corpus import corpus_questions

    ap = argparse.ArgumentParser(description="Embedding backends against raw fp32 encode, on parsed documents.")
    ap.add_argument("parsed", help="folder of ParsedDoc JSON files, e.g. data/cache/eval/parsed/<parser>")
    ap.add_argument("--texts", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    result = measure(_children_of_parsed(args.parsed, args.texts), [q.question for q in corpus_questions()], args.rounds)
    print(json.dumps(result, indent=2))
