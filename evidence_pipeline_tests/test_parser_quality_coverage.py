"""Word coverage (``parse-quality --coverage``): pdfium's words of a PDF against its evidence units."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evidence_pipeline.evaluation.parser_quality.coverage import (
    PLACES_SHOWN,
    coverage_section,
    file_coverage,
    locate_words,
    pdf_words,
    words_of,
)
from evidence_pipeline.evaluation.parser_quality.models import CoverageSection, ParserQualityReport, WordPlace
from evidence_pipeline.evaluation.parser_quality.rendering import render_text
from evidence_pipeline.evaluation.parser_quality.runner import run_report
from evidence_pipeline_tests.conftest import CORPORA

SMALL = CORPORA / "docling-tests" / "pdfs" / "2305.03393v1-pg9.pdf"
SCAN = CORPORA / "clinical-protocols" / "pdfs" / "NCT06155240_Prot_SAP_000.pdf"

needs_shared = pytest.mark.skipif(not SMALL.is_file(), reason="shared corpora not present")


def test_words_are_normalised_like_the_metrics():
    assert words_of("Cell-F1 — TABLE\u00a0Rows") == {"cell", "f1", "table", "rows"}
    assert words_of("Ef\ufffefects of popu\ufffelation") == {"effects", "of", "population"}


@needs_shared
def test_coverage_of_a_one_page_pdf(parse_cached):
    doc = parse_cached(SMALL)
    cov = file_coverage(SMALL, doc)
    reference = pdf_words(SMALL)
    assert cov.words == len(reference) > 100
    assert 0.9 < cov.share <= 1.0
    assert cov.n_lost == cov.words - cov.covered and set(cov.lost) <= reference
    # A unit that drops words shows them as lost.
    fewer = doc.model_copy(update={"blocks": [], "tables": doc.tables})
    assert file_coverage(SMALL, fewer).covered < cov.covered


@needs_shared
def test_words_of_recorded_page_furniture_are_counted_apart(parse_cached):
    """The paper page's running head ("Optimized Table Tokenization for Table Structure
    Recognition 9") is recorded as a page header: its words are accounted for, not lost,
    and counted in ``furniture``; without that record they are lost."""
    doc = parse_cached(SMALL)
    head = [b for b in doc.blocks if b.label == "page_header"]
    assert any("Optimized Table Tokenization" in b.text for b in head)
    cov = file_coverage(SMALL, doc)
    assert cov.furniture >= 2 and "tokenization" not in cov.lost and "optimized" not in cov.lost
    bare = doc.model_copy(update={"blocks": [b for b in doc.blocks if b.label != "page_header"]})
    lost = file_coverage(SMALL, bare)
    assert lost.furniture == 0 and {"tokenization", "optimized"} <= set(lost.lost)
    assert lost.covered == cov.covered - cov.furniture


@needs_shared
def test_a_scan_has_no_figure_but_a_reason(parse_cached, tmp_path):
    (tmp_path / SCAN.name).symlink_to(SCAN)
    section = coverage_section(parse_cached, [tmp_path])
    (row,) = section.files
    assert row.share is None and row.error == "no text layer: needs OCR"
    assert section.mean is None
    text = render_text(ParserQualityReport(parser="x", cpus=1, load_avg_start=[], coverage=section))
    assert "no text layer: needs OCR" in text


@needs_shared
def test_the_command_prints_each_file_and_the_mean(tmp_path):
    (tmp_path / SMALL.name).symlink_to(SMALL)
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "evidence_pipeline.cli", "parse-quality", "--coverage", str(tmp_path), "--quiet", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr
    assert SMALL.name in proc.stdout and "mean" in proc.stdout
    data = json.loads(out.read_text())
    (row,) = data["coverage"]["files"]
    assert row["file"] == SMALL.name and row["folder"] == str(tmp_path) and data["coverage"]["mean"] == row["share"]


# --------------------------------------------------------------------------- lost words located

# A two-page PDF: the rare word four times at the top of page 2, left-aligned at x = 72 pt.
RARE = "Quillwort"
LEFT, BASELINE_FROM_TOP, SIZE = 72.0, 100.0, 12.0
PAGE_TWO_TOP_LINE = f"{RARE} and {RARE.lower()} beside {RARE.upper()} and {RARE} grew near the creek."


@pytest.fixture(scope="module")
def two_pages(tmp_path_factory) -> Path:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen.canvas import Canvas

    path = tmp_path_factory.mktemp("coverage") / "two_pages.pdf"
    c = Canvas(str(path), pagesize=A4, invariant=1)
    c.setFont("Helvetica", SIZE)
    height = A4[1]
    c.drawString(LEFT, height - BASELINE_FROM_TOP, "The first page tells of pumps, valves and their maintenance.")
    c.drawString(LEFT, height - BASELINE_FROM_TOP - 20, "Each valve is checked every week by the shift engineer.")
    c.showPage()
    c.setFont("Helvetica", SIZE)
    c.drawString(LEFT, height - BASELINE_FROM_TOP, PAGE_TWO_TOP_LINE)
    c.drawString(LEFT, height - BASELINE_FROM_TOP - 60, "A closing paragraph on the second page, about pumps again.")
    c.showPage()
    c.save()
    return path


def _drawn_spans(line: str, word: str) -> list[tuple[float, float]]:
    """Where reportlab's pen puts each occurrence of ``word`` (any case) in ``line`` drawn at ``LEFT``."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    spans, at = [], line.lower().find(word.lower())
    while at >= 0:
        start = LEFT + stringWidth(line[:at], "Helvetica", SIZE)
        spans.append((start, start + stringWidth(line[at : at + len(word)], "Helvetica", SIZE)))
        at = line.lower().find(word.lower(), at + 1)
    return spans


