"""Typed records that flow one way through the pipeline.

parse -> ParsedDoc -> EvidenceUnit (tables and section chunks) -> ChildUnit -> points.
Each record holds data and the views derived from it; building children from units is
``children``' work, reading records back from the store is ``payload``'s.

One coordinate system inside: PDF points, origin at the top-left of the page,
y growing downward (``BBox.t < BBox.b``). Parsers convert at the boundary.
Pages are 1-based. Records are pydantic models so that anything crossing a
boundary (Dagster IO, ``parse --json``, the store payload) is validated.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evidence_pipeline import tables
from evidence_pipeline.financial_statements import table_statement

BlockLabel = Literal[
    "title",
    "section_header",
    "paragraph",
    "list_item",
    "caption",
    "footnote",
    "page_header",
    "page_footer",
    "other",
]

FURNITURE_LABELS: frozenset[str] = frozenset({"page_header", "page_footer"})


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BBox(Record):
    """A box in PDF points, top-left origin."""

    l: float
    t: float
    r: float
    b: float

    @property
    def height(self) -> float:
        return self.b - self.t

    @property
    def width(self) -> float:
        return self.r - self.l

    def v_overlap(self, other: BBox) -> float:
        """Height the boxes share along y; 0 when they do not overlap vertically."""
        return max(0.0, min(self.b, other.b) - max(self.t, other.t))

    def h_overlap(self, other: BBox) -> float:
        """Width the boxes share along x; 0 when they do not overlap horizontally."""
        return max(0.0, min(self.r, other.r) - max(self.l, other.l))

    def vertical_gap(self, other: BBox) -> float:
        """Distance between the boxes along y; 0 when they overlap vertically."""
        if other.t >= self.b:
            return other.t - self.b
        if self.t >= other.b:
            return self.t - other.b
        return 0.0


class PageBox(Record):
    """A region of one page, for a viewer to draw: PDF points, top-left origin, with the
    page's own size so it can be scaled to any rendering (``x / page_width`` of the image)."""

    page: int = Field(description="1-based page")
    l: float
    t: float
    r: float
    b: float
    page_width: float
    page_height: float

    @property
    def bbox(self) -> BBox:
        return BBox(l=self.l, t=self.t, r=self.r, b=self.b)

    @property
    def size(self) -> tuple[float, float]:
        return (self.page_width, self.page_height)

    @classmethod
    def of(cls, page: int, box: BBox, size: tuple[float, float]) -> PageBox:
        return cls(
            page=page, l=round(box.l, 1), t=round(box.t, 1), r=round(box.r, 1), b=round(box.b, 1), page_width=size[0], page_height=size[1]
        )


def union_boxes(boxes: list[BBox]) -> BBox | None:
    """The smallest box around ``boxes``; None for none."""
    if not boxes:
        return None
    return BBox(l=min(b.l for b in boxes), t=min(b.t for b in boxes), r=max(b.r for b in boxes), b=max(b.b for b in boxes))


class TextBlock(Record):
    """One piece of text in reading order: a paragraph, header, caption, footnote..."""

    id: str
    label: BlockLabel
    text: str
    order: int = Field(description="position in the document's reading order (shared with tables)")
    page: int | None = None
    bbox: BBox | None = None
    level: int | None = Field(
        default=None, description="section header level, 1 = top; on a caption that was set as a heading, the level of the sections it ends"
    )


class TableCell(Record):
    row: int
    col: int
    text: str
    row_span: int = 1
    col_span: int = 1
    column_header: bool = False
    row_header: bool = False


class Table(Record):
    """A table with its cells and the elements the parser linked to it."""

    id: str
    order: int
    n_rows: int
    n_cols: int
    cells: list[TableCell]
    header_rows: int = Field(0, description="how many leading rows are column headers")
    page: int | None = None
    bbox: BBox | None = None
    pages: list[int] = Field(default_factory=list)
    row_boxes: list[BBox | None] = Field(
        default_factory=list, description="box of each grid row on ``page`` (its cells' union); empty without geometry"
    )
    caption: str | None = None
    footnotes: list[str] = Field(default_factory=list)
    continues: str | None = Field(default=None, description="id of the table this one continues (a table crossing a page)")

    def grid(self) -> list[list[str]]:
        """Dense row-major grid; a spanning cell's text fills every slot it covers."""
        grid = [["" for _ in range(self.n_cols)] for _ in range(self.n_rows)]
        for cell in self.cells:
            for r in range(cell.row, min(cell.row + cell.row_span, self.n_rows)):
                for c in range(cell.col, min(cell.col + cell.col_span, self.n_cols)):
                    grid[r][c] = cell.text
        return grid

    def row_header_cols(self) -> int:
        """Leading columns that hold row headers (at least one when the table has any body)."""
        flagged = {c.col for c in self.cells if c.row_header and c.row >= self.header_rows}
        n = 0
        while n in flagged:
            n += 1
        return max(n, 1) if self.n_cols > 1 else 0


