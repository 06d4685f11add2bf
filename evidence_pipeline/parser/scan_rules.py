"""Table rulings of a scanned page, found in its pixels.

A scan has no vector lines for the table rules to read; its rulings are long thin runs
of ink. Ink is what is clearly darker than its neighbourhood (so faint grey rules on white
count, and a shaded row's even tone does not); an opening with a long horizontal (or
vertical) stroke keeps only runs at least a fraction of the page long, which letters never
are; short breaks left by a scanner are closed first along the same direction.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from evidence_pipeline.parser.geometry import Box, Rules

MIN_RUN_SHARE = 1 / 40  # shortest ruling, as a share of the page's width (height for vertical ones)
_GAP_PX = 6  # breaks of up to this many pixels along a ruling are closed
_LOCAL_BLOCK = 31  # neighbourhood (pixels) a pixel's darkness is compared with
_LOCAL_DELTA = 18  # grey levels darker than the neighbourhood's mean, to count as ink
_MAX_THICK_PX = 8  # thicker runs are bars or solid fills, not rulings


def image_rules(grey: np.ndarray, to_points: Callable[[float, float, float, float], tuple[float, float, float, float]]) -> Rules:
    """Horizontal and vertical rulings of a page image; ``to_points`` maps a pixel box
    (x0, y0, x1, y1) to page points."""
    import cv2

    ink = cv2.adaptiveThreshold(grey, 1, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, _LOCAL_BLOCK, _LOCAL_DELTA)
    height, width = grey.shape
    boxes: list[Box] = []
    for horizontal in (True, False):
        span = int(max(20, (width if horizontal else height) * MIN_RUN_SHARE))
        close = (_GAP_PX, 1) if horizontal else (1, _GAP_PX)
        open_ = (span, 1) if horizontal else (1, span)
        mask = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, close))
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, open_))
        n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        for x, y, w, h, _area in stats[1:n].tolist():
            thick, long = (h, w) if horizontal else (w, h)
            if thick > _MAX_THICK_PX or long < span:
                continue
            l, t, r, b = to_points(x, y, x + w, y + h)
            if horizontal:
                mid = (t + b) / 2
                boxes.append(Box(l, mid - 0.5, r, mid + 0.5))
            else:
                mid = (l + r) / 2
                boxes.append(Box(mid - 0.5, t, mid + 0.5, b))
    boxes.sort(key=lambda b: (b.t, b.l, b.b, b.r))
    return Rules.from_boxes(boxes, [])
