"""One evaluation run: parse the documents once, build the systems, score, summarise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evidence_pipeline.evaluation.metrics import summarize
from evidence_pipeline.evaluation.questions import Question
from evidence_pipeline.evaluation.report import MISS_SYSTEM, misses, question_ranks
from evidence_pipeline.evaluation.systems import SYSTEMS, EvalDoc, SystemRun, Wrap, no_progress, run_systems

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def parse_documents(
    paths: Sequence[Path], *, with_docling: bool, wrap: Wrap = no_progress, log: Log = _stderr, cache: Path | None = None
) -> list[EvalDoc]:
    """Parse each file once; keep Docling's document too when the HybridChunker baseline runs.
    With ``cache``, a file parsed before by the same parser is read back instead."""
    from evidence_pipeline.corpus import doc_id_for
    from evidence_pipeline.errors import ParseError
    from evidence_pipeline.evaluation.cache import ParseCache
    from evidence_pipeline.parser.baseline_chunks import ConvertingParser, docling_from_json, docling_to_json
    from evidence_pipeline.records import sha256_file
    from evidence_pipeline.settings import ParserSettings

    parser = ConvertingParser(ParserSettings.from_env())
    from evidence_pipeline.pipeline import PIPELINE_VERSION

    # The parser's name carries Docling's version, not our rules': the pipeline version does.
    stored = ParseCache(cache, f"{parser.name}-v{PIPELINE_VERSION}") if cache is not None else None
    docs: list[EvalDoc] = []
    for path in wrap(list(paths), "parse"):
        doc_id = doc_id_for(path)
        hit = stored.get(sha256_file(str(path)), doc_id, with_docling=with_docling) if stored else None
        if hit is not None:
            parsed, docling_json = hit
            docs.append(EvalDoc(parsed, docling_from_json(docling_json) if docling_json else None))
            continue
        try:
            parsed, docling = parser.convert(path, doc_id)
        except ParseError as exc:
            log(f"skipping {path}: {exc.reason}")
            continue
        if stored:
            stored.put(parsed, docling_to_json(docling) if with_docling and docling is not None else None)
        docs.append(EvalDoc(parsed, docling if with_docling else None))
    return docs


def select_questions(questions: Sequence[Question], doc_ids: set[str], log: Log = _stderr) -> list[Question]:
    kept = [q for q in questions if q.doc_id in doc_ids]
    if len(kept) < len(questions):
        log(f"{len(questions) - len(kept)} of {len(questions)} questions name documents that were not indexed; left out")
    return kept


def summarize_runs(runs: dict[str, SystemRun], questions: Sequence[Question]) -> dict[str, Any]:
    return {name: summarize(questions, [a.scores for a in run.answers]) for name, run in runs.items()}


def evaluate(
    paths: Sequence[Path],
    questions: Sequence[Question],
    systems: Sequence[str] = SYSTEMS,
    *,
    wrap: Wrap = no_progress,
    log: Log = _stderr,
    cache: Path | None = None,
    options: Any = None,
    ablate: Sequence[str] = (),
) -> dict[str, Any]:
    """The full report: ``systems`` (as printed by ``--json``) plus ``meta`` (with the
    only figures that vary between runs: ``seconds``), ``misses`` and ``questions`` (each
    question's evidence rank per system, ``report.question_ranks``)."""
    started = time.perf_counter()
    docs = parse_documents(paths, with_docling="hybridchunker" in systems, wrap=wrap, log=log, cache=cache)
    parsed_s = time.perf_counter() - started
    report = evaluate_docs(docs, questions, systems, wrap=wrap, log=log, cache=cache, options=options, ablate=ablate)
    report["meta"]["seconds"] = {"parse": round(parsed_s, 1), "total": round(time.perf_counter() - started, 1)}
    return report


def evaluate_docs(
    docs: Sequence[EvalDoc],
    questions: Sequence[Question],
    systems: Sequence[str] = SYSTEMS,
    *,
    wrap: Wrap = no_progress,
    log: Log = _stderr,
    cache: Path | None = None,
    options: Any = None,
    ablate: Sequence[str] = (),
) -> dict[str, Any]:
    """Everything after parsing: build the systems, ask, score, summarise; with ``ablate`` (rule
    names), also each rule's contribution to ``full`` (``report["ablation"]``, ``ablation``).

    Deterministic for the same documents and questions: the bootstrap is seeded, kinds
    are iterated in sorted order and documents in the order given, the BM25 baseline
    breaks ties by a stable key, and nothing depends on timing, hash order or thread
    count (``test_evaluation_runner`` runs it in two interpreters and compares).
    """
    from evidence_pipeline.embedding import TokenCounter
    from evidence_pipeline.evaluation.systems import QueryCachingEmbedder

    questions = select_questions(questions, {d.parsed.doc_id for d in docs}, log)
    if not questions:
        raise ValueError("no question refers to an indexed document")
    from evidence_pipeline.settings import EmbeddingSettings

    settings = EmbeddingSettings.from_env()  # EVIDENCE_EMBED_BACKEND chooses what runs the model
    embedder = QueryCachingEmbedder(settings)
    if cache is not None:
        from evidence_pipeline.evaluation.cache import EmbeddingCache

        # Keyed by model and backend: one backend's figures never reuse another's vectors.
        embedder = QueryCachingEmbedder(settings, cache=EmbeddingCache(cache, embedder.cache_id))
    from evidence_pipeline.pipeline import PipelineOptions

    runs = run_systems(
        docs,
        questions,
        systems,
        embedder=embedder,
        counter=TokenCounter(None),
        wrap=wrap,
        options=options or PipelineOptions(),
        ablate=ablate if "full" in systems else (),
    )
    report: dict[str, Any] = {"systems": summarize_runs(runs, questions)}
    report["meta"] = {
        "docs": [d.parsed.doc_id for d in docs],
        "n_docs": len(docs),
        "n_questions": len(questions),
        "model": embedder.model_path,
        "embed_backend": embedder.backend,
        "parser": docs[0].parsed.parser if docs else None,
        "chunks": {name: run.n_chunks for name, run in runs.items()},
    }
    if MISS_SYSTEM in runs:
        report["misses"] = misses(questions, runs[MISS_SYSTEM])
    report["questions"] = question_ranks(questions, runs)
    if ablate and "full" in runs:
        from evidence_pipeline.evaluation.ablation import contributions

        report["ablation"] = contributions(questions, runs["full"].answers, runs["full"].ablated)
    return report
