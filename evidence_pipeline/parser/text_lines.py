"""Lines of a page: spans grouped into visual lines, and what the start of a line says.

Shared by the page layout rules and the table grid builder (neither imports the other).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from evidence_pipeline.parser.geometry import Box, Span
from evidence_pipeline.text import BULLET_GLYPHS

FOOTNOTE_MARKER_RE = re.compile(
    r"^\s*(\*+|[†‡§¶#]+|\([a-z]\)|[a-z]\)|\(\d{1,2}\)|\d{1,2}\)|[¹²³⁴⁵⁶⁷⁸⁹⁰]+|notes?\s*\d{0,2}\s*[:.]\s|source[s]?:|abbreviations?:|※|\[\d{1,2}\])",
    re.IGNORECASE,
)
# Symbol markers that open a new note even inside a run of note lines.
NOTE_SYMBOL_RE = re.compile(r"^\s*([*†‡§¶※]|[¹²³⁴⁵⁶⁷⁸⁹⁰]|(?i:notes?|source)\b)")
BULLET_RE = re.compile(r"^\s*([" + re.escape(BULLET_GLYPHS) + r"]|\(?[a-z]\)|\(?[ivx]+\)|\d{1,2}\))\s+")
HEADING_NUMBER_RE = re.compile(
    r"^\s*((\d{1,2}(\.\d{1,2})+\.?)|(\d{1,2}\.?)|([A-Z]\.)|([IVX]{1,5}\.)|((section|article|chapter|part|item|appendix|annex)\s+[\dIVXA-Z]+[.:]?))\s+\S",
    re.IGNORECASE,
)
# A structural heading: a kind and its number ("PART I", "Part II —", "Item 1.", "ITEM 1A.",
# "Chapter 3", "Article IV", "Note 2 –"). One pattern for every rule that reads them
# (``structural_kind``, ``capital_structural``).
_STRUCTURAL_HEAD = r"^\s*(part|item|chapter|article|note)\s+([IVXLC]+|\d{1,3}[A-Z]?)\b\.?"
STRUCTURAL_RE = re.compile(_STRUCTURAL_HEAD, re.IGNORECASE)
# a heading of one kind and number, nothing else: "Item 2.", "PART II", "Note 4 —"
BARE_STRUCTURAL_RE = re.compile(_STRUCTURAL_HEAD + r"\s*[:.\-–—]?\s*$", re.IGNORECASE)


def structural_key(text: str) -> tuple[str, str] | None:
    """The kind ("part", "item", "chapter", "article", "note"; lower-case) and number
    (upper-case: "II", "1A") of the structural heading ``text`` opens with; None when it opens
    with none."""
    m = STRUCTURAL_RE.match(text)
    return (m.group(1).lower(), m.group(2).upper()) if m else None


def structural_kind(text: str) -> str | None:
    """The kind of structural heading ``text`` opens with (``structural_key``); None when it
    opens with none."""
    key = structural_key(text)
    return key[0] if key else None


def capital_structural(text: str) -> bool:
    """A structural heading with its kind and number set in capitals ("NOTE 6 — INVENTORIES",
    "ITEM 2.", "PART II"): the capitals mark the heading where a filing sets it in the body's
    own type, neither bold nor larger."""
    m = STRUCTURAL_RE.match(text)
    return m is not None and m.group(1).isupper() and m.group(2) == m.group(2).upper()


DOTTED_NUMBER_RE = re.compile(r"^\s*\d{1,2}(\.\d{1,2})+\.?\s+\S")
NUMERIC_RE = re.compile(r"^[\s$€£¥%()\-–—+.,:/*†‡§0-9]+$")


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
            if abs(s.box.cy - last.cy) <= tol or _inside_line(s.box, last):
                rows[-1].spans.append(s)
                last = last.union(s.box)
                continue
        rows.append(Row([s]))
        last = s.box
    for r in rows:
        r.spans.sort(key=lambda s: s.box.l)
    return rows


def _inside_line(a: Box, b: Box) -> bool:
    """A small glyph run (a raised footnote marker) that lies within the height of a line
    twice its size belongs to that line, whichever of the two came first."""
    small, big = (a, b) if a.height <= b.height else (b, a)
    return small.height <= 0.85 * big.height and big.t - 0.5 * big.height <= small.t and small.b <= big.b - 0.2 * big.height


def is_numeric(text: str) -> bool:
    t = text.strip()
    return bool(t) and bool(NUMERIC_RE.match(t)) and any(ch.isdigit() for ch in t)
