"""The payload of a stored point, as a typed record that writers and readers share.

``DocumentStamp`` holds what every point of one document carries alike (identity, version,
document card); ``PointPayload`` adds the child and its parent. ``pipeline.document_points``
builds them, search reads them back (``PointPayload.search_hit``), ``contract`` documents them
for applications.
"""

from __future__ import annotations

import os

from pydantic import Field

from evidence_pipeline.bm25_query import TOKENIZER_VERSION
from evidence_pipeline.records import ChildKind, ChildUnit, DocumentCard, EvidenceUnit, PageBox, ParsedDoc, Record, SearchHit, UnitKind


class DocumentStamp(Record):
    """The payload fields every point of one document carries alike: its identity, version
    and card (``DocumentCard``), so any point says which document it is from and search can
    read the cards back (``retrieval.route.stored_cards``).

    A new document-level field is added here and filled in ``of``; every writer builds its
    points from a stamp.
    """

    doc_id: str = Field(description="the document's id (file name without extension); filters and deletes use it")
    doc_title: str = Field(description="the document's clean title (its card's)")
    content_hash: str = Field(description="SHA-256 of the source file the points were built from")
    pipeline_version: str = Field(description="what built the points (parser, model, options); see PipelineOptions.version")
    doc_type: str | None = Field(description="card: document type (10-Q, SOP, protocol, earnings release, ...)")
    organisation: str | None = Field(description="card: the issuing organisation's legal name")
    names: list[str] = Field(description="card: other names the organisation goes by in the document")
    tickers: list[str] = Field(description="card: ticker symbols printed in the document")
    period_end: str | None = Field(description="card: ISO date the reporting period ends")
    period_months: int | None = Field(description="card: length of the reporting period in months")
    fiscal_year: int | None = Field(description="card: fiscal year covered")
    fiscal_quarter: int | None = Field(description="card: fiscal quarter covered")
    identifiers: list[str] = Field(description="card: identifiers the document declares")
    # Optional so that points written before the field existed still read; they say None.
    bm25_tokenizer: str | None = Field(
        None, description="bm25_query.TOKENIZER_VERSION the bm25 vector was built with; an application's copy must match"
    )
    source: str | None = Field(
        None, description="absolute path of the file the points were built from; the service serves it by doc_id only"
    )

    @classmethod
    def of(cls, doc: ParsedDoc, pipeline_version: str, card: DocumentCard | None = None) -> DocumentStamp:
        """The stamp of ``doc``; without ``card`` (flat baselines) the card fields stay empty."""
        card = card or DocumentCard(doc_id=doc.doc_id, title=doc.title)
        return cls.for_card(card, doc.content_hash, pipeline_version, source=os.path.abspath(doc.source) if doc.source else None)

    @classmethod
    def for_card(cls, card: DocumentCard, content_hash: str, pipeline_version: str, source: str | None = None) -> DocumentStamp:
        fields = card.model_dump(include=set(cls.model_fields))
        return cls(
            doc_title=card.title,
            content_hash=content_hash,
            pipeline_version=pipeline_version,
            bm25_tokenizer=TOKENIZER_VERSION,
            source=source,
            **fields,
        )

    def card(self) -> DocumentCard:
        """The document card this stamp carries (without the cover dates, which are not stored)."""
        fields = self.model_dump(include=set(DocumentCard.model_fields))
        return DocumentCard(title=self.doc_title, **fields)


class PointPayload(DocumentStamp):
    """The payload of one stored point: one child, its parent's text and where it lives.

    Writers build it (``PointPayload.for_child`` for the pipeline's children) and store its
    ``model_dump()``; readers parse a stored payload back with ``model_validate``.
    Every field but ``bm25_tokenizer`` is required, so a payload that lacks one fails where it is read.
    """

    parent_id: str = Field(description="the parent (table or section chunk) the child belongs to; search groups by it")
    unit_id: str = Field(description="the evidence unit; a split table's pieces share a parent_id, not a unit_id")
    child_id: str = Field(description="the child, unique within the document; the point id derives from it, the document and the parent")
    parent_text: str = Field(description="what the language model reads: the unit's whole text")
    pages: list[int] = Field(description="1-based pages of the unit")
    section_path: list[str] = Field(description="section headers above the unit, outermost first")
    caption: str | None = Field(description="the table's caption; None for a section chunk or an uncaptioned table")
    statement: str | None = Field(
        None,
        description='the primary financial statement the table is, by its caption or, without one, its heading ("income statement", '
        '"balance sheet", "cash flow statement"; financial_statements.table_statement), else None; absent from points written before the field existed',
    )
    unit_kind: UnitKind = Field(description="table or section chunk")
    child_kind: ChildKind = Field(description="what the child is: a row sentence, context, summary, ...")
    text: str = Field(description="the child's own text (without the location prefix it was embedded with)")
    # Optional so that points written before the fields existed still read; they say [] and None.
    boxes: list[PageBox] = Field(
        default_factory=list,
        description="where the unit is printed: one region per page {page, l, t, r, b, page_width, page_height}, PDF points from "
        "the page's top-left corner; [] for formats without pages",
    )
    row_box: PageBox | None = Field(None, description="a row child: where its row is printed (same form as boxes), else None")

    @classmethod
    def for_child(cls, stamp: DocumentStamp, unit: EvidenceUnit, child: ChildUnit) -> PointPayload:
        return cls(
            **stamp.model_dump(),
            parent_id=child.parent_id,
            unit_id=child.unit_id,
            child_id=child.child_id,
            parent_text=unit.text,
            pages=unit.pages,
            section_path=unit.section_path,
            caption=unit.caption,
            statement=unit.statement,
            unit_kind=unit.kind,
            child_kind=child.kind,
            text=child.text,
            boxes=unit.boxes,
            row_box=unit.row_boxes[child.row] if child.row is not None and child.row < len(unit.row_boxes) else None,
        )

    def search_hit(self, score: float) -> SearchHit:
        """The search hit this point stands for, with ``score`` (its parent, and its own text as the match)."""
        return SearchHit(
            parent_id=self.parent_id,
            unit_id=self.unit_id,
            score=score,
            doc_id=self.doc_id,
            doc_title=self.doc_title,
            pages=self.pages,
            section_path=self.section_path,
            caption=self.caption,
            unit_kind=self.unit_kind,
            matched_text=self.text,
            parent_text=self.parent_text,
            statement=self.statement,
            boxes=self.boxes,
            row_box=self.row_box,
        )
