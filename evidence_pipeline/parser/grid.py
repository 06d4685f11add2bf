"""The cell grid of a table, and the passes that tidy a grid once its cells are placed.

Spanning cells in ruled grids, columns that hold only currency signs or percent signs
folded into their neighbour, empty columns dropped, overlapping spans cut, and the header
rows: the leading rows that hold spanning cells, leave the stub column empty, or are set
in bold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evidence_pipeline.parser.geometry import Box, Rules, Span
from evidence_pipeline.parser.text_lines import is_numeric
from evidence_pipeline.tables import is_key_value, text_row

LEADING_SYMBOLS = {"$", "€", "£", "¥", "US$"}
TRAILING_SYMBOLS = {"%", ")", "%)", "pts", "bps"}


@dataclass
class GridCell:
    row: int
    col: int
    text: str
    box: Box
    row_span: int = 1
    col_span: int = 1
    column_header: bool = False
    bold: bool = False


@dataclass
class Grid:
    n_rows: int
    n_cols: int
    cells: list[GridCell] = field(default_factory=list)
    header_rows: int = 0


def ruled_spans(grid: Grid, rows: list[list[Span]], edges: list[float], rules: Rules, box: Box) -> None:
    """In a ruled grid, a slot with no ruling between it and an empty neighbour is one cell."""
    row_tops = [min(s.box.t for s in row) for row in rows]
    row_bottoms = [max(s.box.b for s in row) for row in rows]
    col_l = [box.l, *edges]
    col_r = [*edges, box.r]
    taken = {(c.row, c.col) for c in grid.cells}

    def h_rule_between(r: int, c: int) -> bool:
        y0, y1 = row_bottoms[r] - 1, row_tops[r + 1] + 1
        mid = (col_l[c] + col_r[c]) / 2
        return any(y0 <= y <= y1 and x0 - 2 <= mid <= x1 + 2 for y, x0, x1 in rules.horizontal)

    def v_rule_between(r: int, c: int) -> bool:
        x = edges[c]
        ymid = (row_tops[r] + row_bottoms[r]) / 2
        return any(abs(vx - x) <= 3 and y0 - 2 <= ymid <= y1 + 2 for vx, y0, y1 in rules.vertical)

    for cell in grid.cells:
        while (  # a label centred over two slots may sit in the right one
            cell.col > 0 and (cell.row, cell.col - 1) not in taken and not v_rule_between(cell.row, cell.col - 1)
        ):
            taken.add((cell.row, cell.col - 1))
            cell.col -= 1
            cell.col_span += 1
        while (
            cell.row + cell.row_span < grid.n_rows
            and (cell.row + cell.row_span, cell.col) not in taken
            and not h_rule_between(cell.row + cell.row_span - 1, cell.col)
        ):
            taken.add((cell.row + cell.row_span, cell.col))
            cell.row_span += 1
        while (
            cell.col + cell.col_span < grid.n_cols
            and (cell.row, cell.col + cell.col_span) not in taken
            and not v_rule_between(cell.row, cell.col + cell.col_span - 1)
        ):
            taken.add((cell.row, cell.col + cell.col_span))
            cell.col_span += 1


def merge_symbol_columns(grid: Grid) -> None:
    """A column that holds only currency signs (or only % / closing brackets) belongs to its neighbour."""
    col = 0
    while col < grid.n_cols:
        texts = [c.text.strip() for c in grid.cells if c.col == col and c.col_span == 1]
        spanning = [c for c in grid.cells if c.col == col and c.col_span > 1]
        if texts and not spanning and all(t in LEADING_SYMBOLS for t in texts) and col + 1 < grid.n_cols:
            _fold_column(grid, col, col + 1, leading=True)
            continue
        if texts and not spanning and all(t in TRAILING_SYMBOLS for t in texts) and col > 0:
            _fold_column(grid, col, col - 1, leading=False)
            continue
        col += 1


def _fold_column(grid: Grid, src: int, dst: int, leading: bool) -> None:
    by_slot = {(c.row, c.col): c for c in grid.cells}
    for c in [c for c in grid.cells if c.col == src]:
        target = by_slot.get((c.row, dst))
        if target is None:
            c.col = dst
        else:
            target.text = c.text + target.text if leading else target.text + c.text
            target.box = target.box.union(c.box)
            grid.cells.remove(c)
    _remove_column(grid, src)


def _remove_column(grid: Grid, col: int) -> None:
    """Close the gap of an empty column ``col``: later cells shift left, spans over it shrink."""
    for c in grid.cells:
        if c.col > col:
            c.col -= 1
        elif c.col < col < c.col + c.col_span:
            c.col_span -= 1
    grid.n_cols -= 1


def drop_empty_columns(grid: Grid) -> None:
    for col in range(grid.n_cols - 1, -1, -1):
        if grid.n_cols <= 1:
            return
        if any(c.col <= col < c.col + c.col_span and (c.col == col) for c in grid.cells):
            continue
        _remove_column(grid, col)


def resolve_overlaps(grid: Grid) -> None:
    """Spans never cover a slot that another cell starts in."""
    starts = {(c.row, c.col) for c in grid.cells}
    for c in grid.cells:
        for k in range(1, c.col_span):
            if (c.row, c.col + k) in starts:
                c.col_span = k
                break
        c.col_span = max(1, min(c.col_span, grid.n_cols - c.col))
        c.row_span = max(1, min(c.row_span, grid.n_rows - c.row))


def count_header_rows(grid: Grid) -> int:
    if grid.n_rows < 2:
        return 0
    rows: dict[int, list[GridCell]] = {}
    for c in grid.cells:
        rows.setdefault(c.row, []).append(c)
    any_numeric_body = any(is_numeric(c.text) for c in grid.cells)
    if _bold_fields(grid):
        return 0
    h = 0
    for r in range(grid.n_rows - 1):
        cells = rows.get(r, [])
        if not cells:
            break
        numeric = any(is_numeric(c.text) and not _looks_like_year(c.text) for c in cells)
        spanning = any(c.col_span > 1 for c in cells) and grid.n_cols > 2
        stub_empty = all(c.col > 0 for c in cells) and grid.n_cols > 1 and not text_row([c.text for c in cells])
        bold = all(c.bold for c in cells) and (len(cells) >= 2 or stub_empty)
        if numeric and not (bold and r == 0):
            break
        if spanning or stub_empty or bold:
            h = r + 1
            continue
        break
    if h == 0:
        first = rows.get(0, [])
        filled = sum(c.col_span for c in first)
        body_bold = all(c.bold for c in grid.cells)
        if (
            grid.n_rows >= 3
            and filled >= grid.n_cols - 1
            and not any(is_numeric(c.text) and not _looks_like_year(c.text) for c in first)
            and not text_row([c.text for c in first])
            and (any_numeric_body or body_bold or grid.n_cols >= 2)
            and not (grid.n_cols == 2 and is_key_value(_texts(grid)))
        ):
            h = 1
    for c in grid.cells:  # a header cell that spans down keeps the rows it covers in the header
        if c.row < h:
            h = max(h, c.row + c.row_span)
    return min(h, grid.n_rows - 1)


def _bold_fields(grid: Grid) -> bool:
    """A two-column table of fields whose labels are all bold ("Title of Study | <the title,
    also bold>", "Number of Study Sites | 6+"): its bold first row is a field like the others,
    not a header, when the fields read as fields from their shape (``is_key_value``). Bold
    sets no row apart where every label is bold."""
    if grid.n_cols != 2 or grid.n_rows < 3:
        return False
    labels = [c for c in grid.cells if c.col == 0 and c.col_span == 1]
    return len(labels) == grid.n_rows and all(c.bold for c in labels) and is_key_value(_texts(grid))


def _texts(grid: Grid) -> list[list[str]]:
    rows = [["" for _ in range(grid.n_cols)] for _ in range(grid.n_rows)]
    for c in grid.cells:
        rows[c.row][c.col] = c.text
    return rows


def _looks_like_year(text: str) -> bool:
    return bool(re.fullmatch(r"\s*(19|20)\d\d\s*", text)) or bool(re.search(r"[A-Za-z]", text))
