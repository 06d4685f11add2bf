"""Command line: ``evidence-pipeline ingest|search|serve|parse|mcp|generate|eval|bench|report|parse-quality|copy-store|prepare-model``."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
from pathlib import Path

INGEST_EXIT_CODES = """exit codes:
  0  every document was ingested (or was unchanged and skipped)
  1  some document failed (one line each: the file and the cause), or the store could not be opened
  2  usage error: a path that does not exist, no documents found, bad arguments"""

SEARCH_EXIT_CODES = """exit codes:
  0  results printed (or none found: the store searched is named on stderr)
  1  the store could not be opened or queried
  2  usage error: empty query, --k or --token-budget below 1"""

COPY_STORE_EXIT_CODES = """exit codes:
  0  copied
  1  the source is empty or the server cannot be reached
  2  usage error: a URL that is not http(s), a --from-path that does not exist"""


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _error(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _query(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("the query is empty")
    return text


def cmd_ingest(args: argparse.Namespace) -> int:
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:  # before Dagster is even imported: a typo registers no partition
        return _error(f"no such file or folder: {', '.join(missing)}", 2)

    from tqdm import tqdm

    from evidence_pipeline.parser import shared_parser
    from evidence_pipeline.settings import ParserSettings

    # The parser's worker loads Docling while this process imports Dagster: the same parser the
    # job's resource hands out (one per process and settings).
    prestart = getattr(shared_parser(ParserSettings.from_env()), "prestart", None)
    if prestart is not None:
        prestart()

    from evidence_pipeline.errors import EvidencePipelineError
    from evidence_pipeline.orchestration.definitions import defs
    from evidence_pipeline.orchestration.runner import default_instance, ingest_paths

    started = time.perf_counter()
    progress = lambda items: tqdm(items, unit="doc", disable=args.quiet, file=sys.stderr)  # noqa: E731
    try:
        summary = ingest_paths(args.paths, defs, default_instance(), progress, force=args.force, log_level=args.log_level)
    except FileNotFoundError as exc:
        return _error(str(exc), 2)
    except EvidencePipelineError as exc:
        return _error(str(exc), 1)
    if not summary.outcomes:
        return _error("no documents found in " + " ".join(args.paths), 2)
    for line in summary.skipped:
        print(f"skipped {line}", file=sys.stderr)
    print(f"{summary.line()} ({time.perf_counter() - started:.1f} s)")
    for line in summary.warnings:
        print(f"  WARNING {line}")
    for outcome in summary.failures:
        print(f"  FAILED {outcome.failure_line()}")
    return 1 if summary.failures else 0


def _hit_line(rank: int, hit) -> str:
    pages = ", ".join(map(str, hit.pages)) or "-"
    return f"#{rank}  score {hit.score:.4f}  {hit.doc_id}  pages {pages}  {hit.caption or ' > '.join(hit.section_path)}"


def cmd_search(args: argparse.Namespace) -> int:
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.errors import EvidencePipelineError
    from evidence_pipeline.retrieval import budget_note, render_context, search
    from evidence_pipeline.settings import EmbeddingSettings, StoreSettings
    from evidence_pipeline.store.base import SCORE_NOTE

    store = StoreSettings.from_env()
    embedding = EmbeddingSettings.from_env()
    try:
        hits = search(args.query, k=args.k, token_budget=args.token_budget, store_settings=store, embedding_settings=embedding)
    except ValueError as exc:
        return _error(str(exc), 2)
    except EvidencePipelineError as exc:
        return _error(store.redact(str(exc)), 1)
    if not hits:
        print(f"no results in {store.location} (is the index empty? run `evidence-pipeline ingest data/corpus`)", file=sys.stderr)
    elif args.token_budget is not None:
        note = budget_note(hits, args.token_budget, token_counter(embedding.model).count)
        if note:
            print(f"note: {note}", file=sys.stderr)
    if args.json:
        print(json.dumps([h.model_dump() for h in hits], indent=2, ensure_ascii=False))
        return 0
    if args.context:  # exactly what a language model would be given, nothing else
        if hits:
            print(render_context(hits))
        return 0
    if hits:
        print(SCORE_NOTE)
    for rank, hit in enumerate(hits, 1):
        if not args.brief:
            print()
        print(_hit_line(rank, hit))
        if not args.brief:
            print(f"    matched: {hit.matched_text}")
            print("    " + hit.context_text.replace("\n", "\n    "))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from evidence_pipeline.service.app import serve
    except ImportError as exc:
        return _error(f"serve needs the serve extra (pip install 'evidence_pipeline[serve]'): {exc}", 2)
    serve(host=args.host, port=args.port, threads=args.threads)
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.errors import ParseError
    from evidence_pipeline.parser import make_parser
    from evidence_pipeline.pipeline import PipelineOptions, card_of, prepare
    from evidence_pipeline.settings import ParserSettings

    try:
        doc = make_parser(ParserSettings.from_env()).parse(Path(args.file))
    except ParseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    counter = token_counter(None)
    units, children = prepare(doc, counter, PipelineOptions())
    if args.json:
        # Besides the parsed cells, what gets indexed: the document card, each unit's text for
        # the language model, its rows as sentences (footnote markers resolved) and its
        # children as embedded.
        embedded: dict[str, list[dict]] = {u.unit_id: [] for u in units}
        for child in children:
            embedded[child.unit_id].append(child.model_dump() | {"embed_text": child.embed_text})
        card = card_of(units)
        shown = [
            u.model_dump(exclude={"card"}) | {"text": u.text, "row_sentences": u.row_sentences, "children": embedded[u.unit_id]}
            for u in units
        ]
        out = {"parsed": doc.model_dump(), "card": card.model_dump() if card else None, "units": shown}
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    print(f"{doc.doc_id}: {doc.n_pages} pages, {len(doc.tables)} tables, {len(doc.blocks)} blocks ({doc.parser})")
    for unit in units:
        print("-" * 80)
        print(f"[{unit.unit_id}] {unit.kind}")
        print(unit.retrieval_text)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from evidence_pipeline.integrations.mcp_server import run_stdio
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        return _error("the MCP server needs the mcp extra: pip install 'evidence_pipeline[mcp]'", 2)
    run_stdio()
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from evidence_pipeline.tools import missing_tools

    if (reason := missing_tools()) is not None:
        print(f"error: the sample generator needs {reason}", file=sys.stderr)
        return 2
    from evidence_pipeline.tools.samples.corpus import generate_corpus

    paths = generate_corpus(Path(args.out))
    print(f"wrote {len(paths)} documents to {args.out}")
    return 0


def _read_running_code() -> None:
    """A command that writes a report reads the fingerprint of the code it runs before it measures
    (``measurements.running_code``)."""
    from evidence_pipeline.evaluation import measurements

    measurements.running_code()


def cmd_eval(args: argparse.Namespace) -> int:
    _read_running_code()
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
    if args.split != "all":
        from evidence_pipeline.evaluation.splits import filter_split

        questions = filter_split(questions, args.split)
        if not questions:
            print(f"error: no question of {args.questions} is in the {args.split} split", file=sys.stderr)
            return 2
    paths = sorted(expand_paths([args.docs]), key=lambda p: p.name)[: args.limit_docs]
    if not paths:
        print(f"no documents found in {args.docs}", file=sys.stderr)
        return 2

    def wrap(items, desc):
        return tqdm(items, desc=desc, unit="item", file=sys.stderr, disable=args.quiet, leave=False)

    try:
        options = None
        if args.max_parent_tokens is not None:
            from evidence_pipeline.pipeline import PipelineOptions

            options = PipelineOptions(max_parent_tokens=args.max_parent_tokens)
        ablate = _ablated_rules(args.ablate)
        report = evaluate(
            paths, questions, args.systems, wrap=wrap, cache=Path(args.cache) if args.cache else None, options=options, ablate=ablate
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report["meta"]["split"] = args.split
    if args.out:
        for path in write_outputs(report, Path(args.out)):
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps({"systems": report["systems"]}, ensure_ascii=False))
    else:
        meta = report["meta"]
        print(f"{meta['n_questions']} questions over {meta['n_docs']} documents ({meta['seconds']['total']} s)")
        print(text_report(report["systems"]))
        if "ablation" in report:
            from evidence_pipeline.evaluation.ablation import ablation_table
            from evidence_pipeline.evaluation.report import plain_table

            print(f"\nwhat each rule adds to full (full minus full without it; points, 95% CI over documents; split {args.split}):")
            print(plain_table(*ablation_table(report["ablation"])))
    return 0


def _ablated_rules(names: list[str] | None) -> tuple[str, ...]:
    """``--ablate`` alone: every rule; with names: those (ValueError for an unknown one)."""
    if names is None:
        return ()
    from evidence_pipeline.retrieval.rules import ALL_RULES, RULE_NAMES

    for name in names:
        ALL_RULES.without(name)
    return tuple(names) or RULE_NAMES


def cmd_copy_store(args: argparse.Namespace) -> int:
    import os
    from urllib.parse import urlsplit

    from evidence_pipeline.errors import EvidencePipelineError
    from evidence_pipeline.settings import StoreSettings, without_credentials
    from evidence_pipeline.store.copy import copy_store_settings

    shown = without_credentials(args.to_url)
    try:
        parts = urlsplit(args.to_url)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 0) >= 0
    except ValueError:
        valid = False
    if not valid:
        return _error(f"--to-url {shown!r} is not an http(s) URL (e.g. http://qdrant:6333)", 2)
    if args.from_path is not None and not Path(args.from_path).is_dir():
        return _error(f"--from-path {args.from_path}: no such folder", 2)
    local = StoreSettings.from_env()
    source = StoreSettings(path=args.from_path or local.path)
    target = StoreSettings(url=args.to_url, api_key=args.api_key or os.environ.get("QDRANT_API_KEY") or None, collection=args.collection)
    try:
        result = copy_store_settings(source, target)
    except EvidencePipelineError as exc:
        return _error(target.redact(str(exc)), 1)
    print(f"copied {result.documents} documents, {result.points} points from {source.location} to {target.location}")
    return 0


def cmd_parse_quality(args: argparse.Namespace) -> int:
    _read_running_code()
    from evidence_pipeline.evaluation.parser_quality import render_text, run_report

    coverage = [Path(c) for c in args.coverage or []]
    docling_tests = Path(args.docling_tests) if args.docling_tests else None
    corpora = [Path(c) for c in args.corpora or []]
    if not (docling_tests or args.generated or corpora or coverage):
        return _error("parse-quality: choose at least one of --docling-tests DIR, --generated, --corpora DIR..., --coverage DIR...", 2)
    missing = [str(p) for p in [*([docling_tests] if docling_tests else []), *corpora, *coverage] if not p.is_dir()]
    if missing:
        print(f"error: not a folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    generated = args.generated
    if generated or corpora:  # both use PDFs that the sample generator writes
        from evidence_pipeline.tools import missing_tools

        if (reason := missing_tools()) is not None:
            print(f"error: --generated and --corpora need the sample generator: {reason}", file=sys.stderr)
            return 2
    progress = (lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    cache = Path(args.cache) if args.cache else None
    report = run_report(
        docling_tests=docling_tests, generated=generated, corpora=corpora, coverage=coverage, cache=cache, progress=progress
    )
    data = report.model_dump(mode="json")
    if args.out:
        Path(args.out).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    print(json.dumps(data, ensure_ascii=False) if args.json else render_text(report))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    _read_running_code()
    from evidence_pipeline.benchmark import run_bench
    from evidence_pipeline.benchmark.report import text_table

    pdfs = Path(args.pdfs) if args.pdfs else None
    if pdfs is not None and not pdfs.is_dir():
        return _error(f"--pdfs {pdfs}: no such folder", 2)
    ingest = Path(args.ingest) if args.ingest else None
    if ingest is not None and not ingest.is_dir():
        return _error(f"--ingest {ingest}: no such folder", 2)
    if args.ingest_only and ingest is None:
        return _error("--ingest-only needs --ingest DIR", 2)
    report = run_bench(Path(args.out) if args.out else None, quick=args.quick, pdfs=pdfs, ingest=ingest, ingest_only=args.ingest_only)
    print(text_table(report))
    return 0


def cmd_prepare_model(args: argparse.Namespace) -> int:
    from evidence_pipeline.embedding import Embedder
    from evidence_pipeline.settings import EmbeddingSettings

    started = time.perf_counter()
    embedder = Embedder(EmbeddingSettings.from_env()).load()  # exports once, saying so in one line
    where = getattr(embedder.model, "folder", None) or embedder.model_path
    print(f"embedding model ready ({embedder.running_backend}): {where} ({time.perf_counter() - started:.1f} s)")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from evidence_pipeline.evaluation.measurements import (
        NoReports,
        measured_other_code,
        other_code_note,
        running_code,
        write_measurements,
    )

    try:
        out, found = write_measurements(Path(args.reports), Path(args.out), fresh=args.fresh)
    except NoReports as exc:
        return _error(str(exc), 2)
    print(f"wrote {out} from {len(found)} report file{'s' if len(found) != 1 else ''} in {args.reports}")
    code = running_code()  # the fingerprint write_measurements rendered with, read once
    for entry in measured_other_code(found, code):
        print(f"not rendered: {entry.path}: {other_code_note(entry, code)}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    from evidence_pipeline.store.base import SCORE_NOTE  # the contract alone: no Qdrant client

    parser = argparse.ArgumentParser(prog="evidence-pipeline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    raw = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser("ingest", help="ingest files or folders through the Dagster job", epilog=INGEST_EXIT_CODES, formatter_class=raw)
    p.add_argument("paths", nargs="+")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--force", action="store_true", help="re-ingest files whose content and pipeline version are unchanged")
    p.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=LOG_LEVELS,
        help="Dagster run log level (default WARNING); DEBUG also prints the stack trace of a failed document",
    )
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser(
        "search",
        help="hybrid search, one result per parent",
        formatter_class=raw,
        description=textwrap.fill(f"Prints every hit's parent (a table or a section) with its {SCORE_NOTE}.", 78),
        epilog=SEARCH_EXIT_CODES,
    )
    p.add_argument("query", type=_query)
    p.add_argument(
        "--k",
        type=_positive_int,
        default=None,
        help="at most K parents (default 5; with --token-budget, as many as fit, up to 50)",
    )
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="the hits as JSON (what evidence_pipeline.search returns)")
    shown.add_argument("--brief", action="store_true", help="one line per hit, without the parents' text")
    shown.add_argument(
        "--context",
        action="store_true",
        help="only the aggregated text a language model would get: the parents in rank order, "
        "a shared document/section header once (use with --token-budget)",
    )
    p.add_argument(
        "--token-budget",
        type=_positive_int,
        default=None,
        help="keep the parents that fit N tokens, in rank order (the first always: stderr says when it alone is larger)",
    )
    p.set_defaults(func=cmd_search)

    p = sub.add_parser(
        "serve",
        help="search service and page: /search, /documents, /health (model loaded once)",
        epilog="EVIDENCE_API_KEY set: /search, /documents and /contract need the X-API-Key header",
        formatter_class=raw,
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--threads", type=_positive_int, default=1, help="torch threads for query embedding (default 1)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("parse", help="print the parsed document and its evidence units")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser(
        "mcp",
        help="MCP server on stdin/stdout: tools search and get_parent for LLM agents",
        description="An MCP client starts this command and talks to it over stdin/stdout. The store and "
        "model come from the environment (EVIDENCE_STORE_PATH, QDRANT_URL, EVIDENCE_EMBEDDING_MODEL).",
    )
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("generate", help="write the sample SOP corpus")
    p.add_argument("out", nargs="?", default="data/corpus")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("eval", help="score retrieval against a question file, beside four baselines")
    p.add_argument("--docs", required=True, help="folder (or file) of the documents the questions refer to")
    p.add_argument("--questions", required=True, help="JSON Lines question file (shared/eval/FORMAT.md)")
    # evaluation.splits.CHOICES, written out so that `--help` does not import pydantic
    p.add_argument(
        "--split",
        choices=["dev", "validation", "all"],
        default="all",
        help="only the questions whose document falls in this half (a hash of doc_id); every document is still indexed",
    )
    p.add_argument("--out", help="folder for report.json, report.md and report.png")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    # evaluation.systems.SYSTEMS, written out so that `--help` does not import the pipeline
    eval_systems = ["fixed512", "bm25_windows", "hybridchunker", "eu_dense", "full"]
    p.add_argument("--systems", nargs="+", default=eval_systems, choices=eval_systems)
    p.add_argument("--limit-docs", type=int, default=None, help="only the first N documents by file name")
    p.add_argument(
        "--cache", default=None, help="folder that keeps parsed documents and embeddings between runs (same figures, faster reruns)"
    )
    p.add_argument(
        "--max-parent-tokens", type=int, default=None, help="split tables above this many word pieces (default: PipelineOptions)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--ablate",
        nargs="*",
        metavar="RULE",
        default=None,
        help="also ask the full system with each ranking rule off (all rules, or those named) and print what each adds",
    )
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser(
        "copy-store", help="copy the embedded store into a Qdrant server collection", epilog=COPY_STORE_EXIT_CODES, formatter_class=raw
    )
    p.add_argument("--to-url", required=True, help="Qdrant server URL, e.g. http://qdrant:6333")
    p.add_argument("--collection", default="evidence")
    p.add_argument("--api-key", default=None, help="default: $QDRANT_API_KEY")
    p.add_argument("--from-path", default=None, help="Edge store directory (default: $EVIDENCE_STORE_PATH)")
    p.set_defaults(func=cmd_copy_store)

    p = sub.add_parser("parse-quality", help="parser quality and speed on the folders given and the generated SOPs")
    p.add_argument("--docling-tests", default=None, help="folder with pdfs/ and groundtruth/ (Docling's test PDFs)")
    p.add_argument("--generated", action="store_true", help="score the generated SOP corpus (exact truth)")
    p.add_argument("--corpora", nargs="*", default=None, help="folders of PDFs for robustness, speed and memory")
    p.add_argument(
        "--coverage",
        nargs="+",
        default=None,
        metavar="DIR",
        help="share of each PDF's distinct words (pdfium's text) found in its evidence units, lost words listed with page and box",
    )
    p.add_argument(
        "--cache",
        default=None,
        metavar="DIR",
        help="--coverage reads and adds to the parse cache of `eval --cache DIR` (default: parse every file)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--out", default=None, help="also write the JSON report to this file")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_parse_quality)

    p = sub.add_parser("bench", help="throughput and latency per stage, against baselines measured in the same run")
    p.add_argument("--out", help="folder for bench.json and bench.md")
    p.add_argument("--quick", action="store_true", help="small sizes, generated corpus only (CI smoke test)")
    p.add_argument("--pdfs", default=None, metavar="DIR", help="also parse these real PDFs (the README's figures: clinical-protocols/pdfs)")
    p.add_argument(
        "--ingest",
        default=None,
        metavar="DIR",
        help="first ingest DIR end to end (evidence-pipeline ingest, cold, fresh store): pages/s, CPU s/page per stage, "
        "peak RSS; then search() p50/p95 on that store (make bench: the 10-Qs)",
    )
    p.add_argument("--ingest-only", action="store_true", help="only the --ingest measurement")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser(
        "prepare-model",
        help="export the embedding model to ONNX now, once (make install runs it), instead of on the first ingest or search",
    )
    p.set_defaults(func=cmd_prepare_model)

    p = sub.add_parser("report", help="write docs/measurements.md from the latest eval and bench reports (make report)")
    p.add_argument("--reports", default="data/reports", help="folder whose */report.json and */bench.json are read")
    p.add_argument("--out", default="docs/measurements.md", help="the page to write")
    p.add_argument(
        "--fresh", action="store_true", help="render the reports found alone (by default the page's sections with no report there stay)"
    )
    p.set_defaults(func=cmd_report)

    args = parser.parse_args(argv)
    from evidence_pipeline.errors import SettingsError

    try:
        return args.func(args)
    except SettingsError as exc:  # a bad EVIDENCE_* value: one line, usage exit code
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