def _without(doc, fragment: str):
    """The parse with every block holding ``fragment`` dropped: its words reach no unit."""
    kept = [b for b in doc.blocks if fragment not in b.text]
    assert len(kept) < len(doc.blocks), [b.text for b in doc.blocks]
    return doc.model_copy(update={"blocks": kept})


def _read_back(path: Path, place: WordPlace) -> str:
    """pdfium's text inside ``place``'s box (turned back to pdfium's bottom-left origin)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        page = pdf[place.page - 1]
        height = page.get_height()
        l, t, r, b = place.box
        return page.get_textpage().get_text_bounded(l - 0.2, height - b - 0.2, r + 0.2, height - t + 0.2)
    finally:
        pdf.close()


def test_a_word_left_out_of_the_units_is_lost_with_its_page_and_box(two_pages, parse_cached):
    doc = parse_cached(two_pages)
    whole = file_coverage(two_pages, doc)
    assert whole.n_lost == 0 and whole.lost_at == []
    cov = file_coverage(two_pages, _without(doc, RARE))
    assert "quillwort" in cov.lost and {"grew", "creek", "beside"} <= set(cov.lost)
    rare = [p for p in cov.lost_at if p.word == "quillwort"]
    # four occurrences on the page, the first PLACES_SHOWN kept, in reading order
    assert len(rare) == PLACES_SHOWN == 3 and [p.page for p in rare] == [2, 2, 2]
    assert len(_drawn_spans(PAGE_TWO_TOP_LINE, RARE)) == 4
    for place, (start, end) in zip(rare, _drawn_spans(PAGE_TWO_TOP_LINE, RARE), strict=False):
        l, t, r, b = place.box
        # the pen's span of the word, less the glyphs' side bearings
        assert start <= l < start + 1.5 and end - 1.5 < r <= end, (place, start, end)
        # one line 12 pt high: the cap height above the baseline, the descender of "q" below it
        assert BASELINE_FROM_TOP - SIZE < t < BASELINE_FROM_TOP - 6 and BASELINE_FROM_TOP < b < BASELINE_FROM_TOP + 4
        assert words_of(_read_back(two_pages, place)) == {"quillwort"}
    # the words of page 1 were all kept: nothing lost is placed there
    assert {p.page for p in cov.lost_at} == {2}


def test_locate_words_keeps_a_page_range_and_the_order_of_the_text(two_pages):
    assert locate_words(two_pages, {"pumps"}, pages=(2, 2))[0].page == 2
    places = locate_words(two_pages, {"pumps", "valve"})
    assert [(p.word, p.page) for p in places] == [("pumps", 1), ("valve", 1), ("pumps", 2)]
    assert locate_words(two_pages, {"absentword"}) == []


def test_the_text_report_prints_each_lost_word_with_page_and_box(two_pages, parse_cached):
    cov = file_coverage(two_pages, _without(parse_cached(two_pages), RARE))
    text = render_text(ParserQualityReport(parser="x", cpus=1, load_avg_start=[], coverage=CoverageSection(files=[cov])))
    first = next(p for p in cov.lost_at if p.word == "quillwort")
    l, t, r, b = first.box
    assert f"    page 2 ({l:.1f}, {t:.1f}, {r:.1f}, {b:.1f}): quillwort" in text.splitlines()
    assert len([line for line in text.splitlines() if line.startswith("    page ")]) == len(cov.lost_at)


class _CountingParser:
    """A parser whose parses are counted (``calls``); the parse is the session's real one."""

    name = "counting-parser"

    def __init__(self, parse):
        self._parse, self.calls = parse, []

    def parse(self, path, doc_id=None):
        self.calls.append((Path(path).name, doc_id))
        return self._parse(path)


