"""One ``parse-quality`` run: the chosen sections with one parser instance."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from evidence_pipeline.errors import ParseError
from evidence_pipeline.evaluation.measurements import recorded
from evidence_pipeline.evaluation.parser_quality.coverage import coverage_section
from evidence_pipeline.evaluation.parser_quality.docling_tests import docling_tests_section
from evidence_pipeline.evaluation.parser_quality.generated import generated_section
from evidence_pipeline.evaluation.parser_quality.models import FileResult, ParserQualityReport, WarmUp
from evidence_pipeline.evaluation.parser_quality.robustness import robustness_section, timed_parse
from evidence_pipeline.records import ParsedDoc

# The warm-up file of Docling's test PDFs: one page with one table.
WARM_UP_PDF = "2305.03393v1-pg9.pdf"


def _load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def through_cache(parse: Callable[[Path, str], ParsedDoc], cache: Path, parser_name: str) -> Callable[[Path], ParsedDoc]:
    """``parse`` behind the parse cache of ``evidence-pipeline eval --cache`` (``cache``): the same
    folder and key as ``evaluation.runner.parse_documents`` (file bytes, ``parser_name`` and the
    pipeline version; the document id of the file name), so a file either command parsed before
    is read back, and a file parsed here is stored for both."""
    from evidence_pipeline.corpus import doc_id_for
    from evidence_pipeline.evaluation.cache import ParseCache
    from evidence_pipeline.pipeline import PIPELINE_VERSION
    from evidence_pipeline.records import sha256_file

    stored = ParseCache(cache, f"{parser_name}-v{PIPELINE_VERSION}")

    def parse_cached(path: Path) -> ParsedDoc:
        doc_id = doc_id_for(path)
        hit = stored.get(sha256_file(str(path)), doc_id, with_docling=False)
        if hit is not None:
            return hit[0]
        parsed = parse(path, doc_id)
        stored.put(parsed, None)
        return parsed

    return parse_cached


def run_report(
    *,
    docling_tests: Path | None = None,
    generated: bool = False,
    corpora: Sequence[Path] = (),
    coverage: Sequence[Path] = (),
    cache: Path | None = None,
    parser=None,
    progress: Callable[[str], None] = lambda msg: None,
) -> ParserQualityReport:
    """Run the chosen sections with one parser instance; the first parse is the warm-up.

    ``generated`` and ``corpora`` need the sample generator (the ``tools`` extra): the
    generated corpus is scored, and its smallest PDF is the memory-growth file. ``cache``: the
    coverage section reads (and adds to) the parse cache of ``eval --cache`` there
    (``through_cache``); the timed sections always parse.
    """
    if parser is None:
        from evidence_pipeline.parser import DoclingParser
        from evidence_pipeline.settings import ParserSettings

        parser = DoclingParser(ParserSettings.from_env())
    shared_results: list[FileResult] = []

    def parse(path: Path, doc_id: str | None = None) -> ParsedDoc:
        progress(f"parsing {path.name}")
        return parser.parse(path, doc_id) if doc_id is not None else parser.parse(path)

    def parse_timed(path: Path) -> ParsedDoc:
        res, doc = timed_parse(parse, path, path.parent.parent.name)
        shared_results.append(res)
        if doc is None:
            raise ParseError(str(path), res.error or "failed")
        return doc

    report = ParserQualityReport(parser=getattr(parser, "name", type(parser).__name__), cpus=os.cpu_count(), load_avg_start=_load_avg())
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="parse-quality-") as tmp:
        gen_pdfs: list[Path] = []
        if generated or corpora:
            from evidence_pipeline.tools.samples.corpus import generate_corpus

            gen_pdfs = generate_corpus(Path(tmp) / "corpus")
        # Warm-up and the 50-conversion memory check use a one- or two-page PDF.
        small = Path(docling_tests) / "pdfs" / WARM_UP_PDF if docling_tests else None
        tiny = min(gen_pdfs, key=lambda p: p.stat().st_size) if gen_pdfs else None
        warm = small if small is not None and small.is_file() else tiny
        if warm is not None:
            t = time.perf_counter()
            res, _ = timed_parse(parse, warm, "warm-up")
            report.warm_up = WarmUp(file=warm.name, seconds=round(time.perf_counter() - t, 1), ok=res.ok)
        if docling_tests is not None:
            report.docling_tests = docling_tests_section(parse_timed, Path(docling_tests))
        if generated:
            report.generated = generated_section(parse, gen_pdfs, Path(tmp) / "truth")
        if corpora:
            report.robustness = robustness_section(parse, corpora, shared_results, growth_pdf=tiny)
        if coverage:
            parser_name = getattr(parser, "name", type(parser).__name__)
            report.coverage = coverage_section(through_cache(parse, cache, parser_name) if cache else parse, coverage)
    report.load_avg_end = _load_avg()
    report.total_seconds = round(time.perf_counter() - started, 1)
    report.recorded = recorded()
    return report
