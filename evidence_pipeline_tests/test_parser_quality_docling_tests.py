"""Section 1 of parse-quality: the groundtruth loader on Docling's JSON form and the scoring."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from evidence_pipeline.evaluation.parser_quality.docling_tests import load_groundtruth, score_docling_test
from evidence_pipeline_tests.docs import box as _box
from evidence_pipeline_tests.docs import doc_with_tables as _doc
from evidence_pipeline_tests.docs import table_of as _table


def test_docling_test_scoring_on_a_hand_made_document():
    truth_tables = [
        # like Docling's JSON: BOTTOMLEFT origin, page height 800 -> top-left t=100, b=200
        {
            "label": "table",
            "prov": [{"page_no": 1, "bbox": {"l": 50, "t": 700, "r": 250, "b": 600, "coord_origin": "BOTTOMLEFT"}}],
            "captions": [{"$ref": "#/texts/0"}],
            "data": {"table_cells": [{"text": t} for t in ["Name", "Value", "pH", "7.0"]]},
        },
        {
            "label": "table",
            "prov": [{"page_no": 2, "bbox": {"l": 50, "t": 700, "r": 250, "b": 600, "coord_origin": "BOTTOMLEFT"}}],
            "captions": [],
            "data": {"table_cells": [{"text": "x"}]},
        },
    ]
    raw = {
        "texts": [{"self_ref": "#/texts/0", "text": "Table 1. Buffer  values"}],
        "pages": {"1": {"size": {"width": 600, "height": 800}}, "2": {"size": {"width": 600, "height": 800}}},
        "tables": truth_tables,
    }
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
