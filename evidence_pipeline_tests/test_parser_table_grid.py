"""Column edges of a table's grid: rulings, white gaps, and the label column beside them."""

from __future__ import annotations

import pytest

from evidence_pipeline.parser.geometry import Box, Rules, Span
from evidence_pipeline.parser.table_grid import build_grid
from evidence_pipeline_tests.conftest import CORPORA

TENQ = CORPORA / "sec-10q-dev" / "pdfs"
SIZE = 8.0


def _line(y: float, *items: tuple[float, float, str]) -> list[Span]:
    return [Span(0, text, Box(l, y, r, y + SIZE), size=SIZE) for l, r, text in items]


def _rows(grid) -> list[list[str]]:
    rows: dict[int, list[str]] = {}
    for c in sorted(grid.cells, key=lambda c: (c.row, c.col)):
        rows.setdefault(c.row, []).append(c.text)
    return [rows[r] for r in sorted(rows)]


def _ruled_between_values(xs: list[float], top: float, bottom: float, row: float) -> Rules:
    # one short segment per row at each edge between value columns, as EDGAR draws them
    y = top
    vertical = []
    while y < bottom:
        vertical += [(x, y, y + row) for x in xs]
        y += row
    return Rules(vertical=vertical)


def test_figures_parted_from_the_labels_by_white_space_alone_are_a_column():
    """Rulings between the value columns only, none between the labels and the first of them:
    the first value column is a column, not part of the labels."""
    words = [
        *_line(10, (230, 246, "2021"), (296, 312, "2022"), (360, 376, "2021")),
        *_line(24, (20, 100, "Operating activities"), (209, 264, "$7,313"), (274, 329, "$11,404"), (339, 394, "$24,241")),
        *_line(38, (20, 100, "Investing activities"), (236, 266, "(14,828)"), (301, 331, "(15,608)"), (366, 397, "(45,574)")),
        *_line(52, (20, 100, "Financing activities"), (240, 266, "(2,776)"), (309, 329, "3,016"), (374, 394, "9,391")),
    ]
    box = Box(18, 8, 470, 62)
    grid = build_grid(words, _ruled_between_values([267, 332, 397], 20, 62, 14), box)
    assert grid.n_cols == 4
    assert _rows(grid)[1:] == [
        ["Operating activities", "$7,313", "$11,404", "$24,241"],
        ["Investing activities", "(14,828)", "(15,608)", "(45,574)"],
        ["Financing activities", "(2,776)", "3,016", "9,391"],
    ]


def test_a_gap_inside_the_labels_before_the_first_ruling_parts_nothing():
    """An item's number set apart from its text, left of the first ruling: text, not figures,
    stands right of the gap, so the two stay one column."""
    words = [
        *_line(24, (20, 28, "1."), (60, 150, "Informed consent"), (268, 331, "At screening only"), (333, 396, "Not repeated")),
        *_line(38, (20, 28, "2."), (60, 140, "Vital signs"), (268, 330, "At every visit"), (334, 396, "At every visit")),
        *_line(52, (20, 28, "3."), (60, 160, "Physical examination"), (269, 331, "At screening only"), (333, 395, "At the last visit")),
    ]
    box = Box(18, 20, 400, 62)
    grid = build_grid(words, _ruled_between_values([267, 332], 20, 62, 14), box)
    assert [r[0] for r in _rows(grid)] == ["1. Informed consent", "2. Vital signs", "3. Physical examination"]


@pytest.mark.skipif(not (TENQ / "2022 Q3 AMZN.pdf").exists(), reason="shared 10-Q corpus not present")
def test_real_statement_ruled_between_its_value_columns_only():
    """Amazon's 2022 Q3 10-Q, p. 22: cash flows by activity, ruled between the value columns and
    not between the labels and the first of them. Its first column of figures and the year over it
    had been read into the labels ("Operating activities $7,313", a head "2021 Cash provided by")."""
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.units import build_units

    doc = DoclingParser().parse(TENQ / "2022 Q3 AMZN.pdf", pages=(22, 22))
    (unit,) = [u for u in build_units(doc) if u.kind == "table" and any(r[0] == "Operating activities" for r in u.rows)]
    assert [r[0] for r in unit.rows] == [
        "Cash provided by (used in):",
        "Operating activities",
        "Investing activities",
        "Financing activities",
    ]
    assert unit.rows[1][1:] == ["$7,313", "$11,404", "$24,241", "$17,579", "$54,671", "$39,665"]
    assert unit.header[-1] == ["", "2021", "2022", "2021", "2022", "2021", "2022"]
