"""Page headers and footers: where they read, and running text that repeats on many pages."""

from __future__ import annotations

import re

from docling_core.types.doc import DoclingDocument

from evidence_pipeline.parser.docling_items import Entry, page_height
from evidence_pipeline.parser.geometry import chains

_DIGITS = re.compile(r"\d+")
RUN = 3  # a line at the same edge of this many pages, close together, runs there
GAP = 3  # pages without the line that end its stretch: a line seen again after more runs anew
# a page number as the digit-folded key reads it: "#", "page #", "# of #", "- # -"
_PAGE_NUMBER_KEY = re.compile(r"^[-–—\s]*(page\s*)?#(\s*(of|/)\s*#)?[-–—\s]*$")


def place_furniture(entries: list[Entry], doc: DoclingDocument) -> None:
    """Page headers read before their page's body, page footers after it."""
    body = [(e.page, e.key) for e in entries if e.label not in ("page_header", "page_footer") and e.page is not None]
    for e in entries:
        if e.label not in ("page_header", "page_footer") or e.page is None:
            continue
        if e.label == "page_header":
            later = [key for page, key in body if page >= e.page]
            e.key = (min(later) if later else 1e9) - 0.5 + (e.bbox.t if e.bbox else 0) * 1e-6
        else:
            earlier = [key for page, key in body if page <= e.page]
            e.key = (max(earlier) if earlier else -1.0) + 0.5 + (e.bbox.t if e.bbox else 0) * 1e-6


def repeated_furniture(entries: list[Entry], doc: DoclingDocument) -> None:
    """Text repeated at the top or bottom of several pages is a running header or footer:
    on a third of the pages (at least three), or, for a line of body text in the page margin or
    a page number on the page's first or last line, over a stretch of pages (``_stretches``). So a running
    title whose wording changes part-way through the document (a protocol's "... Strength and
    Muscle Toning" on pp. 2-7, "... Muscle Toning and Circumferential Reduction" after) is
    furniture in each of its stretches, while a heading that opens every other page below the
    margin ("Operating Income Summary") or an exhibit's caption stays what it is."""
    if len(doc.pages) < 3:
        return
    seen: dict[tuple[str, str], set[int]] = {}
    stretchable: dict[tuple[str, str], set[int]] = {}  # pages of the lines that may run over a stretch
    extremes = page_extremes(entries)
    candidates: list[tuple[Entry, tuple[str, str], bool]] = []
    for e in entries:
        if e.label in ("table", "page_header", "page_footer") or e.bbox is None or e.page is None:
            continue
        h = page_height(doc, e.page)
        where = _edge(e, extremes, h) if h else None
        if where is None:  # only a line at the page's edge runs there ("2023" over a column is no page number)
            continue
        key = (where, _DIGITS.sub("#", e.text.lower()))
        # body text in the margin band, or a page number on the page's first or last line
        stretch = e.label == "paragraph" and (_margin(e, h) is not None or bool(_PAGE_NUMBER_KEY.match(key[1])))
        candidates.append((e, key, stretch))
        if len(e.text) <= 120:
            seen.setdefault(key, set()).add(e.page)
            if stretch:
                stretchable.setdefault(key, set()).add(e.page)
    need = max(3, len(doc.pages) // 3)
    stretches = {key: _stretches(pages) for key, pages in stretchable.items()}
    for e, key, stretch in candidates:
        pages = seen.get(key, set())
        if e.page in pages and (len(pages) >= need or stretch and e.page in stretches.get(key, ())):
            e.label = "page_header" if key[0] == "top" else "page_footer"
            e.level = None
    place_furniture(entries, doc)


def _stretches(pages: set[int]) -> set[int]:
    """The pages of ``pages`` that are a running line's stretch: a run of pages no more than
    ``GAP`` apart, at least ``RUN`` of them, filling at least half of the pages from its first to
    its last (a line the parser merged into the body on some pages still runs on the others).
    A stretch ends where the line is missing for longer: the issuer's name over the statements
    of pp. 3-9 runs there, its one more time over an exhibit on p. 35 does not undo that."""
    runs = chains(pages, GAP)
    return {p for run in runs if len(run) >= RUN and 2 * len(run) >= run[-1] - run[0] + 1 for p in run}


def page_extremes(entries: list[Entry]) -> dict[int, tuple[frozenset[int], frozenset[int]]]:
    """Per page, the ids of the entries outside the furniture on its first (topmost) and on its
    last (lowest) line: where running lines read. A line holds every entry beside the extreme
    one that shares half its height (a company's name, "2021 Form 10-K" and a page number: three
    items on one footer line)."""
    by_page: dict[int, list[Entry]] = {}
    for e in entries:
        if e.page is not None and e.bbox is not None and e.label not in ("page_header", "page_footer"):
            by_page.setdefault(e.page, []).append(e)
    out: dict[int, tuple[frozenset[int], frozenset[int]]] = {}
    for page, items in by_page.items():
        top = min(items, key=lambda x: x.box.t)
        low = max(items, key=lambda x: x.box.b)
        out[page] = (frozenset(id(x) for x in items if _same_line(x, top)), frozenset(id(x) for x in items if _same_line(x, low)))
    return out


def _same_line(a: Entry, b: Entry) -> bool:
    """``a`` is ``b`` or sits beside it: their vertical overlap is at least half the shorter's height."""
    if a is b:
        return True
    overlap = a.box.v_overlap(b.box)
    return overlap > 0 and overlap >= 0.5 * min(a.box.height, b.box.height)


def _margin(e: Entry, page_height: float) -> str | None:
    """ "top"/"bottom" when the item sits in the page's top or bottom margin."""
    if e.box.b < 0.12 * page_height:
        return "top"
    if e.box.t > 0.88 * page_height:
        return "bottom"
    return None


def _edge(e: Entry, extremes: dict[int, tuple[frozenset[int], frozenset[int]]], page_height: float) -> str | None:
    """ "top"/"bottom" when the item sits in the page margin or on the page's first/last line."""
    margin = _margin(e, page_height)
    if margin:
        return margin
    none: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset())
    first, last = extremes.get(e.page, none) if e.page is not None else none
    if id(e) in last:
        return "bottom"
    if id(e) in first:
        return "top"
    return None
