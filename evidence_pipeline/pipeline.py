"""The ingestion stages for one document, as plain functions.

parse -> evidence units -> split units -> children -> dense + BM25 vectors -> points -> store.
The Dagster assets call these one by one; ``ingest_file`` runs them in a row for
scripts, evaluation and benchmarks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evidence_pipeline.cards import build_card
from evidence_pipeline.children import build_children
from evidence_pipeline.corpus import doc_id_for
from evidence_pipeline.embedding import Embedder, TokenCounter
from evidence_pipeline.records import ChildUnit, DocumentCard, EvidenceUnit, ParsedDoc
from evidence_pipeline.payload import DocumentStamp, PointPayload
from evidence_pipeline.sparse import TOKENIZER_VERSION, SparseEncoder
from evidence_pipeline.splitting import split_units
from evidence_pipeline.staleness import stored_state
from evidence_pipeline.store.base import Point, ReplaceResult, SparseVector, Store, point_id
from evidence_pipeline.units import UnitOptions, build_units

if TYPE_CHECKING:
    from evidence_pipeline.parser import Parser

# Bump when a change to parsing, units, children or point ids changes what gets indexed
# (6: raised footnote markers join their word, column tops in the margin band stay body,
# line-end dashes and hyphenated words across blocks read as printed; 7: filings' headings —
# bare "Item 2." joined to its title, structural kinds ranked, statement titles as captions,
# white gaps split label columns beside a lone ruling, column heads further above a table;
# 8: a one-line Item heading with room left did not wrap — the line under it is its own;
# 9: a child's prefix holds the title's head and the two innermost headings, not the whole path;
# a period head centred over two value columns heads both, a row of its own; notes printed
# smaller than a filing's own top headings nest in its outline when it prints no Part or Item;
# 10: a child's vector mixes its prefix's and its text's, each embedded apart — Embedder.embed_children;
# a body sentence of fewer than three words joins its neighbour — records.joined_fragments;
# 11: a note's heading or a lead-in sentence ends a table and opens the next — table_finder.opens_next;
# "NOTE 6 — INVENTORIES" in the body's own type is a heading by its capitals; a Part or Item
# heading, or a centred title in capitals, stops a table growing up into it — table_finder._title;
# 12: a line ending in a sentence and the next item's bullet glyph is no heading;
# 13: a table's period head left above it ("Years ended December 31") is no heading;
# 14: a two-column table of bold labels has no header row — grid._bold_fields; a ruled grid
# with text in every cell is a table though a figure caption names it; a text table's rows
# are the bands between its rules — table_grid._banded; a sentence is no column head —
# tables.text_row; one structural-heading pattern);
# 15: running text in the page margin is furniture over a stretch of pages, not only over a
# third of the document — page_furniture._stretches; column rulings drawn cell by cell join across
# the row rule between segments — Rules.joined_verticals; a column its rulings draw is kept though
# empty on this page — table_grid._ruled_columns; a sparse grid its rules draw whole, a label on
# every row, is a table — table_finder._labelled_rows; a ruled row that opens a page is a table's
# carried-over row — table_finder._opens_page, one cell's wrapped lines one row; labels centred
# beside wrapped text stay in their column; a contents line with a dot leader is no heading —
# text.DOT_LEADER_RE; a part under a title of its own continues no table — convert._link_continuations;
# a table's HTML escapes only what HTML would misread — tables.html_text;
# 16: every item on a page's first or last line is at its edge, where running lines read
# ("Pfizer Inc.   2021 Form 10-K   19") — page_furniture.page_extremes; a running line's stretch
# ends where it is missing for more than three pages, and a page number at a page's edge runs over
# a stretch like a line in the margin band — page_furniture._stretches; a running head of two
# lines is furniture line by line — headings.repeated_headings; a table of contents
# is no evidence, as lines of text or as a grid whose page numbers follow the leader —
# units.is_contents_entry, text.CONTENTS_ENTRY_RE;
# 17: a white gap left of every column ruling, with figures right of it, parts the labels from
# the first value column — table_grid._unruled_stub_edge; a field's label with its value in a
# column beside it ("Title:", "Protocol No:") is one paragraph, no section — headings.join_field_labels;
# 18: a body sentence of fewer than eight words joins its neighbour, a lead-in ending in a colon
# the sentence after it — records.MIN_SENTENCE_WORDS, records.joined_fragments;
# 19: an index of a filing's statements or items set as a grid without leaders ("Consolidated
# Statements of Cash Flows | 3") is a table of contents — units._page_index; a bulleted list read
# as a grid of bullets and items is read as list items — units.bulleted_list_items; a kind of
# structural heading printed first in an index at the back outlines nothing, and notes set larger
# than the heading that opens them go under it — headings._outline_kinds, headings._notes_under_their_heading;
# 20: a paragraph that is a whole Part or Item heading is that heading — headings.structural_lines;
# a table of contents' own heading heads nothing — units._Sections.path; every table point says
# which primary financial statement it is — payload statement, statements.statement_kind);
# 21: a heading that opens with an initialism ("U.S. Cell Phone Litigation") is levelled by its
# style, not as a section lettered "U." — docling_patches.initialisms_are_not_numbering; a line of
# dates only ("Apr 1, 2023 Dec 31, 2022") is no heading — headings._DATES_ONLY).
PIPELINE_VERSION = "21"

class PipelineOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    units: UnitOptions = UnitOptions()
    # 10-Q statements of 13-35 rows are 1,200-1,900 word pieces with their HTML; at 700 they came
    # back in pieces without the asked row. On `eval-sec` (full system, routing on) ev@1 went
    # 0.097 (700) / 0.097 (1500) / 0.194 (3000) / 0.194 (6000), tokens per context 398 / 518 / 577 / 617.
    max_parent_tokens: int = Field(
        default=3000, description="word pieces of a parent's text before a table is split by rows"
    )

    def version(self, parser: str, model_id: str) -> str:
        """Changes whenever anything that shapes the indexed points changes."""
        key = f"{PIPELINE_VERSION}|{TOKENIZER_VERSION}|{parser}|{model_id}|{self.model_dump_json()}"
        return hashlib.sha256(key.encode()).hexdigest()[:16]


def document_card(doc: ParsedDoc) -> DocumentCard:
    """The document's card: the one place a card is built from a parsed document."""
    return build_card(doc)


