"""Word coverage (``parse-quality --coverage``): pdfium's words of a PDF against its evidence units."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from evidence_pipeline.evaluation.parser_quality.coverage import coverage_section, file_coverage, pdf_words, words_of
from evidence_pipeline.evaluation.parser_quality.models import ParserQualityReport
from evidence_pipeline.evaluation.parser_quality.rendering import render_text
from evidence_pipeline_tests.conftest import CORPORA

SMALL = CORPORA / "docling-tests" / "pdfs" / "2305.03393v1-pg9.pdf"
SCAN = CORPORA / "clinical-protocols" / "pdfs" / "NCT06155240_Prot_SAP_000.pdf"

pytestmark = pytest.mark.skipif(not SMALL.is_file(), reason="shared corpora not present")


def test_words_are_normalised_like_the_metrics():
    assert words_of("Cell-F1 — TABLE\u00a0Rows") == {"cell", "f1", "table", "rows"}
    assert words_of("Ef\ufffefects of popu\ufffelation") == {"effects", "of", "population"}


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


def test_a_scan_has_no_figure_but_a_reason(parse_cached, tmp_path):
    (tmp_path / SCAN.name).symlink_to(SCAN)
    section = coverage_section(parse_cached, [tmp_path])
    (row,) = section.files
    assert row.share is None and row.error == "no text layer: needs OCR"
    assert section.mean is None
    text = render_text(ParserQualityReport(parser="x", cpus=1, load_avg_start=[], coverage=section))
    assert "no text layer: needs OCR" in text


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