def test_coverage_through_the_eval_cache_parses_once_then_reads_back(two_pages, parse_cached, tmp_path):
    from evidence_pipeline.pipeline import PIPELINE_VERSION
    from evidence_pipeline.records import sha256_file

    folder = tmp_path / "pdfs"
    folder.mkdir()
    (folder / two_pages.name).symlink_to(two_pages)
    parser = _CountingParser(parse_cached)
    first = run_report(coverage=[folder], cache=tmp_path / "cache", parser=parser)
    stored = tmp_path / "cache" / "parsed" / f"counting-parser-v{PIPELINE_VERSION}" / f"{sha256_file(str(two_pages))}.json"
    assert parser.calls == [("two_pages.pdf", "two_pages")] and stored.is_file()
    second = run_report(coverage=[folder], cache=tmp_path / "cache", parser=parser)
    assert len(parser.calls) == 1  # read back, not parsed
    assert second.coverage.files == first.coverage.files and first.coverage.files[0].n_lost == 0
    run_report(coverage=[folder], parser=parser)  # without a cache every file parses
    assert len(parser.calls) == 2


def test_the_cache_key_is_evals(two_pages, parse_cached, tmp_path, monkeypatch):
    """A parse stored by ``eval --cache`` is the one coverage reads, and one stored by coverage
    is the one eval reads: here a parse with the rare line dropped, so that neither can have
    parsed the file again unseen."""
    from evidence_pipeline.evaluation.cache import ParseCache
    from evidence_pipeline.evaluation.runner import parse_documents
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.parser.baseline_chunks import ConvertingParser
    from evidence_pipeline.pipeline import PIPELINE_VERSION
    from evidence_pipeline.settings import ParserSettings

    folder = tmp_path / "pdfs"
    folder.mkdir()
    (folder / two_pages.name).symlink_to(two_pages)
    fewer = _without(parse_cached(two_pages), RARE).model_copy(update={"doc_id": "two_pages"})
    name = ConvertingParser(ParserSettings.from_env()).name  # as eval names it
    ParseCache(tmp_path / "cache", f"{name}-v{PIPELINE_VERSION}").put(fewer, None)

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed instead of reading the cache")

    monkeypatch.setattr(ConvertingParser, "convert", no_parse)
    monkeypatch.setattr(DoclingParser, "parse", no_parse)
    (evaled,) = parse_documents([folder / two_pages.name], with_docling=False, cache=tmp_path / "cache", log=print)
    assert [b.text for b in evaled.parsed.blocks] == [b.text for b in fewer.blocks]
    report = run_report(coverage=[folder], cache=tmp_path / "cache")
    (row,) = report.coverage.files
    assert "quillwort" in row.lost and row.lost_at[0].page == 2


def test_make_report_renders_the_coverage_per_corpus_and_the_worst_files(tmp_path):
    from evidence_pipeline.evaluation.measurements import find_reports, render
    from evidence_pipeline.evaluation.parser_quality.models import CoverageFile

    def row(folder, name, words, covered, lost=(), at=()):
        return CoverageFile(
            file=name, folder=folder, words=words, covered=covered, n_lost=words - covered, lost=list(lost), lost_at=list(at)
        )

    files = [
        row("../shared/corpora/sec-10q-dev", "a.pdf", 1000, 1000),
        row("../shared/corpora/sec-10q-dev", "b.pdf", 1000, 980, ["zeta", "alpha"], [WordPlace(word="zeta", page=4, box=(1, 2, 3, 4))]),
        row("../shared/corpora/clinical-protocols/pdfs", "c.pdf", 500, 499, ["omega"]),
        CoverageFile(
            file="scan.pdf", folder="../shared/corpora/clinical-protocols/pdfs", words=0, covered=0, error="no text layer: needs OCR"
        ),
    ]
    report = ParserQualityReport(parser="docling-x", cpus=2, load_avg_start=[], coverage=CoverageSection(files=files))
    report.recorded = {"commit": "0123456789abcdef", "dirty": False, "utc": "2026-12-02T19:00:00Z", "pipeline_version": "22"}
    (tmp_path / "coverage.json").write_text(json.dumps(report.model_dump(mode="json")), encoding="utf-8")
    page = render(find_reports(tmp_path), tmp_path)
    assert "## Word coverage — `make coverage`" in page and "from 1 report in" in page
    assert "all files: mean 0.9927, min 0.9800" in page and "commit `0123456789`" in page
    assert "| sec-10q-dev | 2 | 0 | 0.9900 | 0.9800 | 1 |" in page
    assert "| clinical-protocols | 2 | 1 | 0.9980 | 0.9980 | 0 |" in page
    worst = [line for line in page.splitlines() if line.startswith("| sec-10q-dev | `") or line.startswith("| clinical-protocols | `")]
    assert worst == [
        "| sec-10q-dev | `b.pdf` | 0.9800 | 20 | `zeta (p. 4)`, `alpha` |",
        "| clinical-protocols | `c.pdf` | 0.9980 | 1 | `omega` |",
        "| sec-10q-dev | `a.pdf` | 1.0000 | 0 |  |",
    ]
