"""The parser-quality measures: metric functions on hand-made cases, the groundtruth loader on
Docling's JSON, and the generated-SOP section on two real generated documents."""

from __future__ import annotations

import json

import pytest

from evidence_pipeline.evaluation.parser_quality import (
    Counts,
    load_groundtruth,
    generated_section,
    iou,
    match_boxes,
    multiset_counts,
    render_text,
    same_caption,
    score_docling_test,
    statement_check,
    text_key,
)
from evidence_pipeline.records import BBox, ParsedDoc, Table, TableCell


def _box(l, t, r, b) -> BBox:
    return BBox(l=l, t=t, r=r, b=b)


def _table(tid: str, page: int, box: BBox, rows: list[list[str]], caption: str | None = None, header_rows: int = 1) -> Table:
    cells = [TableCell(row=r, col=c, text=x) for r, row in enumerate(rows) for c, x in enumerate(row)]
    return Table(id=tid, order=0, n_rows=len(rows), n_cols=len(rows[0]), cells=cells, header_rows=header_rows,
                 page=page, bbox=box, caption=caption)


def _doc(tables: list[Table]) -> ParsedDoc:
    return ParsedDoc(doc_id="d", source="d.pdf", title="d", n_pages=2, content_hash="h", parser="p", tables=tables)


