"""What docling-parse decoded for a page, as the rule models' ``Span`` lines and ``Rules``.

Text lines and words carry their font (bold is read from the font name) and their height;
rulings are stroked lines and thin filled rectangles; larger filled areas are kept as fills
(shaded rows, boxes). Coordinates stay top-left, in PDF points.
"""

from __future__ import annotations

from docling.datamodel.base_models import Page
from docling_core.types.doc import BoundingBox, CoordOrigin

from evidence_pipeline.parser.geometry import Box, Rules, Span, is_bold_font
from evidence_pipeline.parser.text_lines import HEADING_NUMBER_RE


def to_box(bbox: BoundingBox) -> Box:
    return Box(bbox.l, bbox.t, bbox.r, bbox.b)


def page_rules(page: Page) -> Rules:
    backend = page._backend
    boxes: list[Box] = []
    fills: list[Box] = []
    if backend is None:
        return Rules()
    for b in backend.get_shape_lines() or []:
        boxes.append(to_box(b))
    for b in backend.get_thin_shape_boxes(max_thickness=2.5) or []:
        boxes.append(to_box(b))
    for b in backend.get_connected_shape_bounding_boxes() or []:
        if min(b.width, b.height) > 3:
            fills.append(to_box(b))
    return Rules.from_boxes(boxes, fills)


def cell_text(cell) -> str:
    """A docling-parse cell's text as printed (docling-parse writes some hyphens as '\\x02')."""
    return cell.text.replace("\x02", "-").strip()


def spans_of(cells) -> list[Span]:
    spans = []
    for i, cell in enumerate(cells):
        text = cell_text(cell)
        if not text:
            continue
        b = cell.rect.to_bounding_box()
        if b.coord_origin != CoordOrigin.TOPLEFT:
            raise ValueError("docling-parse cells are expected in top-left coordinates")
        font = getattr(cell, "font_name", "") or ""
        spans.append(Span(i, text, Box(b.l, b.t, b.r, b.b), font, is_bold_font(font), b.height, [cell]))
    return spans


def page_words(page: Page) -> list[Span]:
    seg = page._backend.get_segmented_page() if page._backend is not None else None
    return spans_of(seg.word_cells) if seg is not None else []


def split_run_in_headings(lines: list[Span], words: list[Span]) -> list[Span]:
    """Split "5.1 Results We picked..." (bold number and title, then body text) into heading + text."""
    out: list[Span] = []
    for line in lines:
        if not line.bold or not HEADING_NUMBER_RE.match(line.text):
            out.append(line)
            continue
        inner = sorted((w for w in words if line.box.contains_center(w.box, 0.5)), key=lambda w: w.box.l)
        k = next((i for i, w in enumerate(inner) if not w.bold), None)
        if not k or k >= len(inner) or len(inner[:k]) < 2:
            out.append(line)
            continue
        for part in (inner[:k], inner[k:]):
            box = part[0].box
            for w in part[1:]:
                box = box.union(w.box)
            cells = [c for w in part for c in w.cells]
            out.append(Span(part[0].index, " ".join(w.text for w in part), box, part[0].font, part[0].bold, line.size, cells))
    return out
