"""OCR results as the text cells the rule layout reads: line and word cells in PDF points
(top-left origin), ordered top to bottom.

Two things differ from a PDF's own cells and are evened out here. The detector's boxes are
padded, and padded by more where a line has descenders, so a line's box is cut to its ink:
from the top of its capitals and ascenders to its baseline plus a descender's depth; every
line then measures its type size the same way, and a larger heading stands out as it does
in a born-digital page. The recognizer's word boxes may touch or overlap, so neighbouring
words are kept a word space apart (the table rules join words whose gap is narrower).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from docling_core.types.doc import BoundingBox, CoordOrigin
from docling_core.types.doc.page import BoundingRectangle, TextCell

MIN_SCORE = 0.5  # recognizer confidence under which a line is dropped (faint bleed-through)
WORD_GAP = 0.3  # least gap between two words of a line, as a share of its cap height
DESCENDER = 0.3  # depth below the baseline a line's box keeps, as a share of its cap height
_INK = 128  # grey level under which a pixel is ink


def quads_of(result) -> list[np.ndarray]:
    return [np.asarray(b, dtype=float) for b in (result.boxes if result.boxes is not None else [])]


@dataclass(frozen=True)
class Frame:
    """Image pixels -> page points: one scale for both axes, centred, so an image turned
    upright on a landscape page still fits inside the page's box."""

    px_width: int
    px_height: int
    width: float
    height: float

    @property
    def factor(self) -> float:
        return min(self.width / self.px_width, self.height / self.px_height)

    def box(self, x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
        f = self.factor
        dx = (self.width - self.px_width * f) / 2
        dy = (self.height - self.px_height * f) / 2
        return (x0 * f + dx, y0 * f + dy, x1 * f + dx, y1 * f + dy)


def _cell(index: int, text: str, score: float, box: tuple[float, float, float, float]) -> TextCell:
    bbox = BoundingBox(l=box[0], t=box[1], r=box[2], b=box[3], coord_origin=CoordOrigin.TOPLEFT)
    return TextCell(
        index=index,
        text=text,
        orig=text,
        rect=BoundingRectangle.from_bounding_box(bbox),
        confidence=float(score),
        from_ocr=True,
    )


def ocr_cells(result, frame: Frame, straighten, grey: np.ndarray) -> tuple[list[TextCell], list[TextCell]]:
    """Line cells in reading position (top to bottom, left to right) and their word cells.
    ``straighten`` maps the recognizer's points onto ``grey``, the (levelled) page image."""
    quads = quads_of(result)
    texts = list(result.txts or ())
    scores = list(result.scores or ())
    word_results = list(result.word_results or ()) if getattr(result, "word_results", None) else [()] * len(quads)
    rows = []
    for quad, text, score, words in zip(quads, texts, scores, word_results):
        text = " ".join(text.split())
        if not text or score < MIN_SCORE:
            continue
        quad = straighten(quad)
        words = [(w[0], w[1], straighten(w[2])) for w in words or () if len(w) == 3]
        x0, y0 = quad.min(axis=0)
        x1, y1 = quad.max(axis=0)
        y0, y1, cap = _ink_band(grey, x0, y0, x1, y1)
        rows.append(((y0, x0), text, score, (x0, y0, x1, y1), cap, words))
    rows.sort(key=lambda r: r[0])
    lines: list[TextCell] = []
    word_cells: list[TextCell] = []
    for _, text, score, (x0, y0, x1, y1), cap, words in rows:
        lines.append(_cell(len(lines), text, score, frame.box(x0, y0, x1, y1)))
        spans = []
        for word_text, word_score, word_quad in _words(text, score, (x0, y0, x1, y1), words):
            q = np.asarray(word_quad, dtype=float)
            spans.append([max(float(q[:, 0].min()), x0), min(float(q[:, 0].max()), x1), word_text, word_score])
        for l, r, word_text, word_score in _spaced(spans, WORD_GAP * cap):
            word_cells.append(_cell(len(word_cells), word_text, word_score, frame.box(l, y0, r, y1)))
    return lines, word_cells


def _ink_band(grey: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float]:
    """A line box's top and bottom cut to its ink (see the module's docstring), and its cap
    height in pixels; the box as it was when it holds too little ink to tell."""
    h, w = grey.shape
    top, bottom = max(int(y0), 0), min(int(np.ceil(y1)), h)
    left, right = max(int(x0), 0), min(int(np.ceil(x1)), w)
    if bottom - top < 4 or right - left < 2:
        return y0, y1, max(y1 - y0, 1.0) * 0.6
    rows = (grey[top:bottom, left:right] < _INK).sum(axis=1)
    peak = rows.max()
    none = np.empty(0, dtype=np.intp)
    inked = np.flatnonzero(rows >= 0.05 * peak) if peak else none
    body = np.flatnonzero(rows >= 0.3 * peak) if peak else none
    if len(inked) == 0 or len(body) == 0:
        return y0, y1, max(y1 - y0, 1.0) * 0.6
    cap_top, baseline = top + inked[0], top + body[-1] + 1
    cap = float(baseline - cap_top)
    if cap < 3:
        return y0, y1, max(y1 - y0, 1.0) * 0.6
    return float(cap_top), float(min(baseline + DESCENDER * cap, y1)), cap


def _spaced(spans: list[list], gap: float) -> list[list]:
    """Word extents [left, right, ...] in line order, moved apart to at least ``gap``."""
    spans = sorted(spans, key=lambda s: s[0])
    for prev, nxt in zip(spans, spans[1:]):
        if nxt[0] - prev[1] < gap:
            mid = (prev[1] + nxt[0]) / 2
            prev[1] = max(min(prev[1], mid - gap / 2), prev[0] + 0.5)
            nxt[0] = min(max(nxt[0], mid + gap / 2), nxt[1] - 0.5)
    return spans


def _words(text: str, score: float, line: tuple[float, float, float, float], words) -> list:
    """The recognizer's words when they spell the line; otherwise the line split at its
    spaces, each word's width in proportion to its characters."""
    found = [(w[0], w[1], w[2]) for w in words or () if len(w) == 3 and str(w[0]).strip()]
    if found and " ".join(str(w[0]) for w in found).split() == text.split():
        return found
    x0, y0, x1, y1 = line
    per_char = (x1 - x0) / max(len(text), 1)
    out = []
    for m in re.finditer(r"\S+", text):
        l = x0 + m.start() * per_char
        r = x0 + m.end() * per_char
        out.append((m.group(), score, [[l, y0], [r, y0], [r, y1], [l, y1]]))
    return out
