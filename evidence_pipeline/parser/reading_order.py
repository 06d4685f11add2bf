"""Reading order of a page's blocks from their positions.

Docling's reading-order stage reads a page column by column over its whole height: on a
page whose top and bottom run full width around a two-column band, the band's right
column comes after the full-width text below it, and a table centred on the page comes
after all the left-aligned text. Here a page is cut into horizontal bands where no block
overlaps the next, and consecutive bands that share a column gutter form one two-column
band, read left column first; everything else reads top to bottom. A gutter counts only
between columns of real width, so a form's narrow labels and their values keep reading
line by line.
"""

from __future__ import annotations

from collections import defaultdict

from evidence_pipeline.parser.docling_items import Entry, page_height

_FURNITURE = ("page_header", "page_footer")
_GUTTER = 6.0  # pt of clear space between two columns
_COLUMN_SHARE = 0.3  # a column is at least this share of the blocks' width


def reorder_pages(entries: list[Entry], doc) -> None:
    """Give the body entries of each page the keys of that page in positional order."""
    pages: dict[int, list[Entry]] = defaultdict(list)
    for e in entries:
        if e.label not in _FURNITURE and e.bbox is not None and e.page is not None:
            pages[e.page].append(e)
    for page, items in pages.items():
        if len(items) < 2 or page_height(doc, page) <= 0:
            continue
        keys = sorted(e.key for e in items)
        for key, e in zip(keys, positional_order(items)):
            e.key = key


def positional_order(items: list[Entry]) -> list[Entry]:
    width = max(e.box.r for e in items) - min(e.box.l for e in items)
    out: list[Entry] = []
    for band in _bands(items, width):
        out += _read_band(band, width)
    return out


def _horizontal_groups(items: list[Entry]) -> list[list[Entry]]:
    groups: list[list[Entry]] = []
    bottom = float("-inf")
    for e in sorted(items, key=_top):
        if groups and e.box.t < bottom - 1.0:
            groups[-1].append(e)
            bottom = max(bottom, e.box.b)
        else:
            groups.append([e])
            bottom = e.box.b
    return groups


def _gutter(items: list[Entry], width: float) -> tuple[float, float] | None:
    """The clear x-range between a left and a right column of real width, if any."""
    ordered = sorted(items, key=lambda e: e.box.l)
    left_edge = ordered[0].box.l
    right_edge = max(e.box.r for e in items)
    reach = ordered[0].box.r
    for e in ordered[1:]:
        if e.box.l >= reach + _GUTTER:
            if reach - left_edge >= _COLUMN_SHARE * width and right_edge - e.box.l >= _COLUMN_SHARE * width:
                return reach, e.box.l
            return None
        reach = max(reach, e.box.r)
    return None


def _bands(items: list[Entry], width: float) -> list[list[Entry]]:
    """Horizontal groups, with neighbours that share a column gutter joined into one band."""
    bands: list[list[Entry]] = []
    last_gutter: tuple[float, float] | None = None
    for group in _horizontal_groups(items):
        gutter = _gutter(group, width) if len(group) > 1 else None
        if gutter is not None and last_gutter is not None and min(gutter[1], last_gutter[1]) > max(gutter[0], last_gutter[0]) - 1:
            bands[-1] += group
            last_gutter = (max(gutter[0], last_gutter[0]), min(gutter[1], last_gutter[1]))
            continue
        bands.append(list(group))
        last_gutter = gutter
    return bands


def _read_band(band: list[Entry], width: float) -> list[Entry]:
    gutter = _gutter(band, width) if len(band) > 1 else None
    if gutter is None:
        return sorted(band, key=_top)
    left = [e for e in band if e.box.r <= gutter[0] + 0.5]
    right = [e for e in band if e.box.r > gutter[0] + 0.5]
    return sorted(left, key=_top) + sorted(right, key=_top)


def _top(e: Entry) -> tuple[float, float]:
    return (e.box.t, e.box.l)