class SourceDocument(Record):
    """A file of the corpus as the pipeline first sees it."""

    doc_id: str
    path: str
    content_hash: str
    size_bytes: int


class ParsedDoc(Record):
    """A parser-independent view of one document."""

    doc_id: str
    source: str = Field(description="path of the file the document was read from")
    title: str
    n_pages: int
    content_hash: str
    parser: str
    page_sizes: dict[int, tuple[float, float]] = Field(
        default_factory=dict, description="page -> (width, height) in points; empty without geometry"
    )
    blocks: list[TextBlock] = Field(default_factory=list)
    tables: list[Table] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def items(self) -> list[TextBlock | Table]:
        """Blocks and tables interleaved in reading order."""
        return sorted([*self.blocks, *self.tables], key=lambda item: item.order)


class DocumentCard(Record):
    """One document described by its own first pages (``cards.build_card``); every text view is derived.

    Built once per document by the core (``pipeline.document_card``), indexed as the document's
    own unit (kind ``card``) and carried in every point's payload (``DocumentStamp``), where
    search reads it back to route queries that name a document (``retrieval.named_documents.RoutingIndex``).
    """

    doc_id: str
    title: str
    doc_type: str | None = None
    organisation: str | None = Field(None, description="the issuing organisation's legal name")
    names: list[str] = Field(default_factory=list, description="other names it goes by in its text")
    tickers: list[str] = Field(default_factory=list)
    period_end: str | None = Field(None, description="ISO date the reporting period ends")
    period_months: int | None = None
    fiscal_year: int | None = None
    fiscal_quarter: int | None = None
    dates: list[str] = Field(default_factory=list, description="other ISO dates of the cover")
    identifiers: list[str] = Field(default_factory=list)

    @property
    def known_as(self) -> list[str]:
        """Every name the document's issuer goes by: legal name, other names, tickers, once each."""
        return list(dict.fromkeys(n for n in [self.organisation, *self.names, *self.tickers] if n))

    @property
    def retrieval_text(self) -> str:
        """One sentence that says which document this is, embedded as the card's own child."""
        parts = [self.title]
        if self.doc_type and self.doc_type.lower() not in self.title.lower():
            parts.append(self.doc_type)
        known_as = self.known_as
        if known_as:
            parts.append("issued by " + ", ".join(known_as))
        if self.fiscal_quarter and self.fiscal_year:
            parts.append(f"fiscal Q{self.fiscal_quarter} {self.fiscal_year}")
        elif self.fiscal_year:
            parts.append(f"fiscal year {self.fiscal_year}")
        if self.period_end:
            parts.append(f"period ended {self.period_end}")
        if self.identifiers:
            parts.append("identifiers " + ", ".join(self.identifiers))
        return "; ".join(parts) + "."

    @property
    def lines(self) -> list[str]:
        """The card as labelled lines: the card unit's text, ``parse`` and the Dagster metadata."""
        fields = [
            ("Title", self.title),
            ("Type", self.doc_type),
            ("Organisation", self.organisation),
            ("Also named", ", ".join(self.names)),
            ("Tickers", ", ".join(self.tickers)),
            ("Period ended", self.period_end and f"{self.period_end} ({self.period_months or '?'} months)"),
            ("Fiscal year", self.fiscal_year and (f"{self.fiscal_year}" + (f" Q{self.fiscal_quarter}" if self.fiscal_quarter else ""))),
            ("Identifiers", ", ".join(self.identifiers)),
        ]
        return [f"{label}: {value}" for label, value in fields if value]


UnitKind = Literal["table", "section", "card"]
ChildKind = Literal["row", "context", "summary", "caption", "footnote", "sentence", "card"]
CaptionSource = Literal["direct", "inferred", "none"]


# The short locator every child is embedded with (``EvidenceUnit.prefix``): the title's head,
# the innermost headings (each to its head), the caption whole. Every child repeats it, so a
# longer one costs embedding time and dilutes the child's own words in its vector; BM25 still
# indexes the whole location (``ChildUnit.sparse_text``).
LOCATION_TITLE_WORDS = 12
LOCATION_SECTION_LEVELS = 2
LOCATION_HEADING_WORDS = 10


