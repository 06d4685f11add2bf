"""The ingestion stages for one document, as plain functions.

parse -> evidence units -> split units -> children -> dense + BM25 vectors -> points -> store.
The Dagster assets call these one by one; ``ingest_file`` runs them in a row for
scripts, evaluation and benchmarks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evidence_pipeline.cards import build_card
from evidence_pipeline.children import build_children
from evidence_pipeline.corpus import doc_id_for
from evidence_pipeline.embedding import Embedder, TokenCounter
from evidence_pipeline.payload import DocumentStamp, PointPayload
from evidence_pipeline.records import ChildUnit, DocumentCard, EvidenceUnit, ParsedDoc
from evidence_pipeline.sparse import TOKENIZER_VERSION, SparseEncoder
from evidence_pipeline.splitting import split_units
from evidence_pipeline.staleness import stored_state
from evidence_pipeline.store.base import Point, ReplaceResult, SparseVector, Store, point_id
from evidence_pipeline.units import UnitOptions, build_units
from evidence_pipeline.work import CLOCK

if TYPE_CHECKING:
    from evidence_pipeline.parser import Parser

# Bump when a change to parsing, units, children or point ids changes what gets indexed;
# CHANGELOG.md says what each version changed.
PIPELINE_VERSION = "24"


class PipelineOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    units: UnitOptions = UnitOptions()
    # Large enough for a whole financial statement with its HTML: a statement split by rows
    # comes back in pieces, often without the row the question asks for.
    max_parent_tokens: int = Field(default=3000, description="word pieces of a parent's text before a table is split by rows")

    def version(self, parser: str, model_id: str) -> str:
        """Changes whenever anything that shapes the indexed points changes."""
        key = f"{PIPELINE_VERSION}|{TOKENIZER_VERSION}|{parser}|{model_id}|{self.model_dump_json()}"
        return hashlib.sha256(key.encode()).hexdigest()[:16]


def document_card(doc: ParsedDoc) -> DocumentCard:
    """The document's card: the one place a card is built from a parsed document."""
    return build_card(doc)


def evidence_units(doc: ParsedDoc, options: PipelineOptions, counter: TokenCounter) -> list[EvidenceUnit]:
    """The card unit first, then the tables and section chunks, all under the card's clean title."""
    with CLOCK.cpu("units"):
        card = document_card(doc)
        titled = doc if doc.title == card.title else doc.model_copy(update={"title": card.title})
        return [EvidenceUnit.for_card(card), *build_units(titled, options.units, counter.count)]


def card_of(units: Sequence[EvidenceUnit]) -> DocumentCard | None:
    return next((u.card for u in units if u.card is not None), None)


def split_evidence_units(units: list[EvidenceUnit], options: PipelineOptions, counter: TokenCounter) -> list[EvidenceUnit]:
    with CLOCK.cpu("split"):
        return split_units(units, options.max_parent_tokens, counter.count)


def document_units(doc: ParsedDoc, options: PipelineOptions, counter: TokenCounter) -> list[EvidenceUnit]:
    """The units that get indexed: evidence units, long tables split to the parent budget."""
    return split_evidence_units(evidence_units(doc, options, counter), options, counter)


def children_of(units: list[EvidenceUnit], counter: TokenCounter) -> list[ChildUnit]:
    with CLOCK.cpu("children"):
        return build_children(units, counter)


def prepare(doc: ParsedDoc, counter: TokenCounter, options: PipelineOptions) -> tuple[list[EvidenceUnit], list[ChildUnit]]:
    """Units and their children: everything before embedding."""
    units = document_units(doc, options, counter)
    return units, children_of(units, counter)


def sparse_vectors(children: Sequence[ChildUnit], encoder: SparseEncoder | None = None) -> list[SparseVector]:
    encoder = encoder or SparseEncoder()
    with CLOCK.cpu("sparse"):
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
    with CLOCK.cpu("points"):
        return _points(doc, units, children, dense, sparse, pipeline_version)


def _points(doc, units, children, dense, sparse, pipeline_version) -> list[Point]:
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
    with CLOCK.cpu("upsert"):
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
    a partial batch each time."""
    vectors = embedder.embed_children([c for children in children_per_doc for c in children])
    out, start = [], 0
    for children in children_per_doc:
        out.append(vectors[start : start + len(children)])
        start += len(children)
    return out


def _write(
    doc: ParsedDoc,
    units: list[EvidenceUnit],
    children: list[ChildUnit],
    dense: np.ndarray,
    store: Store,
    embedder: Embedder,
    options: PipelineOptions,
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


def _unchanged(path: Path, doc_id: str, store: Store, parser: Parser, embedder: Embedder, options: PipelineOptions) -> bool:
    # The version is known before parsing: parser name + model id + options.
    version = options.version(parser.name, embedder.vectors_id)
    return not stored_state(store, doc_id, path, version).stale


def _skipped(doc_id: str) -> IngestResult:
    return IngestResult(doc_id, 0, 0, ReplaceResult(upserted=0, deleted=0), skipped=True)


def ingest_file(
    path: str | Path,
    store: Store,
    parser: Parser,
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
    parser: Parser,
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
