"""Plain geometry for the weight-free PDF layout rules (top-left origin, PDF points)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

# Font names that mark bold text: "Arial-BoldMT", "Calibri,Bold", TeX's "SFBX1000"/"CMBX10"
# (bold extended) and "NimbusRomNo9L-Medi".
_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|-medi|[-,]bd\b|(cm|sf|ec|lm)bx\d", re.IGNORECASE)


@dataclass
class Box:
    l: float
    t: float
    r: float
    b: float

    @property
    def width(self) -> float:
        return self.r - self.l

    @property
    def height(self) -> float:
        return self.b - self.t

    @property
    def cx(self) -> float:
        return (self.l + self.r) / 2

    @property
    def cy(self) -> float:
        return (self.t + self.b) / 2

    def union(self, other: Box) -> Box:
        return Box(min(self.l, other.l), min(self.t, other.t), max(self.r, other.r), max(self.b, other.b))

    def expanded(self, d: float) -> Box:
        return Box(self.l - d, self.t - d, self.r + d, self.b + d)

    def intersects(self, other: Box) -> bool:
        return self.l <= other.r and other.l <= self.r and self.t <= other.b and other.t <= self.b

    def h_overlap(self, other: Box) -> float:
        return max(0.0, min(self.r, other.r) - max(self.l, other.l))

    def v_overlap(self, other: Box) -> float:
        return max(0.0, min(self.b, other.b) - max(self.t, other.t))

    def contains_center(self, other: Box, tol: float = 0.0) -> bool:
        return self.l - tol <= other.cx <= self.r + tol and self.t - tol <= other.cy <= self.b + tol

    def same(self, other: Box, tol: float) -> bool:
        """Every edge within ``tol`` of the other box's."""
        return max(abs(self.l - other.l), abs(self.t - other.t), abs(self.r - other.r), abs(self.b - other.b)) <= tol

    def overlap_ratio_of(self, other: Box) -> float:
        """Share of ``other``'s area that lies inside this box."""
        area = max(other.width, 1e-6) * max(other.height, 1e-6)
        return self.h_overlap(other) * self.v_overlap(other) / area


@dataclass
class Span:
    """A run of text on one line (a docling-parse text line or word) with its font."""

    index: int
    text: str
    box: Box
    font: str = ""
    bold: bool = False
    size: float = 0.0
    cells: list = field(default_factory=list)  # the docling cells this span stands for


def is_bold_font(font_name: str) -> bool:
    return bool(_BOLD_FONT.search(font_name or ""))


# Picture fonts (a check box, a bullet): their glyphs decode as letters ("y", "q") that are
# never part of the word printed next to them.
_DINGBAT_FONT = re.compile(r"wingding|webding|dingbat", re.IGNORECASE)


def is_dingbat_font(font_name: str) -> bool:
    return bool(_DINGBAT_FONT.search(font_name or ""))


@dataclass
class Rules:
    """Ruling segments of a page: horizontal ones as (y, x0, x1), vertical ones as (x, y0, y1)."""

    horizontal: list[tuple[float, float, float]] = field(default_factory=list)
    vertical: list[tuple[float, float, float]] = field(default_factory=list)
    fills: list[Box] = field(default_factory=list)  # larger painted areas (shaded rows, boxes)

    @classmethod
    def from_boxes(cls, boxes: list[Box], fills: list[Box] | None = None, max_thick: float = 2.5) -> Rules:
        rules = cls(fills=list(fills or []))
        for b in boxes:
            if b.height <= max_thick and b.width >= 4:
                rules.horizontal.append((b.cy, b.l, b.r))
            elif b.width <= max_thick and b.height >= 4:
                rules.vertical.append((b.cx, b.t, b.b))
        return rules

    def joined_verticals(self, gap: float = 1.5, tol: float = 1.0) -> Rules:
        """The same rulings with collinear vertical segments that (nearly) touch joined into one.

        Word processors draw a table's column rulings cell by cell: one short segment per row,
        sometimes stopping short of the row rule between them. Joined, they show the column
        edge that runs the table's height."""
        lines: list[list[tuple[float, float, float]]] = []  # segments at one x
        for v in sorted(self.vertical):
            if lines and v[0] - lines[-1][-1][0] <= tol:
                lines[-1].append(v)
            else:
                lines.append([v])
        joined: list[tuple[float, float, float]] = []
        for line in lines:
            x = line[0][0]
            start = len(joined)
            for _, y0, y1 in sorted(line, key=lambda v: v[1]):
                if len(joined) > start and (y0 <= joined[-1][2] + gap or self._ruled_gap(x, joined[-1][2], y0)):
                    joined[-1] = (x, joined[-1][1], max(joined[-1][2], y1))
                else:
                    joined.append((x, y0, y1))
        return Rules(horizontal=list(self.horizontal), vertical=joined, fills=list(self.fills))

    def _ruled_gap(self, x: float, y0: float, y1: float, most: float = 4.0) -> bool:
        """Whether a short gap from ``y0`` to ``y1`` in a column ruling at ``x`` is where a
        horizontal rule (often drawn double) crosses it: the segments above and below meet there."""
        return y1 - y0 <= most and any(y0 - 1 <= y <= y1 + 1 and x0 - 1 <= x <= x1 + 1 for y, x0, x1 in self.horizontal)

    def inside(self, box: Box, tol: float = 2.0) -> Rules:
        ex = box.expanded(tol)
        return Rules(
            horizontal=[h for h in self.horizontal if ex.t <= h[0] <= ex.b and h[2] > ex.l and h[1] < ex.r],
            vertical=[v for v in self.vertical if ex.l <= v[0] <= ex.r and v[2] > ex.t and v[1] < ex.b],
            fills=[f for f in self.fills if ex.intersects(f)],
        )


_N = TypeVar("_N", int, float)


def chains(values: Iterable[_N], gap: float) -> list[list[_N]]:
    """``values`` sorted and cut wherever one lies more than ``gap`` past the one before it."""
    out: list[list[_N]] = []
    for v in sorted(values):
        if out and v - out[-1][-1] <= gap:
            out[-1].append(v)
        else:
            out.append([v])
    return out


def cluster_values(values: list[float], tol: float) -> list[float]:
    """Sorted representatives of values that lie within ``tol`` of their neighbour."""
    return [sum(g) / len(g) for g in chains(values, tol)]
