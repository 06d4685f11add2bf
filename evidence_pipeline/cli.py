"""Command line: ``evidence-pipeline ingest|search|parse|generate|eval``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

def cmd_ingest(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from evidence_pipeline.orchestration.definitions import defs
    from evidence_pipeline.orchestration.runner import default_instance, ingest_paths

    started = time.perf_counter()
    progress = lambda items: tqdm(items, unit="doc", disable=args.quiet, file=sys.stderr)  # noqa: E731
    summary = ingest_paths(args.paths, defs, default_instance(), progress)
    if not summary.outcomes:
        print("no documents found in " + " ".join(args.paths), file=sys.stderr)
        return 2
    for line in summary.skipped:
        print(f"skipped {line}", file=sys.stderr)
    print(f"{summary.line()} ({time.perf_counter() - started:.1f} s)")
    for outcome in summary.failures:
        print(f"  FAILED {outcome.error}")
    return 1 if not summary.succeeded else 0


def cmd_search(args: argparse.Namespace) -> int:
    from evidence_pipeline.retrieval import search

    hits = search(args.query, k=args.k, token_budget=args.token_budget)
    if args.json:
        print(json.dumps([h.model_dump() for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("no results (is the index empty? run `evidence-pipeline ingest data/corpus`)")
    for rank, hit in enumerate(hits, 1):
        pages = ", ".join(map(str, hit.pages)) or "-"
        print(f"#{rank}  score {hit.score:.4f}  {hit.doc_id}  pages {pages}  {hit.caption or ' > '.join(hit.section_path)}")
        print(f"    matched: {hit.matched_text}")
        if rank == 1 or args.full:
            print("    " + hit.parent_text.replace("\n", "\n    "))
        print()
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.errors import ParseError
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.pipeline import PipelineOptions, evidence_units, split_evidence_units
    from evidence_pipeline.settings import ParserSettings

    try:
        doc = DoclingParser(ParserSettings.from_env()).parse(Path(args.file))
    except ParseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    counter = token_counter(None)
    options = PipelineOptions()
    units = split_evidence_units(evidence_units(doc, options, counter), options, counter)
    if args.json:
        print(json.dumps({"parsed": doc.model_dump(), "units": [u.model_dump() | {"text": u.text} for u in units]}, indent=2, ensure_ascii=False))
        return 0
    print(f"{doc.doc_id}: {doc.n_pages} pages, {len(doc.tables)} tables, {len(doc.blocks)} blocks ({doc.parser})")
    for unit in units:
        print("-" * 80)
        print(f"[{unit.unit_id}] {unit.kind}")
        print(unit.retrieval_text)
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from evidence_pipeline.samples import generate_corpus

    paths = generate_corpus(Path(args.out))
    print(f"wrote {len(paths)} documents to {args.out}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from evidence_pipeline.corpus import expand_paths
    from evidence_pipeline.evaluation.questions import QuestionFileError, load_questions
    from evidence_pipeline.evaluation.report import text_report, write_outputs
    from evidence_pipeline.evaluation.runner import evaluate

    try:
        questions = load_questions(args.questions)
    except (OSError, QuestionFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    paths = sorted(expand_paths([args.docs]), key=lambda p: p.name)[: args.limit_docs]
    if not paths:
        print(f"no documents found in {args.docs}", file=sys.stderr)
        return 2

    def wrap(items, desc):
        return tqdm(items, desc=desc, unit="item", file=sys.stderr, disable=args.quiet, leave=False)

    try:
        report = evaluate(paths, questions, args.systems, wrap=wrap)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        for path in write_outputs(report, Path(args.out)):
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps({"systems": report["systems"]}, ensure_ascii=False))
    else:
        meta = report["meta"]
        print(f"{meta['n_questions']} questions over {meta['n_docs']} documents ({meta['seconds']['total']} s)")
        print(text_report(report["systems"]))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evidence-pipeline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="ingest files or folders through the Dagster job")
    p.add_argument("paths", nargs="+")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("search", help="hybrid search, one result per parent")
    p.add_argument("query")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--json", action="store_true")
    p.add_argument("--full", action="store_true", help="print every parent's text, not only the first")
    p.add_argument("--token-budget", type=int, default=None, help="keep the parents that fit N tokens, in rank order")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("parse", help="print the parsed document and its evidence units")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("generate", help="write the sample SOP corpus")
    p.add_argument("out", nargs="?", default="data/corpus")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("eval", help="score retrieval against a question file, beside three baselines")
    p.add_argument("--docs", required=True, help="folder (or file) of the documents the questions refer to")
    p.add_argument("--questions", required=True, help="JSON Lines question file (shared/eval/FORMAT.md)")
    p.add_argument("--out", help="folder for report.json, report.md and report.png")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--systems", nargs="+", default=["fixed512", "hybridchunker", "eu_dense", "full"],
                   choices=["fixed512", "hybridchunker", "eu_dense", "full"])
    p.add_argument("--limit-docs", type=int, default=None, help="only the first N documents by file name")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
