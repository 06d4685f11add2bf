"""The parser-quality comparison measures on hand-made cases."""

from __future__ import annotations

import pytest

from evidence_pipeline.evaluation.parser_quality.metrics import Counts, iou, match_boxes, multiset_counts, same_caption, text_key
from evidence_pipeline.records import BBox


def _box(l, t, r, b) -> BBox:
    return BBox(l=l, t=t, r=r, b=b)


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
