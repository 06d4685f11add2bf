"""Runs every stage in order and assembles the report. Models load once, in this process
(the ingest probes are separate processes on purpose: peak RSS of an ingest alone)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evidence_pipeline.benchmark import stages
from evidence_pipeline.benchmark.report import build_report, write_outputs
from evidence_pipeline.benchmark.synthetic import TextSampler
from evidence_pipeline.benchmark.timing import load_1min, timed

QUICK_STORE = 1_000
"""Children of the synthetic stores in a quick run (both backends, and search() on Edge's)."""


class Plan:
    """Sizes of one run. --quick: a CI smoke test in well under a minute."""

    def __init__(self, quick: bool):
        self.quick = quick
        self.embed_children = 96 if quick else None  # None: every child of the generated corpus
        self.embed_rounds = 2
        # the backends side by side (each beside raw fp32, two rounds): on these first
        # children of the ones above (None: all of them); a quick run checks that each one runs
        # and keeps its vectors close to fp32, not its speed to two digits
        self.backend_children = 32 if quick else None
        # (children, queries) per backend; qdrant-client local mode is brute force in Python,
        # too slow to upsert and query the largest size, so it stops at the smaller one.
        self.edge = [(QUICK_STORE, 20)] if quick else [(10_000, 100), (100_000, 100)]
        self.local = [(QUICK_STORE, 3)] if quick else [(10_000, 20)]
        self.local_skipped = [] if quick else [100_000]
        self.probe_docs = 2 if quick else None  # None: the whole generated corpus
        self.shared_parse_budget_s = 240.0
        self.runner_probe = not quick
        # The search service on the generated corpus: documents ingested, /search requests timed.
        self.service_docs = 2 if quick else None  # None: every generated document
        self.service_queries = 20 if quick else 100
        # evidence_pipeline.search() kept open vs per call: on the service's store and on the
        # synthetic Edge stores of these sizes; then /search while another process ingests.
        self.search_api_queries = 20 if quick else 100
        self.search_api_sizes = {QUICK_STORE} if quick else {100_000}


def _probe(mode: str, store_dir: Path, files: list[Path]) -> dict:
    cmd = [sys.executable, "-m", "evidence_pipeline.benchmark.ingest_probe", mode, str(store_dir), *map(str, files)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"ingest probe ({mode}) failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(lines[-1])


def _first_children(units_per_doc, counter, limit: int | None):
    """Documents' units in order until ``limit`` children (whole documents; at least one)."""
    if limit is None:
        return units_per_doc
    from evidence_pipeline import pipeline

    kept, n = [], 0
    for units in units_per_doc:
        if kept and n >= limit:
            break
        kept.append(units)
        n += len(pipeline.children_of(units, counter))
    return kept


def run_bench(
    out_dir: Path | None = None,
    quick: bool = False,
    log: Callable[[str], None] | None = None,
    pdfs: Path | None = None,
    ingest: Path | None = None,
    ingest_only: bool = False,
) -> dict:
    """``pdfs``: a folder of real PDFs parsed beside the generated corpus (the README's figures:
    ``shared/corpora/clinical-protocols/pdfs``); a quick run skips them. ``ingest``: a folder
    ingested first, end to end, by ``evidence-pipeline ingest`` in a cold process, then searched
    (``ingest_e2e``; ``make bench``: the 10-Qs); ``ingest_only``: that alone."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    plan = Plan(quick)
    started = time.perf_counter()
    raw: dict = {
        "meta": {
            "quick": quick,
            "cpu_count": os.cpu_count(),
            "load_start": load_1min(),
            "python": platform.python_version(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
    }
    if ingest is not None:  # first, on a machine this run has not loaded yet
        from evidence_pipeline.benchmark import ingest_e2e

        log(f"ingest end to end: evidence-pipeline ingest {ingest}, cold, into a fresh store; then search() on it")
        raw["ingest_e2e"] = ingest_e2e.measure(Path(ingest))
        if ingest_only:
            return _finish(raw, started, out_dir, log)
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.settings import EMBED_BACKENDS
    from evidence_pipeline.tools.samples.corpus import corpus_questions, generate_corpus

    with tempfile.TemporaryDirectory(prefix="evidence-bench-") as tmp:
        work = Path(tmp)
        corpus = sorted(generate_corpus(work / "corpus"), key=lambda p: p.name)
        parser, embedder, counter = DoclingParser(), Embedder(), token_counter(None)
        with timed() as conv:
            parser.converter  # noqa: B018
        with timed() as model:
            embedder.model  # noqa: B018
        import torch

        raw["meta"].update(
            converter_build_s=conv.wall, model_load_s=model.wall, torch_threads=torch.get_num_threads(), embed_backend=embedder.backend
        )

        log(f"parse: {len(corpus)} generated documents")
        docs, raw["parse_generated"] = stages.parse(parser, corpus)
        all_docs = list(docs)
        shared = sorted(pdfs.glob("*.pdf")) if pdfs is not None else []
        if shared and not quick:
            log(f"parse: {len(shared)} PDFs of {pdfs} (budget {plan.shared_parse_budget_s:.0f} s)")
            shared_docs, raw["parse_shared"] = stages.parse(parser, shared, plan.shared_parse_budget_s)
            raw["parse_shared"]["name"] = pdfs.parent.name if pdfs.name == "pdfs" else pdfs.name
            all_docs += shared_docs

        log("build: evidence units + split")
        units_all, raw["build"] = stages.build(all_docs, counter)
        generated_units = units_all[: len(docs)]

        embed_units = _first_children(generated_units, counter, plan.embed_children)
        log(f"embed: ours vs raw encode, {plan.embed_rounds} rounds")
        raw["embed"] = stages.embed(embed_units, embedder, counter, plan.embed_rounds)
        from evidence_pipeline import pipeline
        from evidence_pipeline.benchmark import embedding_backends

        log(f"embed: backends {', '.join(EMBED_BACKENDS)} vs raw fp32 encode, {plan.embed_rounds} rounds")
        backend_texts = [c.embed_text for units in embed_units for c in pipeline.children_of(units, counter)][: plan.backend_children]
        raw["embed_backends"] = embedding_backends.measure(
            backend_texts, [q.question for q in corpus_questions()], plan.embed_rounds, embedder.settings.batch_size
        )

        real_texts = [c.text for units in generated_units for c in pipeline.children_of(units, counter)]
        sampler = lambda: TextSampler(real_texts, seed=7)  # noqa: E731 (same texts for every backend)
        queries = [q.question for q in corpus_questions()]
        from evidence_pipeline.benchmark import search_latency

        def public_search(settings) -> dict:
            log(f"  evidence_pipeline.search(): kept open vs per call, {plan.search_api_queries} queries each")
            return search_latency.public_search(settings, embedder, queries, plan.search_api_queries)

        raw["edge"], raw["local"] = [], []
        for n, nq in plan.edge:
            log(f"store: Edge, {n} children, {nq} queries")
            then = public_search if n in plan.search_api_sizes else None
            raw["edge"].append(stages.edge_store(n, sampler, embedder, queries, nq, work, then=then))
        for n, nq in plan.local:
            log(f"store: qdrant-client local, {n} children, {nq} queries")
            raw["local"].append(stages.local_store(n, sampler, embedder, queries, nq, work))
        raw["meta"]["local_skipped_sizes"] = plan.local_skipped

        from evidence_pipeline.benchmark import service

        service_docs = docs if plan.service_docs is None else docs[: plan.service_docs]
        sample = search_latency.sample_store(service_docs, embedder, counter, work / "service-store")
        log(f"search(): {len(service_docs)} generated documents")
        raw["search_api"] = public_search(sample)
        skipped = service.available()
        if skipped is None:
            log(f"service: /search over HTTP, {len(service_docs)} documents, {plan.service_queries} queries")
            raw["service"] = service.service_latency(sample, len(service_docs), embedder, queries, plan.service_queries)
            half = len(service_docs) // 2
            files = corpus[half : len(service_docs)]
            log(f"service: /search while another process ingests {len(files)} documents")
            store = search_latency.sample_store(service_docs[:half], embedder, counter, work / "service-ingest-store")
            raw["service_ingest"] = search_latency.service_during_ingest(store, embedder, queries, files)
        else:
            raw["meta"]["service_skipped"] = skipped

        probe_files = corpus if plan.probe_docs is None else sorted(corpus, key=lambda p: p.stat().st_size)[: plan.probe_docs]
        log(f"ingest probe (subprocess, core path): {len(probe_files)} documents, then again unchanged")
        raw["ingest_core"] = _probe("core", work / "probe-core", probe_files)
        if plan.runner_probe:
            log("ingest probe (subprocess, Dagster runner.ingest_paths): first and unchanged re-ingest")
            try:
                raw["ingest_runner"] = _probe("runner", work / "probe-runner", probe_files)
            except RuntimeError as exc:
                raw["ingest_runner"] = {"error": str(exc)[-500:]}
    return _finish(raw, started, out_dir, log)


def _finish(raw: dict, started: float, out_dir: Path | None, log: Callable[[str], None]) -> dict:
    raw["meta"]["load_end"] = load_1min()
    raw["meta"]["total_s"] = time.perf_counter() - started
    report = build_report(raw)
    if out_dir is not None:
        for path in write_outputs(report, Path(out_dir)):
            log(f"wrote {path}")
    return report