def _words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


class EvidenceUnit(Record):
    """A parent: one table with everything needed to read it, or one section chunk.

    Only the data is stored; every text view is derived, so the views cannot drift.
    Why the caption leads: it names what the numbers are; a row read without it is
    ambiguous between same-shaped tables. Why the HTML stays out of the embedded
    text: markup tokens spend the model's 256-piece window and carry no meaning;
    the language model, which does read structure, gets the HTML in ``text``.
    """

    unit_id: str
    parent_id: str = Field(description="the original table or chunk id; split pieces share it")
    kind: UnitKind
    doc_id: str
    doc_title: str
    pages: list[int] = Field(default_factory=list)
    section_path: list[str] = Field(default_factory=list)
    caption: str | None = None
    caption_source: CaptionSource = "none"
    context_before: list[str] = Field(default_factory=list)
    context_after: list[str] = Field(default_factory=list)
    footnotes: list[str] = Field(default_factory=list)
    header: list[list[str]] = Field(default_factory=list, description="column header rows")
    rows: list[list[str]] = Field(default_factory=list, description="body rows")
    row_pages: list[int | None] = Field(default_factory=list, description="page of each body row")
    boxes: list[PageBox] = Field(default_factory=list, description="where the unit is printed: one region per page; empty without geometry")
    row_boxes: list[PageBox | None] = Field(default_factory=list, description="where each body row is printed")
    row_header_cols: int = 1
    body: list[str] = Field(default_factory=list, description="paragraphs of a section chunk")
    piece: int = 0
    n_pieces: int = 1
    card: DocumentCard | None = Field(default=None, description="the document's card, on its card unit only")

    @classmethod
    def for_card(cls, card: DocumentCard) -> EvidenceUnit:
        """The card as a retrievable unit, so "who issued X" and title questions find it."""
        unit_id = f"{card.doc_id}-card"
        return cls(unit_id=unit_id, parent_id=unit_id, kind="card", doc_id=card.doc_id, doc_title=card.title, pages=[1], card=card)

    @property
    def n_cols(self) -> int:
        return max((len(r) for r in [*self.header, *self.rows]), default=0)

    @property
    def column_paths(self) -> list[str]:
        return tables.column_paths(self.header, self.n_cols)

    @property
    def sentences_by_row(self) -> list[str]:
        """One sentence per body row, aligned with ``rows``; "" for a row that says nothing."""
        paths = self.column_paths
        rows = tables.carry_down(self.rows, self.row_header_cols)
        notes = tables.footnote_map(self.footnotes)
        return [tables.row_sentence(r, paths, self.row_header_cols, notes) for r in rows]

    @property
    def row_sentences(self) -> list[str]:
        return [s for s in self.sentences_by_row if s]

    @property
    def table_html(self) -> str:
        return tables.table_html(self.header, self.rows, self.caption) if self.kind == "table" else ""

    @property
    def summary(self) -> str:
        """A table abstract built from structure alone (no LLM)."""
        if self.kind != "table":
            return ""
        cols = [p for p in self.column_paths[self.row_header_cols :] if p]
        first = [r[0] for r in self.rows[:3] if r and r[0].strip()]
        parts = [self.caption or "Table"]
        if self.section_path:
            parts.append(f"in section {self.section_path[-1]}")
        text = " ".join(parts) + f": {len(self.rows)} rows"
        if cols:
            text += "; columns " + ", ".join(dict.fromkeys(cols))
        if first:
            text += "; rows include " + ", ".join(first)
        return text + "."

    @property
    def location(self) -> str:
        """Where the unit lives, whole: document id and title, section path, caption. BM25
        indexes it with every child's text (``ChildUnit.sparse_text``)."""
        return self._where(self.doc_title, self.section_path)

    @property
    def prefix(self) -> str:
        """The short locator every child of the unit is embedded with (``LOCATION_*``): the
        document id, the head of its title, the innermost headings and the caption."""
        inner = [_words(h, LOCATION_HEADING_WORDS) for h in self.section_path[-LOCATION_SECTION_LEVELS:]]
        return self._where(_words(self.doc_title, LOCATION_TITLE_WORDS), inner)

    def _where(self, title: str, path: list[str]) -> str:
        parts = [f"{self.doc_id} {title}".strip()]
        if path:
            parts.append(" > ".join(path))
        if self.caption:
            parts.append(self.caption)
        return " | ".join(parts)

    def _head(self) -> list[str]:
        lines = document_head(self.doc_id, self.doc_title, self.section_path)
        if self.pages:
            lines.append("Pages: " + ", ".join(str(p) for p in self.pages))
        if self.kind == "table":
            lines += self.structural_map
        return lines

    @property
    def structural_map(self) -> list[str]:
        """A short wrapper that tells the language model how to read the table before it sees it."""
        lines = []
        if self.caption:
            lines.append(f"Caption: {self.caption}")
        hierarchy = tables.column_hierarchy(self.column_paths)
        if hierarchy:
            lines.append(f"Columns: {hierarchy}")
        names = list(dict.fromkeys(r[0].strip() for r in self.rows if r and r[0].strip())) if self.row_header_cols else []
        if names:
            shown = ", ".join(names[:12]) + (f", ... ({len(names) - 12} more)" if len(names) > 12 else "")
            lines.append(f"Rows ({len(self.rows)}): {shown}")
        if self.n_pieces > 1:
            lines.append(f"Part {self.piece + 1} of {self.n_pieces} of this table; caption and header repeat in every part.")
        return lines

    def _render(self, table_view: list[str]) -> str:
        if self.kind == "card":
            return "\n".join([*self._head(), "", *(self.card.lines if self.card else [])])
        if self.kind == "section":
            return "\n".join([*self._head(), "", *self.body])
        lines = self._head()
        lines += self.context_before
        lines += table_view
        lines += self.footnotes
        lines += self.context_after
        return "\n".join(lines)

    @property
    def text(self) -> str:
        """What the language model reads: the whole evidence with the table as HTML."""
        return self._render([self.table_html])

    @property
    def retrieval_text(self) -> str:
        """The same evidence with rows as sentences instead of HTML."""
        return self._render(self.row_sentences)

    @property
    def statement(self) -> str | None:
        """The primary financial statement a table is (``financial_statements.table_statement``
        of its caption and headings), else None; the point payload's ``statement``."""
        return table_statement(self.caption, self.section_path) if self.kind == "table" else None


