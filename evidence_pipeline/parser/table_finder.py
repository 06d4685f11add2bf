"""Where the tables of a page are: candidate boxes from the page's lines and rulings.

Four sources of candidates: connected ruling groups that draw a grid, shaded row bands,
runs of column-aligned lines (each column of a two-column page on its own), and the
column-header lines grown onto them. Overlapping candidates merge; pieces of one statement
are stitched; a candidate is kept only if its words form a grid and no figure caption
claims it.
"""

from __future__ import annotations

import math
import re

from evidence_pipeline.parser.geometry import Box, Rules, Span, cluster_values
from evidence_pipeline.parser.grid import Grid
from evidence_pipeline.parser.table_grid import build_grid
from evidence_pipeline.parser.text_lines import HEADING_NUMBER_RE, Row, group_rows, is_numeric, structural_kind
from evidence_pipeline.text import FIGURE_CAPTION_RE, is_caption_line

BoxKey = tuple[float, float, float, float]  # (l, t, r, b) of a table box

# A note's heading ("NOTE 6 — INVENTORIES", "Note 9 : Borrowings") opens the next note, and a
# lead-in sentence ("The components of inventories were as follows:") opens the next table:
# neither is a row label of the table above it, though both stand alone in the stub area.
NOTE_HEADING_RE = re.compile(r"^\s*note\s+\d{1,2}[a-z]?\s*(?:[—–:.-]|\s+[A-Z])", re.IGNORECASE)
LEAD_IN_RE = re.compile(r"(?:\bas\s+follows|(?:^|\bthe\s+)following)\b[^:]*:\s*$", re.IGNORECASE)
# The words of a period head ("THREE MONTHS ENDED"): see ``titles_above``.
_PERIOD_WORD = re.compile(r"\b(?:ended|ending|months?|weeks?|years?|quarters?|fiscal|as\s+of)\b", re.IGNORECASE)


def titles_above(text: str) -> bool:
    """Text set like a title: in capitals, two words or more, no figure, no period and no
    closing colon ("CONSOLIDATED STATEMENTS OF CASH FLOWS", a company's name; a column head
    in capitals names its period, "THREE MONTHS ENDED", and a row label in capitals introduces
    rows, "OPERATING ACTIVITIES:")."""
    letters = [ch for ch in re.sub(r"\([^()]*\)", "", text) if ch.isalpha()]
    return (
        len(letters) >= 6
        and all(ch.isupper() for ch in letters)
        and len(text.split()) >= 2
        and not any(ch.isdigit() for ch in text)
        and not _PERIOD_WORD.search(text)
        and not text.rstrip().endswith(":")
    )


def opens_next(text: str) -> bool:
    """A line that opens what comes after a table: a note's heading or a lead-in sentence."""
    return bool(NOTE_HEADING_RE.match(text) or LEAD_IN_RE.search(text))


def box_key(box: Box) -> BoxKey:
    return (box.l, box.t, box.r, box.b)


