"""Weight-free page layout: text lines and rulings of one PDF page -> labelled regions.

Rules, not a model: tables come from ruling grids, shaded row bands and runs of
column-aligned lines; captions from "Table N" text; section headers from numbering,
bold or larger type; footnotes from markers under a table or small type at the
page bottom; page headers/footers from their position. Everything else is text,
grouped into paragraphs. Docling's reading-order model orders the regions.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property

from evidence_pipeline.parser.geometry import Box, Rules, Span, cluster_values

# "Table 3-1: ...", "Table 1. ...", "Table 2 Results"; not "Table 1 shows ..." (a sentence citing it).
_CAPTION_TAIL = r"\s*[A-Z]?\d+([.\-–]\d+)*[A-Za-z]?(?=\s*[:.\-–—|](\s|$)|\s+[^a-z\s]|\s*$)"
TABLE_CAPTION_RE = re.compile(r"^\s*(?i:table|tab\.|tbl\.)" + _CAPTION_TAIL + r"|^\s*\[?표\s*\d+\]?")
# Captions that may belong to a table-like block (code listings, exhibits) but are not "Table N".
OTHER_CAPTION_RE = re.compile(r"^\s*(?i:figure|fig\.|chart|exhibit|listing|example|scheme|그림)" + _CAPTION_TAIL)
# Captions that never name a table.
FIGURE_CAPTION_RE = re.compile(r"^\s*(?i:figure|fig\.|chart|scheme|그림)" + _CAPTION_TAIL)
FOOTNOTE_MARKER_RE = re.compile(
    r"^\s*(\*+|[†‡§¶#]+|\([a-z]\)|[a-z]\)|\(\d{1,2}\)|\d{1,2}\)|[¹²³⁴⁵⁶⁷⁸⁹⁰]+|notes?\s*\d{0,2}\s*[:.]\s|source[s]?:|abbreviations?:|※|\[\d{1,2}\])",
    re.IGNORECASE,
)
# Symbol markers that open a new note even inside a run of note lines.
NOTE_SYMBOL_RE = re.compile(r"^\s*([*†‡§¶※]|[¹²³⁴⁵⁶⁷⁸⁹⁰]|(?i:notes?|source)\b)")
BULLET_RE = re.compile(r"^\s*([•·▪◦‣●○■□►▶➢✓\-–—]|\(?[a-z]\)|\(?[ivx]+\)|\d{1,2}\))\s+")
HEADING_NUMBER_RE = re.compile(
    r"^\s*((\d{1,2}(\.\d{1,2})+\.?)|(\d{1,2}\.?)|([A-Z]\.)|([IVX]{1,5}\.)|((section|article|chapter|part|item|appendix|annex)\s+[\dIVXA-Z]+[.:]?))\s+\S",
    re.IGNORECASE,
)
DOTTED_NUMBER_RE = re.compile(r"^\s*\d{1,2}(\.\d{1,2})+\.?\s+\S")
NUMERIC_RE = re.compile(r"^[\s$€£¥%()\-–—+.,:/*†‡§0-9]+$")

HEADER_BAND = 0.075  # share of the page height at top and bottom that holds page headers/footers


@dataclass
class Region:
    label: str  # table, caption, section_header, title, footnote, page_header, page_footer, text, list_item
    box: Box
    spans: list[Span] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.spans)


@dataclass
class Row:
    """Spans that sit on one visual line of the page."""

    spans: list[Span]

    @cached_property
    def box(self) -> Box:  # read only once the row is complete (see group_rows)
        b = self.spans[0].box
        for s in self.spans[1:]:
            b = b.union(s.box)
        return b

    @cached_property
    def size(self) -> float:
        return max(s.size for s in self.spans)


def group_rows(spans: list[Span]) -> list[Row]:
    """Group spans into visual lines (shared vertical centre), top to bottom, left to right."""
    rows: list[Row] = []
    last = Box(0, 0, 0, 0)  # the box of rows[-1], kept as it grows
    for s in sorted(spans, key=lambda s: (s.box.cy, s.box.l)):
        if rows:
            # a dash's glyph box is a sliver: it must not set the tolerance for its line
            h = max(min(s.box.height, last.height), 0.5 * max(s.box.height, last.height))
            tol = 0.45 * h + 0.5
            if abs(s.box.cy - last.cy) <= tol:
                rows[-1].spans.append(s)
                last = last.union(s.box)
                continue
        rows.append(Row([s]))
        last = s.box
    for r in rows:
        r.spans.sort(key=lambda s: s.box.l)
    return rows


def is_numeric(text: str) -> bool:
    t = text.strip()
    return bool(t) and bool(NUMERIC_RE.match(t)) and any(ch.isdigit() for ch in t)


class PageAnalyser:
    """Labels the regions of one page. ``body_size`` is the document's common text height."""

    def __init__(self, width: float, height: float, body_size: float, page_no: int):
        self.width = width
        self.height = height
        self.body = body_size or 10.0
        self.page_no = page_no
        self.grids: dict[tuple[float, float, float, float], object] = {}  # table box -> its Grid, for reuse

    # ------------------------------------------------------------------ tables
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
            if TABLE_CAPTION_RE.match(text) or OTHER_CAPTION_RE.match(text):
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

    def _label_row(self, row: Row, data_left: float, size: float) -> bool:
        """A row label alone on its line ("Current assets:", a wrapped label's first line):
        text in the stub area only, not a numbered heading or type larger than the table's
        (``size``: the largest text height of the table's rows)."""
        first = row.spans[0].text
        return (
            len(row.spans) <= 2
            and row.box.r <= data_left - 2
            and not HEADING_NUMBER_RE.match(first)
            and not TABLE_CAPTION_RE.match(first)
            and not OTHER_CAPTION_RE.match(first)
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
            if top - row.box.b > max(2.5 * row.size, 16):
                break
            first = row.spans[0].text
            if TABLE_CAPTION_RE.match(first) or OTHER_CAPTION_RE.match(first):
                break
            over_data = all(s.box.l >= data_left - 3 for s in row.spans)
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
        best, best_x, run, best_run = None, None, 0, 0
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

    def find_tables(self, rows: list[Row], spans: list[Span], rules: Rules, words: list[Span] | None = None) -> list[Box]:
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
        return [t for t in tables if self._plausible(t, spans, rules, words)]

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
            (r for r in rows if a.b - 1 <= r.box.cy <= b.t + 1 and r.box.h_overlap(a.union(b)) > 0
             and not a.contains_center(r.box, 1.0) and not b.contains_center(r.box, 1.0)),
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

    def _plausible(self, box: Box, spans: list[Span], rules: Rules, words: list[Span] | None) -> bool:
        """Keep a candidate only if its text forms a grid and no figure caption claims it."""
        for s in spans:
            if box.contains_center(s.box, 1.0) or not FIGURE_CAPTION_RE.match(s.text):
                continue
            if s.box.h_overlap(box) > 0 and min(abs(s.box.t - box.b), abs(box.t - s.box.b)) <= 2.5 * s.size:
                return False
        if words is None:
            return True
        from evidence_pipeline.parser.table_grid import build_grid  # table_grid imports this module

        inner = [w for w in words if box.contains_center(w.box, 1.0)]
        grid = build_grid(inner, rules.inside(box), box)
        self.grids[(box.l, box.t, box.r, box.b)] = grid
        if grid.n_rows < 2 or grid.n_cols < 2:
            return False
        slots = sum(c.row_span * c.col_span for c in grid.cells)
        return slots >= 0.35 * grid.n_rows * grid.n_cols

    # ------------------------------------------------------------------- text
    def _paragraphs(self, spans: list[Span]) -> list[list[Span]]:
        blocks: list[list[Span]] = []
        for s in sorted(spans, key=lambda s: (s.box.t, s.box.l)):
            starts_new = bool(
                BULLET_RE.match(s.text)
                or TABLE_CAPTION_RE.match(s.text)
                or OTHER_CAPTION_RE.match(s.text)
                or NOTE_SYMBOL_RE.match(s.text)
                or HEADING_NUMBER_RE.match(s.text)
                and (s.bold or s.size > 1.1 * self.body or DOTTED_NUMBER_RE.match(s.text))
            )
            target = None
            if not starts_new:
                for blk in reversed(blocks):
                    last = blk[-1]
                    gap = s.box.t - last.box.b
                    if gap > 0.9 * max(s.size, last.size) or gap < -0.5 * s.size:
                        continue
                    if last.box.h_overlap(s.box) <= 0 and abs(last.box.l - s.box.l) > 2 * s.size:
                        continue
                    caption = bool(TABLE_CAPTION_RE.match(blk[0].text) or OTHER_CAPTION_RE.match(blk[0].text))
                    if abs(last.size - s.size) > 0.18 * max(last.size, s.size):
                        continue
                    if last.bold != s.bold and not caption:  # a caption's label is often bold, its text not
                        continue
                    if self._headingish(blk) and len(blk) >= 2:
                        continue
                    if last.box.r < s.box.r - max(0.25 * s.box.width, 3 * s.size):
                        continue  # the line above stops short: its paragraph (or heading) ended there
                    left = min(x.box.l for x in blk)
                    if len({round(x.box.cy) for x in blk}) >= 2 and s.box.l < left - s.size:
                        continue  # outdented past every line of the block: a new paragraph
                    target = blk
                    break
            if target is None:
                blocks.append([s])
            else:
                target.append(s)
        return blocks

    def _headingish(self, blk: list[Span]) -> bool:
        text = " ".join(s.text for s in blk).strip()
        if not text or len(blk) > 3 or len(text) > 160 or is_numeric(text):
            return False
        if text[-1] in ".,;" and not re.match(r"^\s*(item|section)\s+\S+\.?$", text, re.IGNORECASE):
            return False
        if sum(ch.isalpha() for ch in text) < 2:
            return False
        size = max(s.size for s in blk)
        bold = all(s.bold for s in blk)
        words = len(text.split())
        if DOTTED_NUMBER_RE.match(text) and words <= 14:
            return True
        if HEADING_NUMBER_RE.match(text) and words <= 12 and (bold or size > 1.1 * self.body):
            return True
        if size >= 1.15 * self.body and words <= 16:
            return True
        return bold and words <= 12 and len(blk) <= 2

    def _furniture(self, spans: list[Span]) -> tuple[list[Region], list[Span]]:
        """Lines in the top and bottom bands; a little deeper for a running head with a page number."""
        regions: list[Region] = []
        body: list[Span] = []
        rows = group_rows(spans)
        numbered = {
            id(s)
            for r in rows
            if len(r.spans) >= 2 and any(re.fullmatch(r"\d{1,4}", x.text.strip()) for x in r.spans)
            for s in r.spans
        }
        for s in spans:
            deep = id(s) in numbered and s.size <= 1.1 * self.body
            if s.box.b < HEADER_BAND * self.height or deep and s.box.t < 0.125 * self.height:
                regions.append(Region("page_header", s.box, [s]))
            elif s.box.t > (1 - HEADER_BAND) * self.height or deep and s.box.b > 0.9 * self.height:
                regions.append(Region("page_footer", s.box, [s]))
            else:
                body.append(s)
        return regions, body

    def analyse(self, spans: list[Span], rules: Rules, words: list[Span] | None = None) -> list[Region]:
        regions, body = self._furniture(spans)
        rows = group_rows(body)
        tables = self.find_tables(rows, body, rules, words)
        rest = []
        for s in body:
            home = next((t for t in tables if t.contains_center(s.box, 1.0)), None)
            if home is None:
                rest.append(s)
        for t in tables:
            regions.append(Region("table", t, [s for s in body if t.contains_center(s.box, 1.0)]))

        blocks = self._paragraphs(rest)
        blocks.sort(key=lambda b: (b[0].box.t, b[0].box.l))
        largest = max((s.size for s in rest), default=0.0)
        note_anchors = [t.b for t in tables]
        title_done = self.page_no != 1
        for blk in blocks:
            box = blk[0].box
            for s in blk[1:]:
                box = box.union(s.box)
            text = " ".join(s.text for s in blk).strip()
            size = max(s.size for s in blk)
            label = "text"
            near_table_bottom = any(0 <= box.t - y <= 2.6 * size + 4 for y in note_anchors)
            if TABLE_CAPTION_RE.match(text) or OTHER_CAPTION_RE.match(text) or FIGURE_CAPTION_RE.match(text):
                label = "caption"
            elif FOOTNOTE_MARKER_RE.match(text) and (
                near_table_bottom or (size < 0.92 * self.body and box.t > 0.6 * self.height)
            ):
                label = "footnote"
                note_anchors.append(box.b)
            elif (
                not title_done
                and size >= 1.3 * self.body
                and size >= largest - 0.5
                and box.t < 0.45 * self.height
            ):
                label = "title"
                title_done = True
            elif self._headingish(blk):
                label = "section_header"
            elif BULLET_RE.match(text):
                label = "list_item"
            regions.append(Region(label, box, blk))
        return regions


def body_text_size(spans: list[Span]) -> float:
    """The text height carrying the most characters: the size of body text."""
    weights: dict[float, int] = {}
    for s in spans:
        key = round(s.size * 2) / 2
        weights[key] = weights.get(key, 0) + len(s.text)
    if not weights:
        return 10.0
    return max(weights, key=lambda k: weights[k])

