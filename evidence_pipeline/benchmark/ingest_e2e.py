"""``evidence-pipeline ingest`` end to end, cold, and ``search()`` on the store it built.

``ingest``: a fresh process runs the CLI's own ``main(["ingest", DIR])`` into a fresh store, as a
user's first ingest after ``make install`` does (model prepared; process, Dagster instance, parser
worker and store all new). Measured: pages per second of wall time, CPU seconds of every process,
each stage's CPU seconds per page (``work.CLOCK``: the parser's stages in its worker, the rest in
the ingesting process; "Dagster and the rest" is that process's CPU outside every stage), peak
resident memory of each process, and the work counted (``work.WORK``).

``search``: ``evidence_pipeline.search()`` with the store kept open, over a fixed query set of
every kind (``QUERY_FILES`` and ``UNROUTED``): routed to a filing, naming a primary statement,
naming neither. p50 / p95 over all and per kind, and each stage's cost at p50: the query's
embedding, the routing, the store's candidates, the fusion and the expansion of split tables.

    python -m evidence_pipeline.benchmark.ingest_e2e DIR [--rounds 3] [--keep STORE]
    python -m evidence_pipeline.benchmark.ingest_e2e --store STORE [--rounds 3]   # search alone

prints one JSON object; ``evidence-pipeline bench --ingest DIR`` reports the first (``report.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from evidence_pipeline.benchmark.timing import load_1min, page_count, percentile

# The questions written for the 10-Qs (``make eval-sec``, ``make eval-sec-lookup``): nearly every
# one names a company and a period, many a statement or one of its rows.
QUERY_FILES = ("data/questions/sec-10q.jsonl", "data/questions/sec-10q-lookup.jsonl")
# Questions that name no filing: routed nowhere, ranked over the whole store; the first name a
# primary statement.
UNROUTED = (
    "What does the income statement show for net income?",
    "capital expenditures in the cash flow statement",
    "total stockholders' equity on the balance sheet",
    "operating income in the statements of operations",
    "depreciation and amortization in the statement of cash flows",
    "net cash provided by operating activities",
    "goodwill impairment charges",
    "foreign currency exchange rate risk",
    "remaining authorization under the share repurchase program",
    "effective tax rate for the quarter",
    "total assets on the condensed consolidated balance sheet",
    "revenue by geographic segment",
    "inventory write-downs and excess purchase commitments",
    "legal proceedings and contingencies",
    "stock-based compensation expense",
    "What were the total current liabilities?",
    "How much was spent on research and development?",
    "Which risk factors concern supply chain disruptions?",
    "What was the diluted earnings per share?",
    "unrecognized tax benefits",
)
STAGE_ORDER = ("parse", "parse.prepass", "parse.text_layer", "parse.ocr", "parse.convert",
               "units", "split", "children", "embed", "sparse", "points", "upsert")  # fmt: skip
PARENT_STAGES = ("units", "split", "children", "embed", "sparse", "points", "upsert")
QUERY_KINDS = ("routed", "statement", "none", "unknown")


def ingest(folder: Path, store: Path) -> dict:
    """One cold ``evidence-pipeline ingest folder`` into the fresh ``store``, measured from outside."""
    from evidence_pipeline.corpus import expand_paths

    files = sorted(expand_paths([folder]))
    with tempfile.TemporaryDirectory(prefix="evidence-e2e-") as tmp:
        out = Path(tmp) / "child.json"
        env = {**os.environ, "EVIDENCE_STORE_PATH": str(store), "HF_HUB_OFFLINE": "1"}
        env.pop("DAGSTER_HOME", None)  # an ephemeral instance, as a first user's ingest
        load = load_1min()
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "evidence_pipeline.benchmark.cli_ingest_probe", str(folder), str(out)],
            capture_output=True, text=True, env=env,
        )  # fmt: skip
        wall = time.perf_counter() - started
        if proc.returncode != 0 or not out.is_file():
            raise RuntimeError(f"ingest of {folder} failed: {proc.stderr.strip()[-2000:]}")
        run = json.loads(out.read_text())
    pages = page_count(files)
    work, stages = run["work"], run["stages_cpu_s"]
    worker_cpu, main_cpu = run["children_cpu_s"], run["cpu_s"]
    in_stages = sum(stages.get(s, 0.0) for s in PARENT_STAGES)
    return {
        "documents": len(files), "pages": pages, "wall_s": wall, "pages_per_s": pages / wall,
        "load": load, "load_end": load_1min(),
        "cpu_s": main_cpu + worker_cpu, "cpu_s_per_page": (main_cpu + worker_cpu) / pages,
        "ingest_cpu_s": main_cpu, "parser_cpu_s": worker_cpu,
        "peak_rss_mb": run["peak_rss_mb"], "parser_peak_rss_mb": run["children_peak_rss_mb"],
        "stages_cpu_s": stages,
        "stage_cpu_s_per_page": {s: stages.get(s, 0.0) / pages for s in STAGE_ORDER if s in stages},
        "parser_other_cpu_s": max(0.0, worker_cpu - stages.get("parse", 0.0)),
        "dagster_and_rest_cpu_s": max(0.0, main_cpu - in_stages),
        "work": work,
        "children": work.get("store.upserts", 0),
        "word_pieces_per_child": work.get("embed.word_pieces", 0) / max(1, work.get("store.upserts", 0)),
    }  # fmt: skip


def queries(root: Path = Path(".")) -> list[str]:
    """The fixed query set: every question of ``QUERY_FILES`` found under ``root``, then ``UNROUTED``."""
    found: list[str] = []
    for name in QUERY_FILES:
        path = root / name
        if path.is_file():
            found += [json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip()]
    return [*found, *UNROUTED]


def _kind(store, query: str) -> str:
    """routed (it names a filing), statement (it names a primary statement) or none."""
    try:
        from evidence_pipeline.retrieval.query import read_query
        from evidence_pipeline.retrieval.route import route

        plan = route(store, read_query(query))
    except (ImportError, AttributeError):  # the retrieval stages named otherwise
        return "unknown"
    if plan.routed is not None:
        return "routed"
    return "statement" if plan.scope.statements.kinds else "none"


def _timed_stages(times: dict[str, list[float]]) -> Callable[[], None]:
    """Wrap the search stages (``retrieval.flow``'s names) with timers; returns the undo."""
    from evidence_pipeline.retrieval import flow

    saved = {}
    for name, label in (("route", "routing"), ("candidates", "candidates"), ("fuse", "named rows"), ("expand", "expand")):
        fn = getattr(flow, name, None)
        if fn is None:
            continue
        saved[name] = fn

        def timed(*args, _fn=fn, _label=label, **kwargs):
            start = time.perf_counter()
            try:
                return _fn(*args, **kwargs)
            finally:
                times[_label][-1] += (time.perf_counter() - start) * 1000

        setattr(flow, name, timed)
    return lambda: [setattr(flow, name, fn) for name, fn in saved.items()]


def search(store_path: Path, query_set: Sequence[str], rounds: int = 3) -> dict:
    """``search()`` over ``query_set``, ``rounds`` times, store kept open: p50 / p95 in all, per
    kind of query, and each stage's time at p50."""
    from evidence_pipeline import search as public_search
    from evidence_pipeline.embedding import Embedder
    from evidence_pipeline.settings import EmbeddingSettings, StoreSettings
    from evidence_pipeline.store import reading_store

    settings = StoreSettings(path=str(store_path))
    embedding = EmbeddingSettings.from_env()
    with reading_store(settings) as store:
        kinds = {q: _kind(store, q) for q in query_set}
    public_search(query_set[0], 5, store_settings=settings, embedding_settings=embedding)  # opens the store, loads the model
    stage_names = ("embedding", "routing", "candidates", "named rows", "expand")
    times: dict[str, list[float]] = {name: [] for name in ("total", *stage_names)}
    by_kind: dict[str, list[float]] = {k: [] for k in QUERY_KINDS}
    embed = Embedder.embed_query
    load = load_1min()

    def embed_timed(self, text: str):
        start = time.perf_counter()
        try:
            return embed(self, text)
        finally:
            times["embedding"][-1] += (time.perf_counter() - start) * 1000

    undo = _timed_stages(times)
    Embedder.embed_query = embed_timed  # type: ignore[method-assign]
    try:
        for _ in range(rounds):
            for q in query_set:
                for name in stage_names:
                    times[name].append(0.0)
                start = time.perf_counter()
                hits = public_search(q, 5, store_settings=settings, embedding_settings=embedding)
                ms = (time.perf_counter() - start) * 1000
                times["total"].append(ms)
                by_kind[kinds[q]].append(ms)
                if not hits:
                    raise RuntimeError(f"no hits for {q!r}: is the store at {store_path} empty?")
    finally:
        Embedder.embed_query = embed  # type: ignore[method-assign]
        undo()
    summary = {name: {"p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95)} for name, ms in times.items()}
    return {
        "queries": len(query_set), "rounds": rounds, "load": load, "load_end": load_1min(),
        "p50_ms": summary["total"]["p50_ms"], "p95_ms": summary["total"]["p95_ms"],
        "stages": {name: summary[name] for name in stage_names},
        "by_kind": {k: {"queries": len(ms) // rounds, "p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95)}
                    for k, ms in by_kind.items() if ms},
    }  # fmt: skip


def measure(folder: Path, rounds: int = 3, keep: Path | None = None) -> dict:
    """``ingest`` of ``folder`` into a fresh store (kept at ``keep`` when given), then ``search`` on it."""
    with tempfile.TemporaryDirectory(prefix="evidence-e2e-store-") as tmp:
        store = keep if keep is not None else Path(tmp) / "store"
        ran = ingest(folder, store)
        ran["search"] = search(store, queries(), rounds)
    return ran


def figures(e: dict, fig) -> list[dict]:
    """The report's rows for ``measure``'s result (``fig``: report._fig)."""
    s = e["search"]
    pages, docs = e["pages"], e["documents"]
    rows = [
        fig("ingest.e2e.pages_per_s", "evidence-pipeline ingest, cold, end to end", e["pages_per_s"], "pages/s",
            target=">= 10", met=e["pages_per_s"] >= 10,
            note=f"{docs} docs, {pages} pages, {e['wall_s']:.1f} s, load {e['load']:.1f}-{e['load_end']:.1f}; "
            f"floor on 2 cores at these CPU costs: {2 / e['cpu_s_per_page']:.1f} pages/s"),
        fig("ingest.e2e.cpu_s_per_page", "  CPU s/page, every process", e["cpu_s_per_page"], "CPU s/page",
            note=f"ingest process {e['ingest_cpu_s']:.0f} CPU s, parser worker {e['parser_cpu_s']:.0f} CPU s"),
    ]  # fmt: skip
    for stage, per_page in e["stage_cpu_s_per_page"].items():
        rows.append(fig(f"ingest.e2e.cpu.{stage}", f"  CPU s/page: {stage}", per_page, "CPU s/page"))
    rows += [
        fig("ingest.e2e.cpu.parser_other", "  CPU s/page: parser worker start-up and idle", e["parser_other_cpu_s"] / pages, "CPU s/page"),
        fig("ingest.e2e.cpu.dagster_and_rest", "  CPU s/page: Dagster and the rest", e["dagster_and_rest_cpu_s"] / pages, "CPU s/page",
            note=f"{e['dagster_and_rest_cpu_s'] / docs:.2f} CPU s per document: imports, runs, stage outputs"),
        fig("ingest.e2e.peak_rss_mb", "ingest peak RSS, largest process", max(e["peak_rss_mb"], e["parser_peak_rss_mb"]), "MiB",
            target="< 2048", met=max(e["peak_rss_mb"], e["parser_peak_rss_mb"]) < 2048,
            note=f"ingest process {e['peak_rss_mb']:.0f} MiB, parser worker {e['parser_peak_rss_mb']:.0f} MiB"),
        fig("ingest.e2e.word_pieces_per_child", "  word pieces embedded per child", e["word_pieces_per_child"], "pieces",
            note=f"{e['work'].get('embed.texts', 0)} texts embedded for {e['children']} children; "
            f"{e['work'].get('embed.memo_hits', 0)} seen in an earlier document"),
        fig("search.e2e.p50_ms", "search() p50, store kept open", s["p50_ms"], "ms", target="<= 10", met=s["p50_ms"] <= 10,
            note=f"{s['queries']} queries x {s['rounds']}, load {s['load']:.1f}-{s['load_end']:.1f}; at p50: "
            + ", ".join(f"{k} {v['p50_ms']:.1f} ms" for k, v in s["stages"].items())),
        fig("search.e2e.p95_ms", "search() p95, store kept open", s["p95_ms"], "ms", target="<= 25", met=s["p95_ms"] <= 25),
    ]  # fmt: skip
    for kind, r in s["by_kind"].items():
        rows.append(fig(f"search.e2e.{kind}.p50_ms", f"  search() p50, {kind} queries", r["p50_ms"], "ms",
                        note=f"{r['queries']} queries; p95 {r['p95_ms']:.1f} ms"))  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", default=None, help="build the store here and keep it")
    ap.add_argument("--store", default=None, help="no ingest: search() alone, on this store")
    args = ap.parse_args(argv)
    if (args.folder is None) == (args.store is None):
        ap.error("give a folder to ingest, or --store STORE to search alone")
    if args.store is not None:
        result = search(Path(args.store), queries(), args.rounds)
    else:
        result = measure(Path(args.folder), args.rounds, Path(args.keep) if args.keep else None)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
