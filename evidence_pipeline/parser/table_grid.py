"""Weight-free table structure: the words and rulings inside a table region -> a cell grid.

Columns come from vertical rulings when the table draws them, otherwise from the
x-ranges that (almost) no text line covers. Rows come from horizontal rulings in
fully ruled tables, otherwise from text lines, with wrapped lines folded into the
row above. Spanning cells: a phrase covering several columns (a group header), or,
in ruled grids, a missing ruling between two slots (see ``grid`` for the passes that
tidy the grid and find its header rows).
"""

from __future__ import annotations

import re

from evidence_pipeline.parser.geometry import Box, Rules, Span, cluster_values, is_dingbat_font
from evidence_pipeline.parser.grid import (
    LEADING_SYMBOLS,
    Grid,
    GridCell,
    count_header_rows,
    drop_empty_columns,
    merge_symbol_columns,
    resolve_overlaps,
    ruled_spans,
)
from evidence_pipeline.parser.raised_markers import TIGHT, is_raised_marker, superscript
from evidence_pipeline.parser.scripts import between_hangul
from evidence_pipeline.parser.text_lines import group_rows, is_numeric


def _phrases(words: list[Span], rules: Rules) -> list[Span]:
    """Join words of one line whose gaps are word spaces and that no vertical ruling separates."""
    out: list[Span] = []
    for row in group_rows(words):
        cur: Span | None = None
        last_font = ""  # font of the last word joined into ``cur``
        band = row.box
        verticals = [v for v in rules.vertical if v[1] <= band.b and v[2] >= band.t]
        for w in row.spans:
            if cur is not None:
                gap = w.box.l - cur.box.r
                ruled = any(cur.box.r - 1 <= x <= w.box.l + 1 and y0 <= w.box.cy <= y1 for x, y0, y1 in verticals)
                if gap <= 0.5 * max(w.size, cur.size) and not ruled:
                    raised = superscript(w.text) if is_raised_marker(w, cur, row.size) else None
                    # a picture-font glyph (bullet, check box) never belongs to the word it touches
                    apart = (
                        gap > TIGHT * w.size or between_hangul(cur.text, w.text) or is_dingbat_font(last_font) != is_dingbat_font(w.font)
                    )
                    cur = Span(
                        cur.index,
                        cur.text + raised if raised else f"{cur.text} {w.text}" if apart else cur.text + w.text,
                        cur.box.union(w.box),
                        cur.font,
                        cur.bold and w.bold,
                        max(cur.size, w.size),
                    )
                    last_font = w.font
                    continue
                out.append(cur)
            cur = Span(w.index, w.text, w.box, w.font, w.bold, w.size)
            last_font = w.font
        if cur is not None:
            out.append(cur)
    return _attach_currency_signs(out, rules)


def join_lines(first: str, then: str) -> str:
    """Two lines of one cell as one text; a word hyphenated at the line end stays one word
    ("parent-" + "proxy)" -> "parent-proxy)")."""
    if len(first) >= 2 and first.endswith("-") and first[-2].isalpha() and then[:1].islower():
        return first + then
    return f"{first} {then}"


def _attach_currency_signs(phrases: list[Span], rules: Rules) -> list[Span]:
    """ "$" printed apart from its amount (EDGAR statements) joins the amount on its right.

    Left alone, a sign that appears on a few rows only is too sparse to form a column of its
    own and lands in whatever column its x falls in, next to another column's amount.
    """
    out: list[Span] = []
    for s in phrases:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.text.strip() in LEADING_SYMBOLS
            and is_numeric(s.text)
            and abs(prev.box.cy - s.box.cy) <= 0.5 * max(prev.size, s.size, 1.0)
            and 0 <= s.box.l - prev.box.r <= 12 * max(s.size, 1.0)
            and not any(prev.box.r - 1 <= x <= s.box.l + 1 and y0 <= s.box.cy <= y1 for x, y0, y1 in rules.vertical)
        ):
            out[-1] = Span(prev.index, prev.text.strip() + s.text, prev.box.union(s.box), s.font, s.bold, max(prev.size, s.size))
            continue
        out.append(s)
    return out


def _column_edges(lines: list[list[Span]], box: Box, rules: Rules) -> list[float]:
    """X positions that separate columns (excluding the outer edges): vertical rulings, and
    white gaps that no text line covers. Gaps count beside rulings only when they outnumber
    them: a statement with one ruling (the edge of a shaded column) still has its label
    column apart from its values, while a fully ruled grid is read by its rulings alone."""
    v_rules = [x for x, y0, y1 in rules.vertical if (y1 - y0) >= 0.4 * box.height and box.l + 3 < x < box.r - 3]
    gaps = _white_gaps(lines, box)
    if not v_rules:
        return [(a + b) / 2 for a, b in gaps]
    ruled = cluster_values(v_rules, 3.0)
    free = [(a, b) for a, b in gaps if not any(a - 3 <= x <= b + 3 for x in ruled)]
    if len(gaps) <= len(ruled):
        free = [g for g in free if _unruled_stub_edge(g, ruled, lines)]
    return sorted(ruled + [(a + b) / 2 for a, b in free])


