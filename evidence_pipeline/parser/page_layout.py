"""Weight-free page layout: text lines and rulings of one PDF page -> labelled regions.

Rules, not a model: tables come from ``table_finder``; captions from "Table N" text;
section headers from numbering, bold or larger type; footnotes from markers under a table
or small type at the page bottom; page headers/footers from their position. Everything
else is text, grouped into paragraphs. Docling's reading-order model orders the regions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evidence_pipeline.parser.geometry import Box, Rules, Span
from evidence_pipeline.parser.grid import Grid
from evidence_pipeline.parser.table_finder import BoxKey, TableFinder
from evidence_pipeline.parser.text_lines import (
    BULLET_RE,
    DOTTED_NUMBER_RE,
    FOOTNOTE_MARKER_RE,
    HEADING_NUMBER_RE,
    NOTE_SYMBOL_RE,
    capital_structural,
    group_rows,
    is_numeric,
    structural_kind,
)
from evidence_pipeline.text import is_caption_line

HEADER_BAND = 0.075  # share of the page height at top and bottom that holds page headers/footers
RUNNING_BAND = 0.125  # how deep a running header/footer line may sit, when the document tells them apart
_PAGE_NUMBER = re.compile(r"^\s*(page\s+)?[-–—]?\s*(\d{1,3}|[ivxlc]{1,6})\s*[-–—]?(\s*(of|/)\s*\d{1,3})?\s*$", re.IGNORECASE)
_DIGIT_RUN = re.compile(r"\d+")
# A bullet glyph ending a line is the next item's, printed on this line ("... points. ·").
_TRAILING_BULLET = re.compile(r"\s+[•·▪◦‣●]\s*$")


def _division(text: str) -> bool:
    """A Part, Item, Chapter or Article heading, set bold or larger. A note's heading is
    read here only when set in capitals (``capital_structural``)."""
    return structural_kind(text) not in (None, "note")


def running_key(text: str) -> str:
    """A line's text with its numbers masked: the same running header on every page."""
    return " ".join(_DIGIT_RUN.sub("#", text.lower()).split())


DEFAULT_BODY_SIZE = 10.0  # text height assumed when a document has no text


@dataclass
class Region:
    label: str  # table, caption, section_header, title, footnote, page_header, page_footer, text, list_item
    box: Box
    spans: list[Span] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.spans)


