"""Build evidence units (tables with their context) and section chunks from a ParsedDoc.

A table's unit gathers what a reader needs to use its numbers: the caption, the
section it sits in, the paragraphs just above and below (a warning printed above
a table governs its values), the footnotes, and the rows as sentences. Body text
that no table took becomes ordinary section chunks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from pydantic import BaseModel, ConfigDict

from evidence_pipeline.page_boxes import page_box, regions
from evidence_pipeline.records import BBox, EvidenceUnit, ParsedDoc, Table, TextBlock
from evidence_pipeline.table_notes import notes_after
from evidence_pipeline.tables import is_key_value, text_row
from evidence_pipeline.text import BULLET_GLYPHS, CONTENTS_ENTRY_RE, DOT_LEADER_RE, FIGURE_LABEL_RE, names_table

TokenCount = Callable[[str], int]

_ADVISORY = re.compile(r"^\s*(warning|caution|note|important|danger|attention)\b", re.IGNORECASE)
_BODY_LABELS = {"paragraph", "list_item", "other"}


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate: word pieces run about 4/3 of words in prose, and
    about one per 4 characters in markup and numbers."""
    return max((len(text.split()) * 4 + 2) // 3, len(text) // 4)


class UnitOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    context_distance: float = 300.0  # pt between the table's edge and a context paragraph
    max_context_paragraphs: int = 2  # per side
    page_edge: float = 200.0  # pt: a table this close to a page edge may take context across it
    caption_distance: float = 200.0  # pt: farthest caption taken for a table the parser left unlinked
    section_chunk_tokens: int = 350


def is_table_caption(text: str) -> bool:
    """A text block that names a table (the loose form: see ``evidence_pipeline.text``)."""
    return names_table(text)


def is_advisory(text: str) -> bool:
    return bool(_ADVISORY.match(text))


# What names a table of contents: its heading ("TABLE OF CONTENTS:", ``_CONTENTS_HEADING``) or a
# word of its caption or first row (``_TOC_WORDS``)
_TOC = r"contents|list\s+of\s+(?:tables|figures)"


class _Sections:
    """The section path in force at each point of the reading order."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, str]] = []

    def enter(self, block: TextBlock) -> None:
        level = block.level or 1
        self.close(level)
        self._stack.append((level, block.text.strip()))

    def close(self, level: int) -> None:
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()

    @property
    def path(self) -> list[str]:
        """The headings in force, a table of contents' own heading left out: it heads the
        contents, which are left out (``is_contents_table``), and whatever the parser found no
        heading for after them (a protocol's synopsis and abbreviations on the pages that follow
        its "TABLE OF CONTENTS:") is not part of it."""
        return [text for _, text in self._stack if not _CONTENTS_HEADING.fullmatch(text)]


_CONTENTS_HEADING = re.compile(r"(?:table\s+of\s+)?(?:" + _TOC + r")\s*:?", re.IGNORECASE)


def _near(block: TextBlock, table: Table, options: UnitOptions, above: bool) -> bool:
    """Is ``block`` close enough to ``table`` to be its context? No boxes -> reading order decides."""
    if block.bbox is None or table.bbox is None or block.page is None or table.page is None:
        return True
    table_page = table.page if above else (table.pages[-1] if table.pages else table.page)
    if block.page == table_page:
        return table.bbox.vertical_gap(block.bbox) <= options.context_distance
    if above and block.page == table_page - 1:
        return table.bbox.t <= options.page_edge
    if not above and block.page == table_page + 1:
        return block.bbox.t <= options.page_edge
    return False


def _merge_continuations(tables: list[Table]) -> dict[str, list[Table]]:
    """Root table id -> the root followed by its continuation parts."""
    parts: dict[str, list[Table]] = {}
    root_of: dict[str, str] = {}
    for table in tables:
        root = root_of.get(table.continues, table.continues) if table.continues else None
        if root and root in parts:
            parts[root].append(table)
            root_of[table.id] = root
        else:
            parts[table.id] = [table]
            root_of[table.id] = table.id
    return parts


def _looks_like_header(row: list[str]) -> bool:
    filled = [c for c in row if c.strip()]
    return bool(filled) and not any(re.fullmatch(r"[\d.,%$()\-–+ ]+", c.strip()) for c in filled) and not text_row(row)


def _table_rows(parts: list[Table]) -> tuple[list[list[str]], list[list[str]], list[int | None], list[BBox | None]]:
    """Header rows, body rows, and each body row's page and box, over a table and its continuation parts."""
    root = parts[0]
    grid = root.grid()
    n_header = root.header_rows
    if n_header == 0 and len(grid) > 1 and _looks_like_header(grid[0]) and not is_key_value(grid):
        n_header = 1  # an unflagged first row of labels over a body is a header in practice
    header = grid[:n_header]
    rows = grid[n_header:]
    pages: list[int | None] = [root.page] * len(rows)
    boxes = _boxes_of(root, n_header, len(rows))
    for part in parts[1:]:
        part_grid = part.grid()
        skip = part.header_rows
        # A continuation usually repeats the header; keep it once.
        while skip < len(part_grid) and header and part_grid[skip] in header:
            skip += 1
        body = part_grid[skip:]
        width = len(header[0]) if header else (len(rows[0]) if rows else 0)
        rows += [(r + [""] * width)[: max(width, len(r))] for r in body]
        pages += [part.page] * len(body)
        boxes += _boxes_of(part, skip, len(body))
    return header, rows, pages, boxes


def _boxes_of(table: Table, start: int, n: int) -> list[BBox | None]:
    """Boxes of ``n`` grid rows of ``table`` from ``start``; None where it has none."""
    given = table.row_boxes[start : start + n]
    return [*given, *([None] * (n - len(given)))]


def _find_caption(items, i: int, last_index: int, table: Table, header: list[list[str]], options: UnitOptions, used: set[int]):
    """Four stages: linked by the parser -> nearest caption by box distance -> a caption on
    the adjacent page when the table opens or closes a page -> a caption merged into the
    table's first row. Figure captions are never taken. Returns (caption, source, header)."""

    def mark_used(text: str) -> None:
        for j in (i - 1, i - 2, last_index + 1, last_index + 2):
            if 0 <= j < len(items) and isinstance(items[j], TextBlock) and items[j].text.strip() == text.strip():
                used.add(j)

    if table.caption and not FIGURE_LABEL_RE.match(table.caption):
        mark_used(table.caption)
        return table.caption.strip(), "direct", header

    def candidates():
        for j, cand in enumerate(items):
            if isinstance(cand, TextBlock) and j not in used and is_table_caption(cand.text):
                yield j, cand

    # Stage 2: nearest table caption on the same page within the distance (no boxes: the neighbour in reading order).
    best = None
    for j, cand in candidates():
        if table.bbox is not None and cand.bbox is not None and cand.page is not None:
            pages = table.pages or ([table.page] if table.page is not None else [])
            if cand.page not in pages:
                continue
            gap = table.bbox.vertical_gap(cand.bbox) if cand.page == table.page else min(cand.bbox.t, 1e9)
            if gap <= options.caption_distance and (best is None or gap < best[0]):
                best = (gap, j, cand)
        elif j in (i - 1, last_index + 1):
            best = (0.0, j, cand)
    if best is not None:
        used.add(best[1])
        return best[2].text.strip(), "inferred", header

    # Stage 3: the table opens a page -> the last block of the previous page; closes one -> the first of the next.
    if i > 0 and _opens_page(items, i):
        j = i - 1
        if isinstance(items[j], TextBlock) and j not in used and is_table_caption(items[j].text):
            used.add(j)
            return items[j].text.strip(), "inferred", header
    if last_index + 1 < len(items) and _closes_page(items, last_index):
        j = last_index + 1
        if isinstance(items[j], TextBlock) and j not in used and is_table_caption(items[j].text):
            used.add(j)
            return items[j].text.strip(), "inferred", header

    # Stage 4: the caption was read as the table's first row.
    if header:
        texts = {c.strip() for c in header[0] if c.strip()}
        if len(texts) == 1 and is_table_caption(next(iter(texts))):
            return next(iter(texts)), "inferred", header[1:]
    return None, "none", header


def _page_of(item) -> int | None:
    return item.page


def _opens_page(items, i: int) -> bool:
    """The item before this one in reading order is on an earlier page."""
    prev, cur = _page_of(items[i - 1]), _page_of(items[i])
    return prev is not None and cur is not None and prev < cur


def _closes_page(items, i: int) -> bool:
    nxt, cur = _page_of(items[i + 1]), _page_of(items[i])
    return nxt is not None and cur is not None and nxt > cur


_PAGE_NUMBER = re.compile(r"^\d{1,4}$")
_TOC_WORDS = re.compile(r"\b(?:" + _TOC + r")\b", re.IGNORECASE)


def is_contents_table(table: Table, caption: str | None = None, section: str | None = None, n_pages: int | None = None) -> bool:
    """A table of contents or list of figures mistaken for a table: rows end in page numbers,
    in a cell of their own or after the entry's dot leader ("Procedures ....... 15"), or,
    with neither a leader nor the word "contents", an index without leaders
    (``_page_index``)."""
    grid = table.grid()
    rows = [[c for c in r if c.strip()] for r in grid]
    rows = [r for r in rows if r]
    if len(rows) < 3:
        return False
    ends_in_page = sum(bool(_PAGE_NUMBER.match(r[-1].strip()) or CONTENTS_ENTRY_RE.search(r[-1])) for r in rows) / len(rows)
    leaders = sum(any(DOT_LEADER_RE.search(c) for c in r) for r in rows) / len(rows)
    named = any(_TOC_WORDS.search(t or "") for t in (caption, section, " ".join(grid[0])))
    return (leaders >= 0.5 and ends_in_page >= 0.5) or (named and ends_in_page >= 0.7) or _page_index(rows, n_pages)


_HAS_LETTER = re.compile(r"[^\W\d_]")
_ENTRY_NUMBER = re.compile(r"^\d{1,3}(?:\.\d{1,3})*\.$")  # "10.", "4.2.": an entry's number in a cell of its own


def _page_index(rows: list[list[str]], n_pages: int | None) -> bool:
    """A filing's index of its statements or items, set as a grid without dot leaders or a
    "Contents" heading ("Consolidated Statements of Cash Flows | 3", "Item 1A. | Risk Factors
    | 21", "10. | Directors ... | 156"): most rows are text (an entry's number aside), then one
    page number, and the pages run in order through the document's own pages. A table of
    figures differs in one of these at least: a figure beside the last, a number past the
    last page, or numbers out of order."""
    if not n_pages:
        return False
    refs = [
        int(r[-1].strip())
        for r in rows
        if len(r) >= 2
        and _PAGE_NUMBER.match(r[-1].strip())
        and all(_HAS_LETTER.search(c) or _ENTRY_NUMBER.match(c.strip()) for c in r[:-1])
    ]
    return (
        len(refs) >= 3
        and len(refs) >= 0.7 * len(rows)
        and all(1 <= p <= n_pages for p in refs)
        and all(a <= b for a, b in zip(refs, refs[1:]))
    )


def is_contents_entry(block: TextBlock) -> bool:
    """A body line of a table of contents: a dot leader and the page it points to ("3.5
    Withdrawal from the Study ........ 12"). Every heading of the document is in it, so its
    lines would match a query as well as the sections they point to, and say nothing."""
    return block.label in _BODY_LABELS and bool(CONTENTS_ENTRY_RE.search(block.text))


_BULLET = re.compile("[" + re.escape(BULLET_GLYPHS) + "]")


def bulleted_list_items(table: Table) -> list[TextBlock] | None:
    """The items of a bulleted list that the parser read as a table (a column of bullets, the
    items beside them: a filing's risk factors), as the list items they are; ``None`` for a
    table. Read as a table, the list would be an evidence unit of rows named "•", cut from the
    items above and below it. A row with no bullet continues the item above it."""
    rows = [[c.strip() for c in r] for r in table.grid()]
    rows = [r for r in rows if any(r)]
    if table.n_cols < 2 or len(rows) < 2 or not all(r[0] == "" or _BULLET.fullmatch(r[0]) for r in rows):
        return None
    bullets = sum(bool(r[0]) for r in rows)
    if not _BULLET.fullmatch(rows[0][0]) or bullets < max(2, len(rows) / 2):
        return None
    texts: list[str] = []
    for row in rows:
        text = " ".join(dict.fromkeys(c for c in row[1:] if c))  # a spanning cell fills every slot
        if row[0] or not texts:
            texts.append(text)
        else:
            texts[-1] = f"{texts[-1]} {text}".strip()
    if not all(_HAS_LETTER.search(t) for t in texts):  # a dash for "none" beside figures
        return None
    return [
        TextBlock(id=f"{table.id}/item{n}", label="list_item", text=text, order=table.order, page=table.page, bbox=table.bbox)
        for n, text in enumerate(texts)
        if text
    ]


def drop_duplicate_tables(tables: list[Table]) -> list[Table]:
    """One physical table detected twice (overlapping boxes on a page, or the same cells) becomes one."""
    kept: list[Table] = []
    for table in sorted(tables, key=lambda t: -len(t.cells)):
        if any(_same_table(table, other) for other in kept):
            continue
        kept.append(table)
    return sorted(kept, key=lambda t: t.order)


def _same_table(a: Table, b: Table) -> bool:
    if a.page == b.page and a.bbox is not None and b.bbox is not None:
        shared = a.bbox.h_overlap(b.bbox) * a.bbox.v_overlap(b.bbox)
        smaller = min(a.bbox.width * a.bbox.height, b.bbox.width * b.bbox.height)
        if smaller > 0 and shared / smaller > 0.7:
            return True
    return a.page == b.page and a.grid() == b.grid()


def build_units(
    doc: ParsedDoc,
    options: UnitOptions = UnitOptions(),
    count_tokens: TokenCount = approx_tokens,
) -> list[EvidenceUnit]:
    """Evidence units for every table, then section chunks for the body text no table took.
    A table of contents is navigation, not evidence: read as a table or as lines of text, it
    is left out (``is_contents_table``, ``is_contents_entry``). A bulleted list read as a
    table is read as the list it is (``bulleted_list_items``)."""
    kept_tables = {t.id for t in drop_duplicate_tables(doc.tables) if not is_contents_table(t, t.caption, n_pages=doc.n_pages)}
    items: list[TextBlock | Table] = []
    for item in doc.items():
        if isinstance(item, Table):
            if item.id in kept_tables:
                items.extend(bulleted_list_items(item) or [item])
        elif item.label not in ("page_header", "page_footer") and not is_contents_entry(item):
            items.append(item)
    items = _headings_with_content(items, doc.title)
    table_parts = _merge_continuations([it for it in items if isinstance(it, Table)])
    continuation_ids = {t.id for parts in table_parts.values() for t in parts[1:]}

    sections = _Sections()
    paths: list[list[str]] = []
    for item in items:
        if isinstance(item, TextBlock) and item.label == "section_header":
            sections.enter(item)
        elif isinstance(item, TextBlock) and item.label == "caption" and item.level:
            sections.close(item.level)  # a heading read as its table's title still ends the sections under it
        paths.append(sections.path)

    used: set[int] = set()  # indices of blocks taken into a table unit
    units: list[EvidenceUnit] = []
    per_page: dict[int | None, int] = {}
    for i, item in enumerate(items):
        if not isinstance(item, Table) or item.id in continuation_ids:
            continue
        parts = table_parts[item.id]
        header, rows, row_pages, row_boxes = _table_rows(parts)
        if not rows:
            continue
        last = parts[-1]
        last_index = items.index(last)

        caption, caption_source, header = _find_caption(items, i, last_index, item, header, options, used)
        before = _context(items, range(i - 1, -1, -1), item, options, used, above=True)
        footnotes = list(dict.fromkeys([*item.footnotes, *(f for p in parts[1:] for f in p.footnotes)]))
        after, extra_notes = _after(items, range(last_index + 1, len(items)), last, options, used, [*header, *rows], footnotes)
        footnotes += [n for n in extra_notes if n not in footnotes]

        pages = sorted({p for part in parts for p in (part.pages or ([part.page] if part.page is not None else []))})
        page = item.page
        index = per_page.get(page, 0)
        per_page[page] = index + 1
        unit_id = f"{doc.doc_id}-p{page if page is not None else 0}-{index}"
        units.append(
            EvidenceUnit(
                unit_id=unit_id,
                parent_id=unit_id,
                kind="table",
                doc_id=doc.doc_id,
                doc_title=doc.title,
                pages=pages,
                section_path=paths[i],
                caption=caption,
                caption_source=caption_source,
                context_before=before,
                context_after=after,
                footnotes=footnotes,
                header=header,
                rows=rows,
                row_pages=row_pages,
                boxes=regions([(part.page, part.bbox) for part in parts], doc.page_sizes),
                row_boxes=[page_box(p, b, doc.page_sizes) for p, b in zip(row_pages, row_boxes)],
                row_header_cols=item.row_header_cols() if item.n_cols > 1 else 0,
            )
        )
    units += _section_chunks(doc, items, paths, used, options, count_tokens)
    return units


def _context(items, indices: Iterable[int], table: Table, options: UnitOptions, used: set[int], above: bool) -> list[str]:
    taken: list[str] = []
    for j in indices:
        block = items[j]
        if isinstance(block, Table) or block.label in ("section_header", "title"):
            break
        if j in used or block.label == "caption":
            continue
        if block.label not in _BODY_LABELS:
            continue
        # A warning, caution or note directly above a table governs it: always keep it.
        governing = above and not taken and is_advisory(block.text)
        if not governing and (len(taken) >= options.max_context_paragraphs or not _near(block, table, options, above)):
            break
        taken.append(block.text.strip())
        used.add(j)
    return taken[::-1] if above else taken


def _after(
    items, indices: range, table: Table, options: UnitOptions, used: set[int], cells: list[list[str]], known: list[str]
) -> tuple[list[str], list[str]]:
    """The footnotes right after a table (labelled ones, then notes for its unresolved
    markers: see ``table_notes``) and the context paragraphs after them."""
    notes: list[str] = []
    start = indices.start
    for j in indices:
        block = items[j]
        if isinstance(block, TextBlock) and block.label == "footnote" and j not in used:
            notes.append(block.text.strip())
            used.add(j)
            start = j + 1
            continue
        break
    before = len(used)
    notes += notes_after(items, start, table, cells, [*known, *notes], used)
    start += len(used) - before
    return _context(items, range(start, indices.stop), table, options, used, above=False), notes


def _headings_with_content(items: list, title: str) -> list:
    """A heading that heads nothing (the next heading at its level or above comes before any
    text or table: cover-page lines, a form's boilerplate) is kept as text, not as a section,
    so its words are not lost; so is a title block other than the document's title."""
    out = list(items)
    for i, item in enumerate(items):
        if not isinstance(item, TextBlock):
            continue
        if item.label == "title" and item.text.strip() != title.strip():
            out[i] = item.model_copy(update={"label": "paragraph", "level": None})
        if item.label != "section_header":
            continue
        level = item.level or 1
        empty = True
        for nxt in items[i + 1 :]:
            if isinstance(nxt, TextBlock) and nxt.label in ("section_header", "title"):
                if nxt.label == "title" or (nxt.level or 1) <= level:
                    break
                continue
            if isinstance(nxt, Table) or nxt.label in _BODY_LABELS or nxt.label in ("caption", "footnote"):
                empty = False
                break
        if empty:
            out[i] = item.model_copy(update={"label": "paragraph", "level": None})
    return out


def _section_chunks(doc: ParsedDoc, items, paths, used: set[int], options: UnitOptions, count_tokens: TokenCount) -> list[EvidenceUnit]:
    chunks: list[EvidenceUnit] = []
    current: list[TextBlock] = []
    current_path: list[str] | None = None

    def flush() -> None:
        if not current:
            return
        body, size = [], 0
        groups: list[list[TextBlock]] = [[]]
        for block in current:
            n = count_tokens(block.text)
            if groups[-1] and size + n > options.section_chunk_tokens:
                groups.append([])
                size = 0
            groups[-1].append(block)
            size += n
        for group in groups:
            body = [b.text.strip() for b in group]
            unit_id = f"{doc.doc_id}-sec{len(chunks)}"
            chunks.append(
                EvidenceUnit(
                    unit_id=unit_id,
                    parent_id=unit_id,
                    kind="section",
                    doc_id=doc.doc_id,
                    doc_title=doc.title,
                    pages=sorted({b.page for b in group if b.page is not None}),
                    boxes=regions([(b.page, b.bbox) for b in group], doc.page_sizes),
                    section_path=current_path or [],
                    body=body,
                )
            )
        current.clear()

    for j, item in enumerate(items):
        if isinstance(item, Table) or j in used:
            continue
        if item.label in ("section_header", "title"):
            flush()
            continue
        if item.label == "caption" and is_table_caption(item.text):
            continue
        if paths[j] != current_path:
            flush()
            current_path = paths[j]
        current.append(item)
    flush()
    return chunks