def _unruled_stub_edge(gap: tuple[float, float], ruled: list[float], lines: list[list[Span]]) -> bool:
    """Whether a white gap left of every ruling parts the labels from a first column of figures.

    EDGAR statements rule the edges between value columns only: the label column and the first
    value column are parted by white space alone ("Operating activities ... $7,313 | $11,404").
    Read by its rulings, that first column joined the labels. A gap inside the stub (an item's
    number apart from its text) has text right of it, not figures."""
    if not ruled or gap[1] > min(ruled):
        return False
    right = [s for ln in lines for s in ln if gap[1] <= s.box.cx < min(ruled)]
    return len(right) >= 2 and sum(is_numeric(s.text) for s in right) >= 0.75 * len(right)


def _tall_rules(rules: Rules, box: Box) -> list[float]:
    """The x of every column ruling that runs (almost) the table's whole height."""
    return [x for x, y0, y1 in rules.vertical if (y1 - y0) >= 0.8 * box.height]


def _ruled_columns(edges: list[float], rules: Rules, box: Box) -> bool:
    """Whether every column edge is a ruling that runs the table's height."""
    tall = _tall_rules(rules, box)
    return bool(edges) and all(any(abs(e - x) <= 3 for x in tall) for e in edges)


def _white_gaps(lines: list[list[Span]], box: Box) -> list[tuple[float, float]]:
    """The x-ranges between columns of text that (almost) no line of several phrases covers."""
    multi = [ln for ln in lines if len(ln) >= 2] or lines
    lo, hi = int(box.l) - 1, int(box.r) + 2
    cover = [0] * (hi - lo + 1)
    for ln in multi:
        for s in ln:
            for x in range(max(int(s.box.l), lo), min(int(s.box.r) + 1, hi) + 1):
                cover[x - lo] += 1
    allowed = 0 if len(multi) < 4 else max(1, int(0.12 * len(multi)))
    gaps: list[tuple[float, float]] = []
    x = 0
    started = False
    while x < len(cover):
        if cover[x] > allowed:
            started = True
            x += 1
            continue
        start = x
        while x < len(cover) and cover[x] <= allowed:
            x += 1
        if started and x < len(cover) and x - start >= 3:
            gaps.append((lo + start, lo + x))
    return gaps


def _col_of(x: float, edges: list[float]) -> int:
    return sum(1 for e in edges if x > e)


