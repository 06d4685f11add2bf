"""DoclingDocument -> ParsedDoc, shared by the PDF route and the DOCX/HTML/Markdown route.

Docling's caption and footnote links are kept; where Docling linked nothing (or linked a
figure caption), the "Table N" paragraph directly above or below the table and the marker
lines directly under it are linked instead. Tables at the top of a page that go on from
the bottom of the previous page are linked as continuations.
"""

from __future__ import annotations

import re

from docling_core.types.doc import DoclingDocument, TableItem

from evidence_pipeline.parser.docling_items import Entry, page_sizes, read_entries, row_boxes, table_cells
from evidence_pipeline.parser.headings import (
    demote_non_headings,
    join_bare_structural,
    join_field_labels,
    levelled,
    repeated_headings,
    structural_levels,
    structural_lines,
    table_titles,
)
from evidence_pipeline.parser.page_furniture import place_furniture, repeated_furniture
from evidence_pipeline.parser.reading_order import reorder_pages
from evidence_pipeline.parser.text_lines import FOOTNOTE_MARKER_RE
from evidence_pipeline.records import ParsedDoc, Table, TextBlock
from evidence_pipeline.text import FIGURE_CAPTION_RE, OTHER_CAPTION_RE, TABLE_CAPTION_RE, normalise

# how near (points) a paragraph must sit to a table to be its caption or footnote
_NEAR = 36.0
_SECTION_NUMBER = re.compile(r"^\s*(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+\S")


def _near(a: Entry, b: Entry) -> bool:
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
    entries, by_ref = read_entries(doc)

    reorder_pages(entries, doc)
    place_furniture(entries, doc)
    repeated_furniture(entries, doc)
    demote_non_headings(entries)
    join_bare_structural(entries)
    structural_lines(entries)
    join_field_labels(entries)
    repeated_headings(entries, len(doc.pages))

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
    table_titles(body, title_hint)

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
    top = structural_levels(entries)
    if number_levels:
        for e in entries:
            m = _SECTION_NUMBER.match(e.text) if e.label == "section_header" else None
            if m:
                e.level = top + m.group(1).count(".") + 1

    blocks: list[TextBlock] = []
    out_tables: list[Table] = []
    table_ids: dict[int, str] = {}
    for order, e in enumerate(entries):
        if e.label == "table":
            tid = f"{doc_id}/t{len(out_tables) + 1}"
            table_ids[id(e)] = tid
            item = e.item  # type: ignore[assignment]
            cells, header_rows = table_cells(item)
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
                    row_boxes=row_boxes(doc, item, e.page) if e.bbox is not None else [],
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
                    label=e.label,
                    text=e.text,
                    order=order,
                    page=e.page,
                    bbox=e.bbox,
                    level=e.level if levelled(e) else None,
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
        page_sizes=page_sizes(doc),
        blocks=blocks,
        tables=out_tables,
        warnings=list(warnings or []),
    )


def _is_table_caption(e: Entry) -> bool:
    if FIGURE_CAPTION_RE.match(e.text):
        return False
    return bool(TABLE_CAPTION_RE.match(e.text) or (e.label == "caption" and OTHER_CAPTION_RE.match(e.text)))


def _normalise_levels(entries: list[Entry]) -> None:
    """Section levels start at 1 (a document title is not a section level)."""
    heads = [e for e in entries if levelled(e)]
    levels = [e.level for e in heads if e.level]
    if not levels:
        for e in heads:
            e.level = 1
        return
    # Docling's style-based levels can skip numbers (1, 3, 6); ranks keep the order without gaps.
    rank = {lvl: i + 1 for i, lvl in enumerate(sorted(set(levels)))}
    for e in heads:
        e.level = rank.get(e.level or min(levels), 1)


def _largest_heading(blocks: list[TextBlock]) -> str | None:
    heads = [b for b in blocks if b.label == "section_header"]
    if not heads:
        return None
    top = min(h.level or 1 for h in heads)
    return next(h.text for h in heads if (h.level or 1) == top)


def _link_continuations(tables: list[Table], entries: list[Entry], table_ids: dict[int, str]) -> list[Table]:
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
        if ok and cur.caption and "continued" not in cur.caption.lower():
            # A part with a title of its own opens a table ("CLINICAL PROTOCOL SYNOPSIS" after
            # the list of abbreviations); a continued part repeats its table's title, if any.
            head_caption = by_id[by_id[prev.id].continues or prev.id].caption
            ok = head_caption is not None and normalise(cur.caption) == normalise(head_caption)
        if ok:
            between = body[pos[prev.id] + 1 : pos[cur.id]]
            # Only the first part's own notes, or a "continued" line, may sit in between.
            ok = all(
                e.table_of is not None and table_ids.get(id(e.table_of)) in (prev.id, cur.id) or "continued" in e.text.lower()
                for e in between
            )
        if ok:
            first = by_id[prev.id].continues or prev.id
            update: dict = {"continues": first}
            head = by_id[first]
            if cur.header_rows and (not head.header_rows or _row_texts(cur, 0) != _row_texts(head, 0)):
                # Rows of a continued part are data unless they repeat the first part's header.
                update["header_rows"] = 0
                update["cells"] = [
                    c.model_copy(update={"column_header": False, "row_header": c.col == 0 and cur.n_cols > 1}) for c in cur.cells
                ]
            cur = cur.model_copy(update=update)
            by_id[cur.id] = cur
        out.append(cur)
    return out


def _row_texts(table: Table, row: int) -> list[str]:
    return [c.text.lower() for c in sorted(table.cells, key=lambda c: c.col) if c.row == row]
