"""Raised footnote markers, and the type size of a line that carries one.

A footnote marker is set small and raised right after the word it annotates ("Resource
Center¹", "상해¹⁾나", "Vital Signsᵃ"). docling-parse writes it as a word of its own, so the
line reads "Center 1 reports" and "상해 1) 나", and the raised glyph makes the line's box
taller than its text: the paragraph rules then take the line for a different type size and
break its paragraph around it. Here the marker joins its word as superscript characters
(what the page prints; NFKC reads them as the plain digit or letter, as pdfium's text has
them), and the line's size is the height of its text, not of its box. The table rules use
the same test for markers inside cells.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from evidence_pipeline.parser.geometry import Box, Span
from evidence_pipeline.parser.scripts import letter_weight
from evidence_pipeline.tables import SUPER_DIGITS, SUPER_LETTERS

_SUPERSCRIPTS = dict(zip("0123456789abcdefghijklmnoprstuvwxyz()", SUPER_DIGITS + SUPER_LETTERS + "⁽⁾"))
_MARKER = re.compile(r"[^\W_]{1,2}\)?")
TIGHT = 0.08  # a gap under this share of the type size is no word space


def superscript(text: str) -> str | None:
    """A footnote marker in superscript characters ("a" -> "ᵃ", "1)" -> "¹⁾"), or None when one has none."""
    chars = [_SUPERSCRIPTS.get(ch) for ch in text]
    return "".join(chars) if all(chars) else None  # type: ignore[arg-type]


def is_raised_marker(w: Span, before: Span, line_size: float) -> bool:
    """``w`` is a footnote marker set small and raised right after the word ``before``: its
    bottom sits well above the word's and nothing separates them."""
    gap = w.box.l - before.box.r
    return (
        bool(_MARKER.fullmatch(w.text))
        and gap <= TIGHT * line_size
        and (w.box.height <= 0.7 * line_size or w.box.height <= 0.85 * line_size and w.box.t < before.box.t - 0.1 * line_size)
        and w.box.b <= before.box.b - 0.2 * line_size
        and not before.text[-1:].isspace()
        and superscript(w.text) is not None
    )


def text_size(words: list[Span]) -> float:
    """The height of the tallest word of three or more letters (a Hangul or CJK syllable
    counts two): the line's type without its markers, bullets and check boxes; the
    tallest word when there is no such word."""
    long = [w for w in words if letter_weight(w.text) >= 3] or words
    return max((w.box.height for w in long), default=0.0)


class _WordIndex:
    """The page's words by vertical centre, to find a line's words without scanning them all."""

    def __init__(self, words: list[Span]):
        self.words = sorted(words, key=lambda w: w.box.cy)
        self.keys = [w.box.cy for w in self.words]

    def inside(self, box: Box) -> list[Span]:
        lo, hi = bisect_left(self.keys, box.t - 0.5), bisect_right(self.keys, box.b + 0.5)
        return sorted((w for w in self.words[lo:hi] if box.l - 0.5 <= w.box.cx <= box.r + 0.5), key=lambda w: w.box.l)


def mark_lines(lines: list[Span], words: list[Span]) -> list[Span]:
    """Lines with their raised markers joined to their words and their size taken from their
    text. A line is rewritten only where its words spell exactly its text, so a line whose
    words cannot be told apart stays as decoded."""
    index = _WordIndex(words)
    out: list[Span] = []
    for line in lines:
        inner = index.inside(line.box)
        if len(inner) < 2 or line.text.split() != [w.text for w in inner]:
            out.append(line)
            continue
        size = text_size(inner)
        # a line keeps its size unless its box is clearly taller than its text
        out.append(_joined(line, inner, size if 0 < size < 0.9 * line.size else line.size))
    return out


def _joined(line: Span, words: list[Span], size: float) -> Span:
    parts: list[str] = [words[0].text]
    prev = words[0]
    glued = False  # the last part ended with a marker
    changed = False
    for w in words[1:]:
        raised = superscript(w.text) if is_raised_marker(w, prev, size) else None
        if raised:
            parts[-1] += raised
            glued = changed = True
        elif glued and w.box.l - prev.box.r <= TIGHT * size:
            parts[-1] += w.text  # the word goes on after its marker ("상해¹⁾나")
            glued = False
        else:
            parts.append(w.text)
            glued = False
        prev = w
    text = " ".join(parts) if changed else line.text
    cells = line.cells
    if changed and len(cells) == 1:
        cells = [cells[0].model_copy(update={"text": text})]
    elif changed:
        text = line.text  # a line made of several cells keeps their texts
    return Span(line.index, text, line.box, line.font, line.bold, size, cells)