class TableFinder:
    """Finds the tables of one page. ``body`` is the document's body text height."""

    def __init__(self, width: float, height: float, body: float):
        self.width = width
        self.height = height
        self.body = body
        self.grids: dict[BoxKey, Grid] = {}  # table box -> the grid built while checking it

    def _tabular(self, row: Row) -> bool:
        if len(row.spans) < 2:
            return False
        wide = [s for s in row.spans if s.box.width > 0.28 * self.width]
        # Two long runs side by side are two columns of prose, not a table row.
        if len(row.spans) == 2 and len(wide) == 2:
            return False
        gaps = [b.box.l - a.box.r for a, b in zip(row.spans, row.spans[1:])]
        return max(gaps) >= 0.8 * row.size

    def _rule_grids(self, rules: Rules, spans: list[Span]) -> list[Box]:
        """Boxes of connected ruling groups that draw a grid with text in it."""
        segs: list[Box] = [Box(x0, y - 0.5, x1, y + 0.5) for y, x0, x1 in rules.horizontal]
        segs += [Box(x - 0.5, y0, x + 0.5, y1) for x, y0, y1 in rules.vertical]
        parent = list(range(len(segs)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        order = sorted(range(len(segs)), key=lambda i: segs[i].l)
        grown = [s.expanded(2.5) for s in segs]
        for a_i, a in enumerate(order):
            for b in order[a_i + 1 :]:
                if grown[b].l > grown[a].r:
                    break
                if grown[a].intersects(grown[b]):
                    ra, rb = find(a), find(b)
                    if ra != rb:
                        parent[ra] = rb
        groups: dict[int, list[int]] = {}
        for i in range(len(segs)):
            groups.setdefault(find(i), []).append(i)
        boxes = []
        for members in groups.values():
            hs = cluster_values([segs[i].cy for i in members if segs[i].height < 2], 2.0)
            vs = cluster_values([segs[i].cx for i in members if segs[i].width < 2], 2.0)
            if len(hs) < 2 or len(vs) < 2 or (len(hs) < 3 and len(vs) < 3):
                continue
            box = segs[members[0]]
            for i in members[1:]:
                box = box.union(segs[i])
            if box.width < 40 or box.height < 8:
                continue
            inner = [s for s in spans if box.contains_center(s.box, 1.0)]
            if not inner:
                continue
            boxes.append(box)
        return boxes

    def _aligned_runs(self, rows: list[Row]) -> list[Box]:
        """Runs of at least three column-aligned rows (label rows may sit between them)."""
        boxes: list[Box] = []
        run: list[Row] = []

        def close() -> None:
            while run and not self._tabular(run[-1]):
                run.pop()
            if sum(self._tabular(r) for r in run) >= 3:
                b = run[0].box
                for r in run[1:]:
                    b = b.union(r.box)
                boxes.append(b)
            run.clear()

        for row in rows:
            text = row.spans[0].text
            if is_caption_line(text) or opens_next(text) or any(self._title(sp) for sp in row.spans):
                close()
                continue
            if run:
                gap = row.box.t - run[-1].box.b
                if gap > max(2.2 * row.size, 14):
                    close()
            if self._tabular(row):
                run.append(row)
            elif run and len(row.spans) == 1 and row.box.width < 0.6 * self.width:
                run.append(row)
            else:
                close()
        close()
        return boxes

    def _shaded_tables(self, rules: Rules, rows: list[Row]) -> list[Box]:
        out = []
        for f in rules.fills:
            if f.width < 0.25 * self.width or f.height < 12:
                continue
            if f.width * f.height > 0.5 * self.width * self.height:  # a page background
                continue
            inner = [r for r in rows if f.contains_center(r.box, 1.0)]
            if sum(self._tabular(r) for r in inner) >= 2:
                b = inner[0].box
                for r in inner[1:]:
                    b = b.union(r.box)
                out.append(b.union(f) if f.height < 3 * b.height else b)
        return out

    def _title(self, span: Span) -> bool:
        """A Part or Item heading, or a title in capitals centred on the page (``titles_above``):
        it heads the table under it, it is no row or column head of it."""
        if structural_kind(span.text) in ("part", "item"):
            return True
        return abs(span.box.cx - self.width / 2) <= 0.06 * self.width and titles_above(span.text)

    def _label_row(self, row: Row, data_left: float, size: float) -> bool:
        """A row label alone on its line ("Current assets:", a wrapped label's first line):
        text in the stub area only, not a numbered heading or type larger than the table's
        (``size``: the largest text height of the table's rows)."""
        first = row.spans[0].text
        return (
            len(row.spans) <= 2
            and row.box.r <= data_left - 2
            and not HEADING_NUMBER_RE.match(first)
            and not opens_next(first)
            and not is_caption_line(first)
            and row.size <= 1.15 * max(size, self.body)
        )

    def _data_left(self, box: Box, rows: list[Row]) -> float:
        """Left edge of the value columns: the leftmost second phrase of the tabular rows inside."""
        inside = [r for r in rows if box.contains_center(r.box, 1.0)]
        return min((r.spans[1].box.l for r in inside if self._tabular(r)), default=box.l + 0.3 * box.width)

    def _grow(self, box: Box, rows: list[Row], rules: Rules) -> Box:
        """Take in the column-header lines above a table and tabular lines right below it.

        Row labels alone on their line ("Current assets:") are passed over on the way up and
        kept only when a column-header line sits above them.
        """
        data_left = self._data_left(box, rows)
        size = max((r.size for r in rows if box.contains_center(r.box, 1.0)), default=self.body)
        pending: Box | None = None  # label rows passed over, not yet taken
        for _ in range(8):
            top = pending.t if pending is not None else box.t
            above = [r for r in rows if r.box.b <= top + 1 and not box.contains_center(r.box, 1.0)]
            if not above:
                break
            row = max(above, key=lambda r: r.box.b)
            over_data = all(s.box.l >= data_left - 3 for s in row.spans)
            # column heads over the values may stand further off (a rule or padding under them)
            reach = max(3.5 * row.size, 24) if over_data and pending is None else max(2.5 * row.size, 16)
            if top - row.box.b > reach:
                break
            first = row.spans[0].text
            if is_caption_line(first) or (len(row.spans) == 1 and self._title(row.spans[0])):
                break
            fits = row.box.r <= box.r + 0.1 * box.width and row.box.l >= box.l - 0.1 * box.width
            if (over_data or self._tabular(row)) and fits:
                box = box.union(row.box) if pending is None else box.union(pending).union(row.box)
                pending = None
                continue
            if self._label_row(row, data_left, size) and fits:
                pending = row.box if pending is None else pending.union(row.box)
                continue
            break
        for _ in range(8):
            below = [r for r in rows if r.box.t >= box.b - 1 and not box.contains_center(r.box, 1.0)]
            if not below:
                break
            row = min(below, key=lambda r: r.box.t)
            if row.box.t - box.b > max(1.8 * row.size, 12) or not self._tabular(row):
                break
            if row.box.l < box.l - 0.1 * box.width or row.box.r > box.r + 0.1 * box.width:
                break
            box = box.union(row.box)
        return box

    def gutter(self, spans: list[Span]) -> float | None:
        """The x of the white gap between two columns of prose, if the page has two."""
        if len(spans) < 12:
            return None
        lo, hi = int(0.3 * self.width), int(0.7 * self.width)
        # crossings[x - lo]: lines running across x (l < x < r), by a difference array
        diff = [0] * (hi - lo + 1)
        for s in spans:
            first = max(lo, math.floor(s.box.l) + 1)
            last = min(hi - 1, math.ceil(s.box.r) - 1)
            if first <= last:
                diff[first - lo] += 1
                diff[last - lo + 1] -= 1
        best, best_x, run, best_run = None, 0, 0, 0  # best_x is read only once best is set
        crossing = 0
        for x in range(lo, hi):
            crossing += diff[x - lo]
            if best is None or crossing < best:
                best, best_x, run, best_run = crossing, x, 1, 1
            elif crossing == best:
                run += 1
                if run > best_run:
                    best_run, best_x = run, x - run // 2
            else:
                run = 0
        if best is None or best > 0.04 * len(spans) or best_run < 6:
            return None
        left = [s for s in spans if s.box.r <= best_x]
        right = [s for s in spans if s.box.l >= best_x]
        # Two pages printed side by side on a landscape sheet: a wide empty band splits them
        # even where their lines are short (forms, checklists), which the prose test would miss.
        spread = self.width > 1.2 * self.height and best == 0 and best_run >= 0.1 * self.width
        for side, width in ((left, best_x), (right, self.width - best_x)):
            if len(side) < 0.25 * len(spans):
                return None
            prose = sum(1 for s in side if s.box.width >= 0.45 * width)
            if prose < 0.3 * len(side) and not spread:
                return None
        return float(best_x)

    def find(self, spans: list[Span], rules: Rules, words: list[Span] | None = None) -> list[Box]:
        """Boxes of the tables among ``spans`` (the page's lines outside headers and footers).

        ``words``: when given, a candidate must also form a grid of words (its ``Grid`` is
        kept in ``grids`` for the table stage).
        """
        grids = self._rule_grids(rules, spans)
        free_spans = [s for s in spans if not any(g.contains_center(s.box, 1.0) for g in grids)]
        free = group_rows(free_spans)
        soft = [self._grow(b, free, rules) for b in self._shaded_tables(rules, free)]
        gutter = self.gutter(free_spans)
        if gutter is None:
            soft += [self._grow(b, free, rules) for b in self._aligned_runs(free)]
        else:  # each column of a two-column page on its own, so prose beside a table is not a column of it
            for side in (
                [s for s in free_spans if s.box.r <= gutter],
                [s for s in free_spans if s.box.l >= gutter],
            ):
                side_rows = group_rows(side)
                soft += [self._grow(b, side_rows, rules) for b in self._aligned_runs(side_rows)]
        tables = grids + soft
        merged = True
        while merged:  # overlapping candidates are one table
            merged = False
            for i in range(len(tables)):
                for j in range(i + 1, len(tables)):
                    if tables[i].expanded(-1).intersects(tables[j].expanded(-1)):
                        tables[i] = tables[i].union(tables[j])
                        del tables[j]
                        merged = True
                        break
                if merged:
                    break
        tables = [self._framed(t, rules) for t in self._stitch(tables, free)]
        return [t for t in tables if self._plausible(t, spans, rules, words, ruled=any(t.same(g, 3.0) for g in grids))]

    @staticmethod
    def _framed(box: Box, rules: Rules) -> Box:
        """A table between two rules of the same length, right above and below it (a code
        listing's frame, a booktabs table), extends to them."""

        def covering(lo: float, hi: float) -> list[tuple[float, float, float]]:
            return [h for h in rules.horizontal if lo <= h[0] <= hi and h[1] <= box.l + 5 and h[2] >= box.r - 5]

        above, below = covering(box.t - 20, box.t + 1), covering(box.b - 1, box.b + 20)
        if not above or not below:
            return box
        top, bottom = max(above), min(below)
        if abs(top[1] - bottom[1]) > 3 or abs(top[2] - bottom[2]) > 3:
            return box
        return Box(min(box.l, top[1]), top[0], max(box.r, top[2]), bottom[0])

    def _stitch(self, tables: list[Box], rows: list[Row]) -> list[Box]:
        """Join pieces of one statement that the run rules split: a table right under another
        whose value columns end at the same x, with only row labels ("Current liabilities:",
        a wrapped label's first line) between them; and a block of column headers right above
        a table's value columns."""
        tables = sorted(tables, key=lambda b: b.t)
        i = 0
        while i + 1 < len(tables):
            a, b = tables[i], tables[i + 1]
            if a.h_overlap(b) >= 0.6 * min(a.width, b.width) and self._one_statement(a, b, rows):
                tables[i] = a.union(b)
                del tables[i + 1]
                continue
            i += 1
        return tables

    def _one_statement(self, a: Box, b: Box, rows: list[Row]) -> bool:
        if b.t < a.b - 1:
            return False
        data_left = self._data_left(b, rows)
        between = sorted(
            (
                r
                for r in rows
                if a.b - 1 <= r.box.cy <= b.t + 1
                and r.box.h_overlap(a.union(b)) > 0
                and not a.contains_center(r.box, 1.0)
                and not b.contains_center(r.box, 1.0)
            ),
            key=lambda r: r.box.t,
        )
        size = max((r.size for r in rows if b.contains_center(r.box, 1.0)), default=self.body)
        limit = max(3.2 * size, 24)
        edge = a.b
        for r in between:
            if r.box.t - edge > limit or not self._label_row(r, data_left, size):
                return False
            edge = max(edge, r.box.b)
        if b.t - edge > limit:
            return False
        inside_a = [r for r in rows if a.contains_center(r.box, 1.0)]
        if not between and inside_a and all(s.box.l >= data_left - 5 for r in inside_a for s in r.spans):
            return a.r <= b.r + 0.1 * b.width  # column headers over the value columns
        ends_a = [s.box.r for r in inside_a for s in r.spans[1:] if is_numeric(s.text)]
        ends_b = [s.box.r for r in rows if b.contains_center(r.box, 1.0) for s in r.spans[1:] if is_numeric(s.text)]
        return len(ends_a) >= 2 and len(ends_b) >= 2 and abs(max(ends_a) - max(ends_b)) <= 3

    def _plausible(self, box: Box, spans: list[Span], rules: Rules, words: list[Span] | None, ruled: bool = False) -> bool:
        """Keep a candidate only if its text forms a grid and no figure caption claims it.

        A figure caption does not claim a grid its rules draw whole (``ruled``) with text in
        every cell: a table the document numbers as a figure ("FIGURE 1: SYSTEM
        SPECIFICATIONS" over a ruled list of settings). A chart's rules leave its plot empty.

        A grid its rules draw whole is kept however sparse, when every row has a label (a
        schedule of marks), or when it is one row that opens the page (a long cell carried over
        from the page before, which ``convert`` links to its table)."""
        claimed = False
        for s in spans:
            if box.contains_center(s.box, 1.0) or not FIGURE_CAPTION_RE.match(s.text):
                continue
            if s.box.h_overlap(box) > 0 and min(abs(s.box.t - box.b), abs(box.t - s.box.b)) <= 2.5 * s.size:
                claimed = True
        if claimed and not (ruled and words is not None):
            return False
        if words is None:
            return True
        inner = [w for w in words if box.contains_center(w.box, 1.0)]
        grid = build_grid(inner, rules.inside(box), box)
        self.grids[box_key(box)] = grid
        if grid.n_rows == 1 and grid.n_cols >= 2 and ruled and _opens_page(box, spans):
            return True  # one ruled row that opens the page: a long cell carried over from the page before
        if grid.n_rows < 2 or grid.n_cols < 2:
            return False
        slots = sum(c.row_span * c.col_span for c in grid.cells)
        if claimed:
            return slots == grid.n_rows * grid.n_cols and all(c.text.strip() for c in grid.cells)
        if ruled and _labelled_rows(grid):
            return True  # a sparse grid its rules draw whole: a schedule of marks ("X" per visit)
        return slots >= 0.35 * grid.n_rows * grid.n_cols


def _labelled_rows(grid: Grid) -> bool:
    """Whether every row of ``grid`` has a label in its first column and a value beside it
    somewhere below the first row (a chart's gridlines frame an empty plot)."""
    labelled = {c.row for c in grid.cells if c.col == 0 and c.text.strip()}
    valued = {c.row for c in grid.cells if c.col > 0 and c.text.strip()}
    return len(labelled) == grid.n_rows and len(valued - {0}) >= 1


def _opens_page(box: Box, spans: list[Span]) -> bool:
    """Whether ``box`` holds the first line of the page's body (nothing of the body above it)."""
    return not any(s.box.b <= box.t + 1 for s in spans)