def build_grid(words: list[Span], rules: Rules, box: Box) -> Grid:
    drawn = rules  # segment ends mark row boundaries (see ``_rule_breaks``)
    rules = rules.joined_verticals()
    phrases = _phrases(words, rules)
    if not phrases:
        return Grid(0, 0)
    line_rows = group_rows(phrases)
    lines = [r.spans for r in line_rows]
    edges = _column_edges(lines, box, rules)
    n_cols = len(edges) + 1

    # Column content extents, for telling a group header that spans columns.
    extents: list[list[float]] = [[] for _ in range(n_cols)]
    for ln in lines:
        if len(ln) < 2:
            continue
        for s in ln:
            c0, c1 = _col_of(s.box.l + 1, edges), _col_of(s.box.r - 1, edges)
            if c0 == c1:
                extents[c0] += [s.box.l, s.box.r]
    ext = [(min(e), max(e)) if e else None for e in extents]

    def cols_of(s: Span, stretch: Box | None = None) -> tuple[int, int]:
        b = stretch or s.box
        c0 = _col_of(b.l + 1, edges)
        c1 = _col_of(b.r - 1, edges)
        if c1 > c0:
            # Keep only the columns whose content the phrase really covers.
            keep = [
                c
                for c in range(c0, c1 + 1)
                if (x := ext[c]) is None or min(b.r, x[1]) - max(b.l, x[0]) >= 0.25 * max(x[1] - x[0], 1) or c == _col_of(s.box.cx, edges)
            ]
            if c0 == 0 or not _centred_over(b, [ext[c] for c in range(c0, c1 + 1)], s.size):
                c0, c1 = min(keep), max(keep)
        return c0, c1

    # Where the values start: the left of the leftmost value column's text; when no line holds
    # a label and a value side by side (labels centred on cells whose text wraps), the first
    # column edge.
    value_left = min((e[0] for e in ext[1:] if e is not None), default=edges[0] if edges else box.r)
    h_rules = [(y, x0, x1) for y, x0, x1 in rules.horizontal if x1 - x0 >= 0.15 * box.width]
    # a break that cuts through text (a label centred on two lines) ends a drawn segment, not a row
    breaks = [y for y in _rule_breaks(drawn, edges, box) if not any(s.box.t + 1 < y < s.box.b - 1 for s in phrases)]
    ruled_ys = cluster_values([y for y, _, _ in h_rules if box.t + 2 < y < box.b - 2] + breaks, 2.0)
    # Rulings every row or so make a grid. Lines with an empty stub column are wrapped text
    # of the row above, so only lines that start in the stub column count as possible rows.
    stub_lines = [ln for ln in lines if _col_of(ln[0].box.l + 1, edges) == 0]
    fully_ruled = bool(edges) and len(ruled_ys) >= max(1, 0.5 * (len(stub_lines or lines) - 1)) and bool(rules.vertical)
    if not fully_ruled and edges and _banded(phrases, ruled_ys, rules, box, edges):
        fully_ruled = True

    # Rows: bands between rulings in ruled grids, otherwise text lines with wraps folded in.
    rows: list[list[Span]] = []
    if fully_ruled:
        bounds = [box.t - 1, *ruled_ys, box.b + 1]
        for top, bottom in zip(bounds, bounds[1:]):
            band = [s for ln in lines for s in ln if top <= s.box.cy < bottom]
            if band:
                rows.append(band)
    else:
        # In a table with column rulings, a line with an empty stub column continues the row above.
        stub_rows = bool(edges) and any((y1 - y0) >= 0.4 * box.height for _, y0, y1 in rules.vertical)
        prev: list[Span] | None = None
        for ln in lines:
            if prev is not None and (_continues(prev, ln, edges, h_rules, stub_rows) or _label_wraps(prev, ln, edges, h_rules, value_left)):
                prev.extend(ln)
                continue
            rows.append(list(ln))
            prev = rows[-1]

    # A label alone on its line that ends left of every value ("ASSETS:", centred in the gap
    # before the first value column) names a group of rows: it belongs to the stub column.
    alone = {id(ln[0]) for ln in lines if len(ln) == 1 and ln[0].box.r < value_left - 2}

    slots: dict[tuple[int, int], GridCell] = {}
    for r, row in enumerate(rows):
        for s in sorted(row, key=lambda s: (round(s.box.cy), s.box.l)):
            if id(s) in alone:
                c0 = c1 = 0
                cell = slots.get((r, 0))
                if cell is None:
                    slots[(r, 0)] = GridCell(r, 0, s.text, s.box, bold=s.bold)
                else:
                    cell.text = join_lines(cell.text, s.text)
                    cell.box = cell.box.union(s.box)
                    cell.bold = cell.bold and s.bold
                continue
            stretch = None
            # only a group header over value columns spans them: an amount or a row label
            # above a subtotal rule does not
            grouping = not is_numeric(s.text) and _col_of(s.box.l + 1, edges) > 0
            under = [h for h in h_rules + rules.horizontal if 0 <= h[0] - s.box.b <= 0.9 * s.size] if grouping else []
            for _y, x0, x1 in under:  # a rule under a group header shows the columns it spans
                if x0 <= s.box.l + 2 and x1 >= s.box.r - 2 and x1 - x0 < 0.9 * box.width:
                    stretch = Box(x0, s.box.t, x1, s.box.b)
                    break
            c0, c1 = cols_of(s, stretch)
            cell = slots.get((r, c0))
            if cell is None:
                slots[(r, c0)] = GridCell(r, c0, s.text, s.box, col_span=c1 - c0 + 1, bold=s.bold)
            else:
                cell.text = join_lines(cell.text, s.text)
                cell.box = cell.box.union(s.box)
                cell.col_span = max(cell.col_span, c1 - c0 + 1)
                cell.bold = cell.bold and s.bold

    grid = Grid(len(rows), n_cols, sorted(slots.values(), key=lambda c: (c.row, c.col)))
    if fully_ruled:
        ruled_spans(grid, rows, edges, rules, box)
    merge_symbol_columns(grid)
    if not _ruled_columns(edges, rules, box):
        # A column drawn by rulings is a column even where it is empty on this page (a visit
        # no row marks in a schedule's continuation, the label column beside a long cell carried
        # over a page): dropping it would shift every column after it against the header of the
        # part before, or leave a one-column grid that is no table.
        drop_empty_columns(grid)
    resolve_overlaps(grid)
    grid.header_rows = count_header_rows(grid)
    for c in grid.cells:
        c.column_header = c.row < grid.header_rows
    return grid


