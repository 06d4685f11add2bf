"""Page headers and footers: where they read, and running text that repeats on many pages."""

from __future__ import annotations

import re

from docling_core.types.doc import DoclingDocument

from evidence_pipeline.parser.docling_items import Entry, page_height

_DIGITS = re.compile(r"\d+")


def place_furniture(entries: list[Entry], doc: DoclingDocument) -> None:
    """Page headers read before their page's body, page footers after it."""
    body = [e for e in entries if e.label not in ("page_header", "page_footer") and e.page is not None]
    for e in entries:
        if e.label not in ("page_header", "page_footer") or e.page is None:
            continue
        if e.label == "page_header":
            later = [b.key for b in body if b.page >= e.page]
            e.key = (min(later) if later else 1e9) - 0.5 + (e.bbox.t if e.bbox else 0) * 1e-6
        else:
            earlier = [b.key for b in body if b.page <= e.page]
            e.key = (max(earlier) if earlier else -1.0) + 0.5 + (e.bbox.t if e.bbox else 0) * 1e-6


def repeated_furniture(entries: list[Entry], doc: DoclingDocument) -> None:
    """Text repeated at the top or bottom of several pages is a running header or footer."""
    if len(doc.pages) < 3:
        return
    seen: dict[tuple[str, str], set[int]] = {}
    extremes = page_extremes(entries)
    for e in entries:
        if e.label in ("table", "page_header", "page_footer") or e.bbox is None or e.page is None:
            continue
        h = page_height(doc, e.page)
        if not h or len(e.text) > 120:
            continue
        where = _edge(e, extremes, h)
        if where:
            seen.setdefault((where, _DIGITS.sub("#", e.text.lower())), set()).add(e.page)
    need = max(3, len(doc.pages) // 3)
    for e in entries:
        if e.label in ("table", "page_header", "page_footer") or e.bbox is None or e.page is None:
            continue
        h = page_height(doc, e.page)
        where = _edge(e, extremes, h) if h else None
        if where is not None:  # only a line at the page's edge runs there ("2023" over a column is no page number)
            pages = seen.get((where, _DIGITS.sub("#", e.text.lower())), set())
            if len(pages) >= need and e.page in pages:
                e.label = "page_header" if where == "top" else "page_footer"
                e.level = None
    place_furniture(entries, doc)


def page_extremes(entries: list[Entry]) -> dict[int, tuple[int, int]]:
    """Per page, the ids of its first (topmost) and last (lowest) entry outside the furniture:
    where running lines read."""
    by_page: dict[int, list[Entry]] = {}
    for e in entries:
        if e.page is not None and e.bbox is not None and e.label not in ("page_header", "page_footer"):
            by_page.setdefault(e.page, []).append(e)
    return {
        page: (id(min(items, key=lambda x: x.bbox.t)), id(max(items, key=lambda x: x.bbox.b)))
        for page, items in by_page.items()
    }


def _edge(e: Entry, extremes: dict[int, tuple[int, int]], page_height: float) -> str | None:
    """"top"/"bottom" when the item sits in the page margin or is the page's first/last item."""
    if e.bbox.b < 0.12 * page_height:
        return "top"
    if e.bbox.t > 0.88 * page_height:
        return "bottom"
    first, last = extremes.get(e.page, (0, 0))
    if id(e) == last:
        return "bottom"
    if id(e) == first:
        return "top"
    return None