def test_iou_of_boxes():
    a = _box(0, 0, 10, 10)
    assert iou(a, a) == 1.0
    assert iou(a, _box(5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert iou(a, _box(10, 0, 20, 10)) == 0.0  # touching edges share no area
    assert iou(a, _box(0, 0, 10, 20)) == pytest.approx(0.5)


def test_boxes_match_one_to_one_on_the_same_page_above_the_threshold():
    truth = [(1, _box(0, 0, 100, 100)), (1, _box(0, 200, 100, 300)), (2, _box(0, 0, 100, 100))]
    pred = [
        (1, _box(0, 195, 100, 300)),  # the second truth table
        (1, _box(0, 0, 100, 60)),  # IoU 0.6 with the first
        (1, _box(0, 0, 100, 55)),  # IoU 0.55: loses to the better box above
        (3, _box(0, 0, 100, 100)),  # same box, wrong page
    ]
    assert match_boxes(truth, pred) == {0: 1, 1: 0}
    assert match_boxes(truth, pred, threshold=0.7) == {1: 0}
    assert match_boxes([(1, None)], [(1, _box(0, 0, 1, 1))]) == {}


def test_multiset_f1_counts_repeats_and_ignores_spacing_case_and_dashes():
    c = multiset_counts(["A", "A", "B", "", "1 000", "x\u2013y"], ["a", "B", "B", "C", "1000", "X-Y"])
    assert (c.tp, c.n_truth, c.n_pred) == (4, 5, 6)  # A once, B once, 1 000, x-y
    assert (c.precision, c.recall, c.f1) == pytest.approx((4 / 6, 4 / 5, 8 / 11))
    total = c.add(Counts(tp=0, n_truth=3, n_pred=0))  # micro-average: counts add up
    assert total.recall == pytest.approx(0.5) and total.precision == pytest.approx(4 / 6)
    assert total.f1 == pytest.approx(8 / 14)
    assert Counts().f1 is None and Counts().recall is None


def test_caption_match_normalises_text_but_not_content():
    assert same_caption("Table 2-1   FUNCTION_USAGE view", "table 2\u20131 function_usage VIEW")
    assert same_caption("Table 1: Pump\nflow", "Table 1:Pump flow")
    assert not same_caption("Table 1: Pump flow", "Table 1: Pump flow rate")
    assert not same_caption(None, None) and not same_caption("", "")
    assert text_key(" \u00b2 ") == "2"  # NFKC: a superscript marker reads as its digit on both sides


def test_docling_test_scoring_on_a_hand_made_document():
    truth_tables = [
        # like Docling's JSON: BOTTOMLEFT origin, page height 800 -> top-left t=100, b=200
        {"label": "table", "prov": [{"page_no": 1, "bbox": {"l": 50, "t": 700, "r": 250, "b": 600, "coord_origin": "BOTTOMLEFT"}}],
         "captions": [{"$ref": "#/texts/0"}], "data": {"table_cells": [{"text": t} for t in ["Name", "Value", "pH", "7.0"]]}},
        {"label": "table", "prov": [{"page_no": 2, "bbox": {"l": 50, "t": 700, "r": 250, "b": 600, "coord_origin": "BOTTOMLEFT"}}],
         "captions": [], "data": {"table_cells": [{"text": "x"}]}},
    ]
    raw = {"texts": [{"self_ref": "#/texts/0", "text": "Table 1. Buffer  values"}],
           "pages": {"1": {"size": {"width": 600, "height": 800}}, "2": {"size": {"width": 600, "height": 800}}},
           "tables": truth_tables}
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gt.json"
        path.write_text(json.dumps(raw))
        truth = load_groundtruth(path)
    assert truth[0].bbox == _box(50, 100, 250, 200) and truth[0].caption == "Table 1. Buffer  values"
    ours = [
        _table("d/t1", 1, _box(52, 98, 250, 205), [["Name", "Value"], ["pH", "7.1"]], caption="Table 1. Buffer values"),
        _table("d/t2", 1, _box(50, 500, 250, 600), [["a", "b"], ["c", "d"]]),
    ]
    row = score_docling_test(_doc(ours), truth)
    assert (row.n_truth, row.n_pred, row.matched) == (2, 2, 1)
    assert (row.captions_truth, row.captions_ok) == (1, 1)
    assert (row.cells.tp, row.cells.n_truth, row.cells.n_pred) == (3, 4, 4)
    assert any(m.startswith("missed table p2") for m in row.misses)
    assert any(m.startswith("extra table p1") for m in row.misses)


def test_statement_check_reads_row_labels_of_the_body():
    income = _table("d/t1", 3, _box(0, 0, 1, 1), [["", "2023"], ["Products", "$1"], ["Total net sales", "$2"]])
    header_only = _table("d/t2", 5, _box(0, 0, 1, 1), [["Total assets", "x"], ["Cash", "1"]])
    balance = _table("d/t3", 6, _box(0, 0, 1, 1), [["", "2023"], ["Total assets (1)", "$9"]])
    assert statement_check(_doc([income, header_only, balance])) == {"revenue": "p3 3x2", "total_assets": "p6 2x2"}
    piece = _table("d/t4", 6, _box(0, 0, 1, 1), [["", "2023"], ["Cash", "$1"]])
    assert statement_check(_doc([balance, piece]))["total_assets"] == "p6 2x2 (1 of 2 on page)"
    assert statement_check(_doc([header_only])) == {"revenue": None, "total_assets": None}


def test_generated_sops_score_at_least_095_on_every_figure(sample_corpus):
    from evidence_pipeline.parser import DoclingParser

    parser = DoclingParser()
    # SOP-8812: two-level ruled header, footnotes; SOP-ENG-114: a table crossing a page break
    pdfs = [sample_corpus / "SOP-8812.pdf", sample_corpus / "SOP-ENG-114.pdf"]
    section = generated_section(parser.parse, pdfs, sample_corpus.parent / "truth")
    assert section["counts"]["tables_truth"] == 5 and section["counts"]["continues_truth"] == 1
    assert section["counts"]["footnotes_truth"] == 2 and section["counts"]["sections_truth"] == 19
    for name, value in section["totals"].items():
        assert value is not None and value >= 0.95, (name, value, [d["misses"] for d in section["docs"]])
    text = render_text({"parser": "p", "cpus": 2, "load_avg_start": [0], "load_avg_end": [0], "total_seconds": 1, "generated": section})
    assert "body_cell_f1" in text and "MISS" not in text
