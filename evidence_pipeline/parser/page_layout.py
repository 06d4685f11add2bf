"""Weight-free page layout: text lines and rulings of one PDF page -> labelled regions.

Rules, not a model: tables come from ruling grids, shaded row bands and runs of
column-aligned lines; captions from "Table N" text; section headers from numbering,
bold or larger type; footnotes from markers under a table or small type at the
page bottom; page headers/footers from their position. Everything else is text,
grouped into paragraphs. Docling's reading-order model orders the regions.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from evidence_pipeline.parser.geometry import Box, Rules, Span, cluster_values

# "Table 3-1: ...", "Table 1. ...", "Table 2 Results"; not "Table 1 shows ..." (a sentence citing it).
_CAPTION_TAIL = r"\s*[A-Z]?\d+([.\-–]\d+)*[A-Za-z]?(?=\s*[:.\-–—|](\s|$)|\s+[^a-z\s]|\s*$)"
TABLE_CAPTION_RE = re.compile(r"^\s*(?i:table|tab\.|tbl\.)" + _CAPTION_TAIL + r"|^\s*\[?표\s*\d+\]?")
# Captions that may belong to a table-like block (code listings, exhibits) but are not "Table N".
OTHER_CAPTION_RE = re.compile(r"^\s*(?i:figure|fig\.|chart|exhibit|listing|example|scheme|그림)" + _CAPTION_TAIL)
# Captions that never name a table.
FIGURE_CAPTION_RE = re.compile(r"^\s*(?i:figure|fig\.|chart|scheme|그림)" + _CAPTION_TAIL)
FOOTNOTE_MARKER_RE = re.compile(
    r"^\s*(\*+|[†‡§¶#]+|\([a-z]\)|[a-z]\)|\(\d{1,2}\)|\d{1,2}\)|[¹²³⁴⁵⁶⁷⁸⁹⁰]+|notes?\b|source[s]?:|abbreviations?:|※|\[\d{1,2}\])",
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

    @property
    def box(self) -> Box:
        b = self.spans[0].box
        for s in self.spans[1:]:
            b = b.union(s.box)
        return b

    @property
    def size(self) -> float:
        return max(s.size for s in self.spans)


def group_rows(spans: list[Span]) -> list[Row]:
    """Group spans into visual lines (shared vertical centre), top to bottom, left to right."""
    rows: list[Row] = []
    for s in sorted(spans, key=lambda s: (s.box.cy, s.box.l)):
        if rows:
            last = rows[-1].box
            tol = 0.45 * min(s.box.height, last.height) + 0.5
            if abs(s.box.cy - last.cy) <= tol:
                rows[-1].spans.append(s)
                continue
        rows.append(Row([s]))
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

    def _grow(self, box: Box, rows: list[Row], rules: Rules) -> Box:
        """Take in the column-header lines above a table and tabular lines right below it."""
        inside = [r for r in rows if box.contains_center(r.box, 1.0)]
        data_left = min(
            (r.spans[1].box.l for r in inside if self._tabular(r)), default=box.l + 0.3 * box.width
        )
        for _ in range(5):
            above = [r for r in rows if r.box.b <= box.t + 1 and not box.contains_center(r.box, 1.0)]
            if not above:
                break
            row = max(above, key=lambda r: r.box.b)
            if box.t - row.box.b > max(2.5 * row.size, 16):
                break
            first = row.spans[0].text
            if TABLE_CAPTION_RE.match(first) or OTHER_CAPTION_RE.match(first):
                break
            over_data = all(s.box.l >= data_left - 3 for s in row.spans)
            if not (over_data or self._tabular(row)) or row.box.r > box.r + 0.1 * box.width:
                break
            if row.box.l < box.l - 0.1 * box.width:
                break
            box = box.union(row.box)
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
        best, best_x, run, best_run = None, None, 0, 0
        for x in range(lo, hi):
            crossing = sum(1 for s in spans if s.box.l < x < s.box.r)
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
        for side, width in ((left, best_x), (right, self.width - best_x)):
            if len(side) < 0.25 * len(spans):
                return None
            prose = sum(1 for s in side if s.box.width >= 0.45 * width)
            if prose < 0.3 * len(side):
                return None
        return float(best_x)

    def find_tables(self, rows: list[Row], spans: list[Span], rules: Rules, words: list[Span] | None = None) -> list[Box]:
        grids = self._rule_grids(rules, spans)
        free_spans = [s for s in spans if not any(g.contains_center(s.box, 1.0) for g in grids)]
        free = group_rows(free_spans)
        soft = self._shaded_tables(rules, free)
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
        return [t for t in tables if self._plausible(t, spans, rules, words)]

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
                    if abs(last.size - s.size) > 0.18 * max(last.size, s.size) or last.bold != s.bold:
                        continue
                    if self._headingish(blk) and len(blk) >= 2:
                        continue
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
            if s.box.b < (0.125 if deep else HEADER_BAND) * self.height:
                regions.append(Region("page_header", s.box, [s]))
            elif s.box.t > (1 - (0.1 if deep else HEADER_BAND)) * self.height:
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


def median(values: list[float], default: float = 0.0) -> float:
    return statistics.median(values) if values else default
