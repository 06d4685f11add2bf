"""DoclingDocument -> ParsedDoc, shared by the PDF route and the DOCX/HTML/Markdown route.

Docling keeps boxes with a bottom-left origin; they become top-left here, once. Docling's
caption and footnote links are kept; where Docling linked nothing (or linked a figure
caption), the "Table N" paragraph directly above or below the table and the marker lines
directly under it are linked instead.
"""

from __future__ import annotations

import re
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

from evidence_pipeline.parser.page_layout import (
    FIGURE_CAPTION_RE,
    FOOTNOTE_MARKER_RE,
    OTHER_CAPTION_RE,
    TABLE_CAPTION_RE,
)
from evidence_pipeline.records import BBox, ParsedDoc, Table, TableCell, TextBlock

_LABELS = {
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
# how near (points) a paragraph must sit to a table to be its caption or footnote
_NEAR = 36.0
_DIGITS = re.compile(r"\d+")
_SECTION_NUMBER = re.compile(r"^\s*(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+\S")


@dataclass
class _Entry:
    key: float
    item: DocItem
    page: int | None
    bbox: BBox | None
    label: str = ""
    text: str = ""
    level: int | None = None
    pages: list[int] = field(default_factory=list)
    table_of: "_Entry | None" = None  # caption/footnote: the table it belongs to


def _bbox(doc: DoclingDocument, item: DocItem) -> tuple[int | None, BBox | None, list[int]]:
    if not item.prov:
        return None, None, []
    prov = item.prov[0]
    page = doc.pages.get(prov.page_no)
    height = page.size.height if page is not None else 0.0
    tl = prov.bbox.to_top_left_origin(page_height=height)
    pages = sorted({p.page_no for p in item.prov})
    return prov.page_no, BBox(l=tl.l, t=tl.t, r=tl.r, b=tl.b), pages


def _table_cells(item: TableItem) -> tuple[list[TableCell], int]:
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
                text=c.text.strip(),
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


def _near(a: _Entry, b: _Entry) -> bool:
    """Same page and vertically close (always true without boxes: adjacency is the evidence)."""
    if a.bbox is None or b.bbox is None:
        return True
    if a.page != b.page:
        return False
    return a.bbox.vertical_gap(b.bbox) <= _NEAR


def docling_to_parsed(
    doc: DoclingDocument,
    *,
    doc_id: str,
    source: str,
    content_hash: str,
    parser: str,
    title_hint: str | None = None,
    number_levels: bool = False,
    warnings: list[str] | None = None,
) -> ParsedDoc:
    """``number_levels``: take section levels from heading numbers ("3.1" -> 2) where they have one
    (for PDFs, whose levels Docling can only guess from style)."""
    entries: list[_Entry] = []
    by_ref: dict[str, _Entry] = {}
    for n, (item, _) in enumerate(
        doc.iterate_items(with_groups=False, included_content_layers={ContentLayer.BODY, ContentLayer.FURNITURE})
    ):
        if not isinstance(item, (TextItem, TableItem)) or isinstance(item, PictureItem):
            continue
        page, bbox, pages = _bbox(doc, item)
        entry = _Entry(float(n), item, page, bbox, pages=pages)
        if isinstance(item, TableItem):
            entry.label = "table"
        else:
            text = (item.text or "").strip()
            if not text:
                continue
            entry.text = text
            entry.label = _LABELS.get(item.label, "other")
            if item.content_layer == ContentLayer.FURNITURE and entry.label not in ("page_header", "page_footer"):
                entry.label = "page_header" if bbox is None or bbox.t < 0.5 * _page_height(doc, page) else "page_footer"
            if isinstance(item, SectionHeaderItem):
                entry.level = item.level
            elif isinstance(item, TitleItem):
                entry.label = "title"
            elif isinstance(item, ListItem):
                entry.label = "list_item"
        entries.append(entry)
        by_ref[item.self_ref] = entry

    _place_furniture(entries, doc)
    _repeated_furniture(entries, doc)

    # Docling's links first, then neighbours in reading order for what it left unlinked.
    tables = [e for e in entries if e.label == "table"]
    for t in tables:
        item: TableItem = t.item  # type: ignore[assignment]
        for ref in item.captions:
            e = by_ref.get(ref.cref)
            if e is not None and not FIGURE_CAPTION_RE.match(e.text):
                e.table_of, e.label = t, "caption"
        for ref in item.footnotes:
            e = by_ref.get(ref.cref)
            if e is not None:
                e.table_of, e.label = t, "footnote"
    entries.sort(key=lambda e: e.key)
    body = [e for e in entries if e.label not in ("page_header", "page_footer")]
    for i, e in enumerate(body):
        if e.label != "table":
            continue
        if not any(c.table_of is e and c.label == "caption" for c in body):
            for j in (i - 1, i + 1, i + 2):
                if 0 <= j < len(body):
                    c = body[j]
                    if c.label == "table":
                        break
                    if c.table_of is None and _is_table_caption(c) and _near(c, e):
                        c.table_of, c.label = e, "caption"
                        break
        j = i + 1
        anchor = e
        while j < len(body):
            c = body[j]
            if c.table_of is e:
                anchor = c if c.label == "footnote" else anchor
                j += 1
                continue
            if c.table_of is None and c.label != "table" and FOOTNOTE_MARKER_RE.match(c.text) and _near(anchor, c):
                c.table_of, c.label, anchor = e, "footnote", c
                j += 1
                continue
            break

    # A caption printed above its table reads before it.
    for e in entries:
        if e.table_of is not None and e.label == "caption" and e.bbox and e.table_of.bbox:
            if e.page == e.table_of.page and e.bbox.b <= e.table_of.bbox.t + 2:
                e.key = e.table_of.key - 0.25
        elif e.table_of is not None and e.key < e.table_of.key and e.label == "footnote":
            e.key = e.table_of.key + 0.25
    entries.sort(key=lambda e: e.key)

    title = None
    if title_hint:
        for e in entries:
            if e.label == "section_header" and e.text.strip() == title_hint.strip():
                e.label, e.level = "title", None
                break
    _normalise_levels(entries)
    if number_levels:
        for e in entries:
            m = _SECTION_NUMBER.match(e.text) if e.label == "section_header" else None
            if m:
                e.level = m.group(1).count(".") + 1

    blocks: list[TextBlock] = []
    out_tables: list[Table] = []
    table_ids: dict[int, str] = {}
    for order, e in enumerate(entries):
        if e.label == "table":
            tid = f"{doc_id}/t{len(out_tables) + 1}"
            table_ids[id(e)] = tid
            item = e.item  # type: ignore[assignment]
            cells, header_rows = _table_cells(item)
            out_tables.append(
                Table(
                    id=tid,
                    order=order,
                    n_rows=item.data.num_rows,
                    n_cols=item.data.num_cols,
                    cells=cells,
                    header_rows=header_rows,
                    page=e.page,
                    bbox=e.bbox,
                    pages=e.pages,
                    caption=" ".join(c.text for c in entries if c.table_of is e and c.label == "caption") or None,
                    footnotes=[c.text for c in entries if c.table_of is e and c.label == "footnote"],
                )
            )
        else:
            if e.label == "title" and title is None:
                title = e.text
            blocks.append(
                TextBlock(
                    id=f"{doc_id}/b{len(blocks) + 1}",
                    label=e.label,  # type: ignore[arg-type]
                    text=e.text,
                    order=order,
                    page=e.page,
                    bbox=e.bbox,
                    level=e.level if e.label == "section_header" else None,
                )
            )
    out_tables = _link_continuations(out_tables, entries, table_ids)
    if title is None:
        title = _largest_heading(blocks) or doc_id
    return ParsedDoc(
        doc_id=doc_id,
        source=source,
        title=title,
        n_pages=len(doc.pages),
        content_hash=content_hash,
        parser=parser,
        blocks=blocks,
        tables=out_tables,
        warnings=list(warnings or []),
    )


def _is_table_caption(e: _Entry) -> bool:
    if FIGURE_CAPTION_RE.match(e.text):
        return False
    return bool(TABLE_CAPTION_RE.match(e.text) or (e.label == "caption" and OTHER_CAPTION_RE.match(e.text)))


def _page_height(doc: DoclingDocument, page: int | None) -> float:
    p = doc.pages.get(page) if page is not None else None
    return p.size.height if p is not None else 0.0


def _place_furniture(entries: list[_Entry], doc: DoclingDocument) -> None:
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


def _repeated_furniture(entries: list[_Entry], doc: DoclingDocument) -> None:
    """Text repeated at the top or bottom of several pages is a running header or footer."""
    if len(doc.pages) < 3:
        return
    seen: dict[tuple[str, str], set[int]] = {}
    extremes: dict[int, tuple[int, int]] = {}
    by_page: dict[int, list[_Entry]] = {}
    for e in entries:
        if e.page is not None and e.bbox is not None and e.label not in ("page_header", "page_footer"):
            by_page.setdefault(e.page, []).append(e)
    for page, items in by_page.items():
        extremes[page] = (id(min(items, key=lambda x: x.bbox.t)), id(max(items, key=lambda x: x.bbox.b)))
    for e in entries:
        if e.label in ("table", "page_header", "page_footer") or e.bbox is None or e.page is None:
            continue
        h = _page_height(doc, e.page)
        if not h or len(e.text) > 120:
            continue
        where = _edge(e, extremes, h)
        if where:
            seen.setdefault((where, _DIGITS.sub("#", e.text.lower())), set()).add(e.page)
    need = max(3, len(doc.pages) // 3)
    for e in entries:
        if e.label in ("table", "page_header", "page_footer") or e.bbox is None or e.page is None:
            continue
        for where in ("top", "bottom"):
            pages = seen.get((where, _DIGITS.sub("#", e.text.lower())), set())
            if len(pages) >= need and e.page in pages:
                e.label = "page_header" if where == "top" else "page_footer"
                e.level = None
    _place_furniture(entries, doc)


def _edge(e: _Entry, extremes: dict[int, tuple[int, int]], page_height: float) -> str | None:
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


def _normalise_levels(entries: list[_Entry]) -> None:
    """Section levels start at 1 (a document title is not a section level)."""
    levels = [e.level for e in entries if e.label == "section_header" and e.level]
    if not levels:
        for e in entries:
            if e.label == "section_header":
                e.level = 1
        return
    # Docling's style-based levels can skip numbers (1, 3, 6); ranks keep the order without gaps.
    rank = {lvl: i + 1 for i, lvl in enumerate(sorted(set(levels)))}
    for e in entries:
        if e.label == "section_header":
            e.level = rank.get(e.level or min(levels), 1)


def _largest_heading(blocks: list[TextBlock]) -> str | None:
    heads = [b for b in blocks if b.label == "section_header"]
    if not heads:
        return None
    top = min(h.level or 1 for h in heads)
    return next(h.text for h in heads if (h.level or 1) == top)


def _link_continuations(tables: list[Table], entries: list[_Entry], table_ids: dict[int, str]) -> list[Table]:
    """A table at the top of a page right after a table at the bottom of the previous page continues it."""
    if len(tables) < 2:
        return tables
    by_id = {t.id: t for t in tables}
    body = [e for e in entries if e.label not in ("page_header", "page_footer")]
    pos = {table_ids[id(e)]: i for i, e in enumerate(body) if e.label == "table"}
    out = [tables[0]]
    for prev, cur in zip(tables, tables[1:]):
        ok = (
            prev.page is not None
            and cur.page is not None
            and cur.page == (prev.pages[-1] if prev.pages else prev.page) + 1
            and abs(prev.n_cols - cur.n_cols) <= 1
        )
        if ok:
            between = body[pos[prev.id] + 1 : pos[cur.id]]
            # Only the first part's own notes, or a "continued" line, may sit in between.
            ok = all(
                e.table_of is not None and table_ids.get(id(e.table_of)) in (prev.id, cur.id)
                or "continued" in e.text.lower()
                for e in between
            )
        if ok:
            first = by_id[prev.id].continues or prev.id
            update: dict = {"continues": first}
            head = by_id[first]
            if cur.header_rows and head.header_rows and _row_texts(cur, 0) != _row_texts(head, 0):
                # Rows of a continued part are data unless they repeat the first part's header.
                update["header_rows"] = 0
                update["cells"] = [c.model_copy(update={"column_header": False, "row_header": c.col == 0 and cur.n_cols > 1}) for c in cur.cells]
            cur = cur.model_copy(update=update)
            by_id[cur.id] = cur
        out.append(cur)
    return out


def _row_texts(table: Table, row: int) -> list[str]:
    return [c.text.lower() for c in sorted(table.cells, key=lambda c: c.col) if c.row == row]

