"""Over-long cells and over-wide tables are cut with a warning, on hand-made and generated documents."""

from __future__ import annotations

import pytest

from evidence_pipeline.embedding import token_counter
from evidence_pipeline.parser import DoclingParser
from evidence_pipeline.parser.table_limits import TRUNCATION_MARK, limit_tables
from evidence_pipeline.pipeline import PipelineOptions, evidence_units, split_evidence_units
from evidence_pipeline.settings import ParserSettings
from evidence_pipeline_tests.docs import lnp_doc
from evidence_pipeline_tests.hostile_docs import huge_cell_and_wide_table_html, long_cell_and_wide_table_pdf


def test_a_table_within_the_limits_is_returned_unchanged():
    doc = lnp_doc()
    assert limit_tables(doc, max_cell_chars=100, max_cols=5) is doc


def test_wide_tables_keep_their_first_columns_and_spans_are_clipped():
    doc = lnp_doc()  # 5 columns; header "Flow rate" spans columns 1-2, "Pressure" 3-4
    out = limit_tables(doc, max_cell_chars=100, max_cols=4)
    table = out.tables[0]
    assert table.n_cols == 4 and max(c.col + c.col_span for c in table.cells) == 4
    assert [c.text for c in table.cells if c.row == 0] == ["Stream", "Flow rate (mL/min)", "Pressure (bar)"]
    assert table.grid()[2] == ["Aqueous Phase 1", "0.6", "1.8", "1.1"]
    assert out.warnings == [*doc.warnings, "table t0 (Table 1: Pump flow rate limits): 5 columns, only the first 4 kept"]


def test_long_cells_are_cut_with_a_mark():
    doc = lnp_doc()
    out = limit_tables(doc, max_cell_chars=12, max_cols=50)
    texts = {(c.row, c.col): c.text for c in out.tables[0].cells}
    assert texts[(2, 0)] == "Aqueous Ph" + TRUNCATION_MARK and len(texts[(2, 0)]) <= 12
    assert texts[(2, 1)] == "0.6"
    assert "3 cell(s) cut to 12 characters (longest 18)" in out.warnings[-1]


@pytest.fixture(scope="module")
def inline_parser() -> DoclingParser:
    return DoclingParser(ParserSettings(isolation="inline"))


def _units(doc):
    counter, options = token_counter(None), PipelineOptions()
    return split_evidence_units(evidence_units(doc, options, counter), options, counter)


def test_a_generated_pdf_with_a_long_cell_and_a_600_column_table_is_cut_not_failed(tmp_path, inline_parser):
    pdf = long_cell_and_wide_table_pdf(tmp_path / "hostile.pdf", cell_chars=30_000, n_cols=600)
    doc = inline_parser.parse(pdf)
    settings = inline_parser.settings
    assert max(len(c.text) for t in doc.tables for c in t.cells) <= settings.max_cell_chars
    assert [t.n_cols for t in doc.tables] == [2, settings.max_table_cols]
    cut = [w for w in doc.warnings if "cut to" in w or "columns, only" in w]
    assert len(cut) == 2, doc.warnings
    assert "(longest 30,000)" in cut[0] and "600 columns, only the first 500 kept" in cut[1]
    assert any(u.caption == "Table 2: Wide readings" for u in _units(doc))  # the rest of the pipeline goes on


def test_an_html_table_with_a_10_mb_cell_and_5000_columns_is_cut_not_failed(tmp_path, inline_parser):
    html = huge_cell_and_wide_table_html(tmp_path / "hostile.html", cell_chars=10_000_000, n_cols=5000)
    doc = inline_parser.parse(html)
    long_note, wide = doc.tables
    assert max(len(c.text) for c in long_note.cells) == inline_parser.settings.max_cell_chars
    assert (wide.n_rows, wide.n_cols) == (4, 500)
    assert [c.text for c in wide.cells if c.row == 0][-1] == "c499"
    assert "(longest 10,000,000)" in doc.warnings[0] and "5000 columns, only the first 500 kept" in doc.warnings[1]
    assert sum(len(u.text) for u in _units(doc)) < 200_000
