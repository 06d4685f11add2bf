"""Where a unit is printed: the boxes of its parts gathered into a few regions per page.

A unit's parts (a table and its continuation parts, a section chunk's paragraphs, a split
piece's rows) are read in order; a part joins the region before it when it is on the same
page and in the same column (their widths overlap by at least half the narrower one), and
opens a new region otherwise. So a section that runs from the foot of one column to the head
of the next is two regions, not one box over the whole page.
"""

from __future__ import annotations

from collections.abc import Iterable

from evidence_pipeline.records import BBox, PageBox, union_boxes

SAME_COLUMN = 0.5


def regions(parts: Iterable[tuple[int | None, BBox | None]], sizes: dict[int, tuple[float, float]]) -> list[PageBox]:
    """The regions of ``parts`` (page, box) in reading order; parts without a page, a box or a
    known page size are left out, so a document without geometry has no regions."""
    out: list[tuple[int, BBox]] = []
    for page, box in parts:
        if page is None or box is None or page not in sizes:
            continue
        if out and out[-1][0] == page and _same_column(out[-1][1], box):
            out[-1] = (page, union_boxes([out[-1][1], box]) or box)
        else:
            out.append((page, box))
    return [PageBox.of(page, box, sizes[page]) for page, box in out]


def _same_column(a: BBox, b: BBox) -> bool:
    narrower = min(a.width, b.width)
    return narrower <= 0 or a.h_overlap(b) >= SAME_COLUMN * narrower


def page_box(page: int | None, box: BBox | None, sizes: dict[int, tuple[float, float]]) -> PageBox | None:
    """One box on its page, or None without a page, a box or the page's size."""
    if page is None or box is None or page not in sizes:
        return None
    return PageBox.of(page, box, sizes[page])