def evidence_units(doc: ParsedDoc, options: PipelineOptions, counter: TokenCounter) -> list[EvidenceUnit]:
    """The card unit first, then the tables and section chunks, all under the card's clean title."""
    card = document_card(doc)
    titled = doc if doc.title == card.title else doc.model_copy(update={"title": card.title})
    return [EvidenceUnit.for_card(card), *build_units(titled, options.units, counter.count)]


def card_of(units: Sequence[EvidenceUnit]) -> DocumentCard | None:
    return next((u.card for u in units if u.card is not None), None)


def split_evidence_units(units: list[EvidenceUnit], options: PipelineOptions, counter: TokenCounter) -> list[EvidenceUnit]:
    return split_units(units, options.max_parent_tokens, counter.count)


def document_units(doc: ParsedDoc, options: PipelineOptions, counter: TokenCounter) -> list[EvidenceUnit]:
    """The units that get indexed: evidence units, long tables split to the parent budget."""
    return split_evidence_units(evidence_units(doc, options, counter), options, counter)


def children_of(units: list[EvidenceUnit], counter: TokenCounter) -> list[ChildUnit]:
    return build_children(units, counter)


def prepare(doc: ParsedDoc, counter: TokenCounter, options: PipelineOptions) -> tuple[list[EvidenceUnit], list[ChildUnit]]:
    """Units and their children: everything before embedding."""
    units = document_units(doc, options, counter)
    return units, children_of(units, counter)


def sparse_vectors(children: Sequence[ChildUnit], encoder: SparseEncoder | None = None) -> list[SparseVector]:
    encoder = encoder or SparseEncoder()
    return [encoder.encode_document(c.sparse_text) for c in children]


def document_points(
    doc: ParsedDoc,
    units: Sequence[EvidenceUnit],
    children: Sequence[ChildUnit],
    dense: np.ndarray,
    sparse: Sequence[SparseVector],
    pipeline_version: str,
) -> list[Point]:
    """The points of one document: one per child, in the order of ``children``, with the
    ``dense`` and ``sparse`` vectors at the same positions. Every writer (ingest, the
    ``qdrant_points`` asset, evaluation) builds its points here."""
    if not (len(children) == len(dense) == len(sparse)):
        raise ValueError(f"{len(children)} children but {len(dense)} dense and {len(sparse)} sparse vectors")
    stamp = DocumentStamp.of(doc, pipeline_version, card_of(units))
    by_id = {u.unit_id: u for u in units}
    return [
        Point(
            id=point_id(child.doc_id, child.child_id, child.parent_id),
            dense=vec.tolist(),
            sparse=sp,
            payload=PointPayload.for_child(stamp, by_id[child.unit_id], child).model_dump(),
        )
        for child, vec, sp in zip(children, dense, sparse)
    ]