def _banded(phrases: list[Span], ruled_ys: list[float], rules: Rules, box: Box, edges: list[float]) -> bool:
    """A grid of text whose rows are the bands between its rules, however many lines a cell
    wraps to (a protocol's table of procedures, risks and mitigations): column rules run
    down the whole table, at least two rules cross the body, and the value columns hold
    words, not figures (a statement ruled between groups of rows keeps a row per line)."""
    if len(ruled_ys) < 2 or len(_tall_rules(rules, box)) < 2:
        return False
    covered: dict[float, float] = {}  # a rule drawn cell by cell is one rule across
    inner = [(y, x0, x1) for y, x0, x1 in rules.horizontal if box.t + 2 < y < box.b - 2]
    for y, x0, x1 in inner:
        at = next((k for k in covered if abs(k - y) <= 2.0), y)
        covered[at] = covered.get(at, 0.0) + (x1 - x0)
    if sum(width >= 0.9 * box.width for width in covered.values()) < 2:
        return False
    values = [s for s in phrases if _col_of(s.box.l + 1, edges) > 0]
    return bool(values) and sum(is_numeric(s.text) for s in values) < 0.2 * len(values)


def _rule_breaks(rules: Rules, edges: list[float], box: Box) -> list[float]:
    """Heights where every column ruling stops and starts again: a row boundary drawn without
    a horizontal rule (e.g. under a shaded header row whose cells were drawn one by one)."""
    if not edges:
        return []
    ends: dict[int, set[int]] = {}
    for x, y0, y1 in rules.vertical:
        col = next((i for i, e in enumerate(edges) if abs(x - e) <= 3), None)
        if col is None:
            continue
        for y in (y0, y1):
            if box.t + 2 < y < box.b - 2:
                ends.setdefault(round(y), set()).add(col)
    return [float(y) for y, cols in ends.items() if len(cols) == len(edges)]


def _centred_over(b: Box, extents: list, size: float) -> bool:
    """A header phrase over value columns, centred over those it reaches into, heads them all
    ("March 31," printed once over "2022" and "2023"), however narrow it is."""
    if len(extents) < 2 or any(e is None for e in extents):
        return False
    left, right = extents[0][0], extents[-1][1]
    return abs(b.cx - (left + right) / 2) <= max(size, 0.05 * (right - left))


def _continues(prev: list[Span], line: list[Span], edges: list[float], h_rules, stub_rows: bool = False) -> bool:
    """A wrapped line: stub column empty, not numbers, each phrase under exactly one phrase above."""
    if _col_of(line[0].box.l + 1, edges) == 0 and edges:
        return False
    top = min(s.box.t for s in line)
    if any(max(p.box.b for p in prev) - 1 <= y <= top + 1 for y, _, _ in h_rules):
        return False
    if stub_rows:
        if len({_col_of(s.box.cx, edges) for s in line}) == 1:
            return True  # wrapped text of one cell (an item's number and its text, side by side)
        # a group head ("Three Months Ended") over the heads of its columns stays a row of its own
        return not any(sum(1 for s in line if s.box.h_overlap(p.box) > 0) > 1 for p in prev)
    if all(is_numeric(s.text) for s in line):
        return False
    gap = top - max(s.box.b for s in prev)
    if gap > 0.6 * max(s.size for s in line):
        return False
    for s in line:
        over = [p for p in prev if p.box.h_overlap(s.box) > 0]
        if len(over) != 1:
            return False
        if sum(1 for o in line if o.box.h_overlap(over[0].box) > 0) != 1:
            return False
    return True


def _label_wraps(prev: list[Span], line: list[Span], edges: list[float], h_rules, value_left: float) -> bool:
    """A row label too long for its line: the row above holds only a label, not a group label
    ("Current assets:"), and this line goes on in lower case or with a number ("and 16,426,786
    shares issued"), right under it; or this line holds only the values (a dash drawn a little
    off the label's baseline)."""
    if not edges or any(p.box.r >= value_left - 2 for p in prev):
        return False
    label = " ".join(p.text for p in sorted(prev, key=lambda p: (p.box.t, p.box.l))).rstrip()
    if label.endswith(":"):
        return False
    top = min(s.box.t for s in line)
    bottom = max(p.box.b for p in prev)
    size = max(s.size for s in [*line, *prev])
    if any(bottom - 1 <= y <= top + 1 for y, _, _ in h_rules):
        return False
    if line[0].box.r < value_left - 2:
        head = line[0].text.lstrip()
        return top - bottom <= 0.6 * size and bool(head) and (head[0].islower() or head[0].isdigit() or head[0] == "(")
    values = all(is_numeric(s.text) or re.fullmatch(r"[-\u2013\u2014]+", s.text.strip()) for s in line)
    return values and top - bottom <= 0.3 * size
