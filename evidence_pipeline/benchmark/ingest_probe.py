"""One ingest in a fresh process, for its peak RSS and for the cost of re-ingesting unchanged files.

``python -m evidence_pipeline.benchmark.ingest_probe core|runner STORE_DIR FILE...`` prints
one JSON object. ``core`` uses ``pipeline.ingest_file`` (skips unchanged files);
``runner`` the Dagster job through ``orchestration.runner.ingest_paths``. Models are
loaded before the clock starts, so both ingests are timed with warm models.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def core(store_dir: Path, paths: list[Path]) -> dict:
    from evidence_pipeline import pipeline
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store

    t0 = time.perf_counter()
    parser, embedder, counter = DoclingParser(), Embedder(), token_counter(None)
    parser.converter, embedder.model  # noqa: B018 (load both before timing)
    load_s = time.perf_counter() - t0
    rss_loaded = _rss_mb()
    settings = StoreSettings(path=str(store_dir))
    runs = []
    for _ in range(2):
        t = time.perf_counter()
        with open_store(settings) as store:
            results = pipeline.ingest_files(paths, store, parser, embedder, counter)
        runs.append((time.perf_counter() - t, results))
        if len(runs) == 1:
            rss_first = _rss_mb()
    (first_s, first), (second_s, second) = runs
    return {
        "load_s": load_s,
        "rss_models_mb": rss_loaded,
        "peak_rss_mb": rss_first,
        "first_s": first_s,
        "second_s": second_s,
        "documents": len(paths),
        "children": sum(r.children for r in first),
        "skipped_first": sum(r.skipped for r in first),
        "skipped_second": sum(r.skipped for r in second),
    }


def runner(store_dir: Path, paths: list[Path]) -> dict:
    import dagster as dg

    from evidence_pipeline.orchestration.definitions import build_definitions
    from evidence_pipeline.orchestration.io import DocumentIOManager
    from evidence_pipeline.orchestration.resources import CorpusResource, EmbedderResource, ParserResource, StoreResource
    from evidence_pipeline.orchestration.runner import ingest_paths

    # Warm the per-process caches the resources use, as in the core probe: the parser (its
    # worker process, or the converter when parsing inline) and the embedding model.
    parser = ParserResource().parser()
    getattr(parser, "start", None) and parser.start()
    getattr(parser, "converter", None)
    EmbedderResource().embedder().model  # noqa: B018

    defs = build_definitions(
        {
            "store": StoreResource(path=str(store_dir / "store")),
            "corpus": CorpusResource(root=str(paths[0].parent)),
            "io_manager": DocumentIOManager(base_dir=str(store_dir / "io")),
        }
    )
    times, summaries = [], []
    with dg.instance_for_test() as instance:
        for _ in range(2):
            t = time.perf_counter()
            summaries.append(ingest_paths(paths, defs, instance))
            times.append(time.perf_counter() - t)
    return {
        "first_s": times[0],
        "second_s": times[1],
        "peak_rss_mb": _rss_mb(),
        "succeeded": [s.succeeded for s in summaries],
        "documents": len(paths),
    }


def main(argv: list[str]) -> int:
    mode, store_dir, files = argv[0], Path(argv[1]), [Path(a) for a in argv[2:]]
    result = core(store_dir, files) if mode == "core" else runner(store_dir, files)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