def write_points(store: Store, doc_id: str, points: Sequence[Point]) -> ReplaceResult:
    """Replace the document's points in ``store`` (creating the collection for the first)."""
    if points:
        store.ensure_collection(len(points[0].dense))
    return store.replace_document(doc_id, points)


@dataclass
class IngestResult:
    doc_id: str
    units: int
    children: int
    points: ReplaceResult
    skipped: bool = False  # the store already held this content under this pipeline version


def embed_documents(children_per_doc: Sequence[Sequence[ChildUnit]], embedder: Embedder) -> list[np.ndarray]:
    """Dense vectors of several documents' children from one ``embed`` call, split back per
    document. One call fills whole batches across documents; a call per document leaves
    a partial batch each time (measured ~10% slower on the sample corpus, `evidence-pipeline bench`)."""
    vectors = embedder.embed_children([c for children in children_per_doc for c in children])
    out, start = [], 0
    for children in children_per_doc:
        out.append(vectors[start : start + len(children)])
        start += len(children)
    return out


def _write(
    doc: ParsedDoc, units: list[EvidenceUnit], children: list[ChildUnit], dense: np.ndarray,
    store: Store, embedder: Embedder, options: PipelineOptions,
) -> IngestResult:
    version = options.version(doc.parser, embedder.vectors_id)
    points = document_points(doc, units, children, dense, sparse_vectors(children), version)
    store.ensure_collection(embedder.dim)
    return IngestResult(doc.doc_id, len(units), len(children), write_points(store, doc.doc_id, points))


def ingest_parsed(
    doc: ParsedDoc,
    store: Store,
    embedder: Embedder,
    counter: TokenCounter,
    options: PipelineOptions = PipelineOptions(),
) -> IngestResult:
    units, children = prepare(doc, counter, options)
    dense = embedder.embed_children(children)
    return _write(doc, units, children, dense, store, embedder, options)


def _unchanged(path: Path, doc_id: str, store: Store, parser: "Parser", embedder: Embedder, options: PipelineOptions) -> bool:
    # The version is known before parsing: parser name + model id + options.
    version = options.version(parser.name, embedder.vectors_id)
    return not stored_state(store, doc_id, path, version).stale


def _skipped(doc_id: str) -> IngestResult:
    return IngestResult(doc_id, 0, 0, ReplaceResult(upserted=0, deleted=0), skipped=True)


def ingest_file(
    path: str | Path,
    store: Store,
    parser: "Parser",
    embedder: Embedder,
    counter: TokenCounter,
    options: PipelineOptions = PipelineOptions(),
    *,
    doc_id: str | None = None,
    force: bool = False,
) -> IngestResult:
    """Parse, embed and store one file, unless the store already holds this exact file
    (content hash) made by this pipeline version: then nothing is parsed, embedded or
    written, and the result says ``skipped``. ``force`` re-ingests regardless."""
    path = Path(path)
    doc_id = doc_id or doc_id_for(path)
    if not force and _unchanged(path, doc_id, store, parser, embedder, options):
        return _skipped(doc_id)
    return ingest_parsed(parser.parse(path, doc_id=doc_id), store, embedder, counter, options)


def ingest_files(
    paths: Sequence[str | Path],
    store: Store,
    parser: "Parser",
    embedder: Embedder,
    counter: TokenCounter,
    options: PipelineOptions = PipelineOptions(),
    *,
    force: bool = False,
    batch_docs: int = 16,
) -> list[IngestResult]:
    """``ingest_file`` for many files (results in the order of ``paths``), embedding the
    children of up to ``batch_docs`` changed documents per ``embed`` call."""
    results: dict[int, IngestResult] = {}
    pending: list[tuple[int, ParsedDoc, list[EvidenceUnit], list[ChildUnit]]] = []

    def flush() -> None:
        vectors = embed_documents([children for _, _, _, children in pending], embedder)
        for (i, doc, units, children), dense in zip(pending, vectors):
            results[i] = _write(doc, units, children, dense, store, embedder, options)
        pending.clear()

    for i, raw in enumerate(paths):
        path = Path(raw)
        doc_id = doc_id_for(path)
        if not force and _unchanged(path, doc_id, store, parser, embedder, options):
            results[i] = _skipped(doc_id)
            continue
        doc = parser.parse(path, doc_id=doc_id)
        pending.append((i, doc, *prepare(doc, counter, options)))
        if len(pending) >= batch_docs:
            flush()
    if pending:
        flush()
    return [results[i] for i in range(len(paths))]
