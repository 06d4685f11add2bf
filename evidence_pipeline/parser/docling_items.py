"""The items of a DoclingDocument as entries in reading order, with top-left boxes.

Docling keeps boxes with a bottom-left origin; they become top-left here, once. An entry
holds what the conversion to a ``ParsedDoc`` decides about an item: its label, level,
place in the reading order and, for captions and footnotes, the table it belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from docling_core.types.doc import (
    ContentLayer,
    DocItem,
    DocItemLabel,
    DoclingDocument,
    ListItem,
    PictureItem,
    SectionHeaderItem,
    TableItem,
    TextItem,
    TitleItem,
)

from evidence_pipeline.parser.scripts import fold_presentation_forms
from evidence_pipeline.records import BBox, TableCell, union_boxes

LABELS = {
    DocItemLabel.TITLE: "title",
    DocItemLabel.SECTION_HEADER: "section_header",
    DocItemLabel.TEXT: "paragraph",
    DocItemLabel.PARAGRAPH: "paragraph",
    DocItemLabel.LIST_ITEM: "list_item",
    DocItemLabel.CAPTION: "caption",
    DocItemLabel.FOOTNOTE: "footnote",
    DocItemLabel.PAGE_HEADER: "page_header",
    DocItemLabel.PAGE_FOOTER: "page_footer",
}


@dataclass
class Entry:
    key: float
    item: DocItem
    page: int | None
    bbox: BBox | None
    label: str = ""
    text: str = ""
    level: int | None = None
    pages: list[int] = field(default_factory=list)
    table_of: Entry | None = None  # caption/footnote: the table it belongs to

    @property
    def box(self) -> BBox:
        """``bbox`` where the caller has kept only entries that have one."""
        assert self.bbox is not None
        return self.bbox


def item_box(doc: DoclingDocument, item: DocItem) -> tuple[int | None, BBox | None, list[int]]:
    if not item.prov:
        return None, None, []
    prov = item.prov[0]
    page = doc.pages.get(prov.page_no)
    height = page.size.height if page is not None else 0.0
    tl = prov.bbox.to_top_left_origin(page_height=height)
    pages = sorted({p.page_no for p in item.prov})
    return prov.page_no, BBox(l=tl.l, t=tl.t, r=tl.r, b=tl.b), pages


def table_cells(item: TableItem) -> tuple[list[TableCell], int]:
    data = item.data
    cells: list[TableCell] = []
    seen: set[tuple[int, int]] = set()
    for c in data.table_cells:
        slot = (c.start_row_offset_idx, c.start_col_offset_idx)
        if slot in seen:
            continue
        seen.add(slot)
        cells.append(
            TableCell(
                row=c.start_row_offset_idx,
                col=c.start_col_offset_idx,
                text=fold_presentation_forms(c.text.strip()),
                row_span=max(1, c.end_row_offset_idx - c.start_row_offset_idx),
                col_span=max(1, c.end_col_offset_idx - c.start_col_offset_idx),
                column_header=bool(c.column_header),
                row_header=bool(c.row_header),
            )
        )
    header_rows = 0
    for r in range(data.num_rows):
        row = [c for c in cells if c.row == r]
        if row and all(c.column_header for c in row if c.text):
            header_rows = r + 1
        else:
            break
    header_rows = min(header_rows, max(data.num_rows - 1, 0))
    # Every body row's first column names the row.
    cells = [
        c.model_copy(
            update={
                "row_header": c.row_header or (c.col == 0 and c.row >= header_rows and data.num_cols > 1),
                "column_header": c.row < header_rows,
            }
        )
        for c in cells
    ]
    return sorted(cells, key=lambda c: (c.row, c.col)), header_rows


def row_boxes(doc: DoclingDocument, item: TableItem, page: int | None) -> list[BBox | None]:
    """The box of each grid row of ``item`` (top-left origin): the union of the cells that
    start in it and span only it, else of every cell that starts in it; None for a row
    whose cells have no box."""
    height = page_height(doc, page)
    rows: list[list[BBox]] = [[] for _ in range(item.data.num_rows)]
    spanning: list[list[BBox]] = [[] for _ in range(item.data.num_rows)]
    for c in item.data.table_cells:
        if c.bbox is None or not 0 <= c.start_row_offset_idx < len(rows):
            continue
        tl = c.bbox.to_top_left_origin(page_height=height)
        single = c.end_row_offset_idx - c.start_row_offset_idx <= 1
        (rows if single else spanning)[c.start_row_offset_idx].append(BBox(l=tl.l, t=tl.t, r=tl.r, b=tl.b))
    return [union_boxes(own or wide) for own, wide in zip(rows, spanning)]


def page_sizes(doc: DoclingDocument) -> dict[int, tuple[float, float]]:
    """Page number -> (width, height) in points, for every page Docling read."""
    return {n: (round(p.size.width, 2), round(p.size.height, 2)) for n, p in sorted(doc.pages.items())}


def page_height(doc: DoclingDocument, page: int | None) -> float:
    p = doc.pages.get(page) if page is not None else None
    return p.size.height if p is not None else 0.0


def read_entries(doc: DoclingDocument) -> tuple[list[Entry], dict[str, Entry]]:
    """Text and table items of the body and the furniture, in Docling's reading order,
    and the same entries by item reference (for Docling's caption and footnote links)."""
    entries: list[Entry] = []
    by_ref: dict[str, Entry] = {}
    for n, (item, _) in enumerate(
        doc.iterate_items(with_groups=False, included_content_layers={ContentLayer.BODY, ContentLayer.FURNITURE})
    ):
        if not isinstance(item, (TextItem, TableItem)) or isinstance(item, PictureItem):
            continue
        page, bbox, pages = item_box(doc, item)
        entry = Entry(float(n), item, page, bbox, pages=pages)
        if isinstance(item, TableItem):
            entry.label = "table"
        else:
            text = fold_presentation_forms((item.text or "").strip())
            if not text:
                continue
            entry.text = text
            entry.label = LABELS.get(item.label, "other")
            if item.content_layer == ContentLayer.FURNITURE and entry.label not in ("page_header", "page_footer"):
                entry.label = "page_header" if bbox is None or bbox.t < 0.5 * page_height(doc, page) else "page_footer"
            if isinstance(item, SectionHeaderItem):
                entry.level = item.level
            elif isinstance(item, TitleItem):
                entry.label = "title"
            elif isinstance(item, ListItem):
                entry.label = "list_item"
        entries.append(entry)
        by_ref[item.self_ref] = entry
    return entries, by_ref