def document_head(doc_id: str, doc_title: str, section_path: list[str]) -> list[str]:
    """The lines every parent text opens with: its document and its section.

    Search (``context.context_texts``) prints them once for parents that share them.
    """
    lines = [f"Document: {doc_id} - {doc_title}"]
    if section_path:
        lines.append("Section: " + " > ".join(section_path))
    return lines


class ChildUnit(Record):
    """A small retrieval unit. Only children are embedded; each points at its parent."""

    child_id: str
    unit_id: str
    parent_id: str
    doc_id: str
    kind: ChildKind
    text: str
    prefix: str = Field(
        description="where the child lives, short (EvidenceUnit.prefix): its vector is mixed with the text's (Embedder.embed_children)"
    )
    locator: str = Field("", description="where the child lives, whole (EvidenceUnit.location): indexed by BM25 with the text")
    row: int | None = Field(None, description="a row child: the index of its body row in the unit (``EvidenceUnit.rows``)")

    @property
    def embed_text(self) -> str:
        """What the child's vector stands for: prefix and text (fitted to the model's window
        together, ``children.fit_children``)."""
        return f"{self.prefix}\n{self.text}" if self.prefix else self.text

    @property
    def sparse_text(self) -> str:
        """What BM25 indexes: the whole locator (an identifier or heading word the short
        prefix leaves out still matches) and the text."""
        head = self.locator or self.prefix
        return f"{head}\n{self.text}" if head else self.text


class SearchHit(Record):
    """One parent returned by search, with the child that matched best."""

    parent_id: str
    unit_id: str
    score: float
    doc_id: str
    doc_title: str
    pages: list[int]
    section_path: list[str]
    caption: str | None
    unit_kind: UnitKind
    matched_text: str
    parent_text: str
    statement: str | None = Field(
        None,
        description='the primary financial statement the table is ("income statement", "balance sheet", "cash flow statement"), else None',
    )
    boxes: list[PageBox] = Field(
        default_factory=list, description="where the parent is printed, one region per page; empty for formats without pages"
    )
    row_box: PageBox | None = Field(None, description="where the matched row is printed, when the best child is a table row")
    focus: str | None = Field(
        None,
        description="a large table's text with only the rows the query names (``retrieval.focus``); None: read parent_text whole",
    )
    context: str | None = Field(
        None,
        description="what a language model reads for this hit, its tables in Markdown (``tables.markdown_tables``) "
        "of focus or else parent_text; None: focus or else parent_text as it is",
    )

    @property
    def context_text(self) -> str:
        """What a language model is given for this hit: ``context``, else the focused table, else
        the whole parent."""
        return self.context or self.focus or self.parent_text


def sha256_file(path: str, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()