class PageAnalyser:
    """Labels the regions of one page. ``body_size`` is the document's common text height."""

    def __init__(self, width: float, height: float, body_size: float, page_no: int, running: frozenset[str] | None = None):
        """``running``: the document's running lines (see ``conversion_state``); with them, a
        line near the top or bottom is furniture only if it is one of them or a page number,
        so a body that starts high on the page (EDGAR filings) keeps its first lines."""
        self.running = running
        self.width = width
        self.height = height
        self.body = body_size or DEFAULT_BODY_SIZE
        self.page_no = page_no
        self.tables = TableFinder(width, height, self.body)

    @property
    def grids(self) -> dict[BoxKey, Grid]:
        """Table box -> its grid, built while the tables were found (reused by the table stage)."""
        return self.tables.grids

    # ------------------------------------------------------------------- text
    def _paragraphs(self, spans: list[Span]) -> list[list[Span]]:
        left = min((s.box.l for s in spans), default=0.0)
        right = max((s.box.r for s in spans), default=0.0)

        def full(line: Span) -> bool:
            """A justified line that runs to the text's right edge: its paragraph goes on."""
            return line.box.r >= right - 1.5 * line.size and line.box.width >= 0.6 * (right - left)

        gutter = self.tables.gutter(spans)
        column = (right - left) if gutter is None else max(gutter - left, right - gutter)

        def unwrapped(heading: Span, nxt: Span) -> bool:
            """A one-line "Item 1. Financial Statements" with room left for the next line's
            first word did not wrap: the line under it starts something of its own."""
            if not _division(heading.text) or len(heading.text.split()) < 3 or not nxt.text.strip():
                return False
            first = nxt.text.split()[0]
            room = heading.box.width + nxt.box.width * (len(first) + 1) / max(len(nxt.text), 1)
            return room < 0.8 * column

        blocks: list[list[Span]] = []
        for s in sorted(spans, key=lambda s: (s.box.t, s.box.l)):
            starts_new = bool(
                BULLET_RE.match(s.text)
                or is_caption_line(s.text)
                or NOTE_SYMBOL_RE.match(s.text)
                or HEADING_NUMBER_RE.match(s.text)
                and (s.bold or s.size > 1.1 * self.body or DOTTED_NUMBER_RE.match(s.text))
            )
            target = _hyphenated_from(blocks, s)
            if target is None and not starts_new:
                for blk in reversed(blocks):
                    last = blk[-1]
                    gap = s.box.t - last.box.b
                    # double-spaced text (cover pages) keeps its paragraphs when a full line leads on
                    spaced = full(last) and last.bold == s.bold and abs(last.size - s.size) <= 0.1 * s.size
                    if gap > (1.8 if spaced else 0.9) * max(s.size, last.size) or gap < -0.5 * s.size:
                        continue
                    if last.box.h_overlap(s.box) <= 0 and abs(last.box.l - s.box.l) > 2 * s.size:
                        continue
                    caption = is_caption_line(blk[0].text)
                    if abs(last.size - s.size) > 0.18 * max(last.size, s.size):
                        continue
                    if last.bold != s.bold and not caption:  # a caption's label is often bold, its text not
                        continue
                    if self._headingish(blk) and len(blk) >= 2:
                        continue
                    if len(blk) == 1 and unwrapped(last, s):
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
        text = _TRAILING_BULLET.sub("", " ".join(s.text for s in blk)).strip()
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
        if _division(text) and words <= 24 and (bold or size > 1.1 * self.body):
            return True  # "Item 2. Management's Discussion and Analysis of ..." wraps but is one heading
        if capital_structural(text) and words <= 12 and len(blk) == 1:
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
            id(s) for r in rows if len(r.spans) >= 2 and any(re.fullmatch(r"\d{1,4}", x.text.strip()) for x in r.spans) for s in r.spans
        }
        if self.running is not None:
            return self._running_furniture(spans, rows)
        for s in spans:
            deep = id(s) in numbered and s.size <= 1.1 * self.body
            top = s.box.b < HEADER_BAND * self.height or deep and s.box.t < 0.125 * self.height
            bottom = s.box.t > (1 - HEADER_BAND) * self.height or deep and s.box.b > 0.9 * self.height
            if (top or bottom) and not _PAGE_NUMBER.match(s.text) and self._runs_into_body(s, spans, top):
                body.append(s)
            elif top:
                regions.append(Region("page_header", s.box, [s]))
            elif bottom:
                regions.append(Region("page_footer", s.box, [s]))
            else:
                body.append(s)
        return regions, body

    def _runs_into_body(self, s: Span, spans: list[Span], downward: bool) -> bool:
        """A line in the top (bottom) band whose paragraph goes on below (above) the band: lines
        of its type follow at line spacing in its column until one lies outside the band. The
        first lines of a column set high on the page are body text, not a page header."""
        cur = s
        for _ in range(4):
            nxt = None
            for c in spans:
                if c is cur or c.bold != cur.bold or abs(c.size - cur.size) > 0.15 * cur.size:
                    continue
                if c.box.h_overlap(cur.box) < 0.5 * min(c.box.width, cur.box.width):
                    continue
                gap = c.box.t - cur.box.b if downward else cur.box.t - c.box.b
                if -0.2 * cur.size <= gap <= 0.6 * cur.size and (nxt is None or abs(c.box.cy - cur.box.cy) < abs(nxt.box.cy - cur.box.cy)):
                    nxt = c
            if nxt is None:
                return False
            if (nxt.box.b >= HEADER_BAND * self.height) if downward else (nxt.box.t <= (1 - HEADER_BAND) * self.height):
                return True
            cur = nxt
        return False

    def _running_furniture(self, spans: list[Span], rows) -> tuple[list[Region], list[Span]]:
        running = self.running or frozenset()
        alone = {id(r.spans[0]) for r in rows if len(r.spans) == 1}
        regions: list[Region] = []
        body: list[Span] = []
        for s in spans:
            top = s.box.b < RUNNING_BAND * self.height
            bottom = s.box.t > (1 - RUNNING_BAND) * self.height
            known = running_key(s.text) in running or (id(s) in alone and bool(_PAGE_NUMBER.match(s.text)))
            if top and known:
                regions.append(Region("page_header", s.box, [s]))
            elif bottom and known:
                regions.append(Region("page_footer", s.box, [s]))
            else:
                body.append(s)
        return regions, body

    def analyse(self, spans: list[Span], rules: Rules, words: list[Span] | None = None) -> list[Region]:
        regions, body = self._furniture(spans)
        tables = self.tables.find(body, rules, words)
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
            if is_caption_line(text):  # figure captions included
                label = "caption"
            elif FOOTNOTE_MARKER_RE.match(text) and (near_table_bottom or (size < 0.92 * self.body and box.t > 0.6 * self.height)):
                label = "footnote"
                note_anchors.append(box.b)
            elif not title_done and size >= 1.3 * self.body and size >= largest - 0.5 and box.t < 0.45 * self.height:
                label = "title"
                title_done = True
            elif self._headingish(blk):
                label = "section_header"
            elif BULLET_RE.match(text):
                label = "list_item"
            regions.append(Region(label, box, blk))
        return regions


_HYPHENATED = re.compile(r"[^\W\d_]-$")


def _hyphenated_from(blocks: list[list[Span]], s: Span) -> list[Span] | None:
    """The block whose last line ends in a word cut by a hyphen that ``s`` completes: ``s``
    starts in lower case right under it ("practic-" / "ing lawyer"). Such a line goes on the
    paragraph whatever else differs (a check box or a raised mark can make one line taller)."""
    if not s.text[:1].islower():
        return None
    for blk in reversed(blocks):
        last = blk[-1]
        gap = s.box.t - last.box.b
        if (
            _HYPHENATED.search(last.text)
            and -0.3 * s.size <= gap <= 0.9 * s.size
            and last.box.h_overlap(s.box) > 0
            and s.box.l >= last.box.l - 2 * s.size
        ):
            return blk
    return None


def size_key(height: float) -> float:
    """Text heights are compared in half points."""
    return round(height * 2) / 2


def most_common_size(weights: dict[float, int]) -> float | None:
    """The size carrying the most characters (the first such size on a tie)."""
    return max(weights, key=lambda k: weights[k]) if weights else None


def body_text_size(spans: list[Span]) -> float:
    """The text height carrying the most characters: the size of body text."""
    weights: dict[float, int] = {}
    for s in spans:
        key = size_key(s.size)
        weights[key] = weights.get(key, 0) + len(s.text)
    size = most_common_size(weights)
    return DEFAULT_BODY_SIZE if size is None else size
