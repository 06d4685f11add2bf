"""The ingestion stages for one document, as plain functions.

parse -> evidence units -> split units -> children -> dense + BM25 vectors -> points -> store.
The Dagster assets call these one by one; ``ingest_file`` runs them in a row for
scripts, evaluation and benchmarks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from evidence_pipeline.children import build_children
from evidence_pipeline.embedding import Embedder, TokenCounter
from evidence_pipeline.records import ChildUnit, EvidenceUnit, ParsedDoc
from evidence_pipeline.sparse import SparseEncoder
from evidence_pipeline.splitting import split_units
from evidence_pipeline.store.base import Point, ReplaceResult, SparseVector, Store, point_id
from evidence_pipeline.units import UnitOptions, build_units

# Bump when a change to parsing, units or children changes what gets indexed.
PIPELINE_VERSION = "1"

class PipelineOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    units: UnitOptions = UnitOptions()
    max_parent_tokens: int = 700  # word pieces of a parent's LLM text before it is split by rows

    def version(self, parser: str, model_id: str) -> str:
        """Changes whenever anything that shapes the indexed points changes."""
        key = f"{PIPELINE_VERSION}|{parser}|{model_id}|{self.model_dump_json()}"
        return hashlib.sha256(key.encode()).hexdigest()[:16]


def evidence_units(doc: ParsedDoc, options: PipelineOptions, counter: TokenCounter) -> list[EvidenceUnit]:
    return build_units(doc, options.units, counter.count)


def split_evidence_units(units: list[EvidenceUnit], options: PipelineOptions, counter: TokenCounter) -> list[EvidenceUnit]:
    return split_units(units, options.max_parent_tokens, counter.count)


def children_of(units: list[EvidenceUnit], counter: TokenCounter) -> list[ChildUnit]:
    return build_children(units, counter)


def sparse_vectors(children: Sequence[ChildUnit], encoder: SparseEncoder) -> list[SparseVector]:
    return [encoder.encode_document(c.embed_text) for c in children]


def make_points(
    units: Sequence[EvidenceUnit],
    children: Sequence[ChildUnit],
    dense: np.ndarray,
    sparse: Sequence[SparseVector],
    *,
    content_hash: str,
    pipeline_version: str,
) -> list[Point]:
    if not (len(children) == len(dense) == len(sparse)):
        raise ValueError(f"{len(children)} children but {len(dense)} dense and {len(sparse)} sparse vectors")
    by_id = {u.unit_id: u for u in units}
    texts = {u.unit_id: u.text for u in units}
    points = []
    for child, vec, sp in zip(children, dense, sparse):
        unit = by_id[child.unit_id]
        points.append(
            Point(
                id=point_id(child.doc_id, child.child_id),
                dense=vec.tolist(),
                sparse=sp,
                payload={
                    "parent_id": child.parent_id,
                    "unit_id": child.unit_id,
                    "child_id": child.child_id,
                    "parent_text": texts[child.unit_id],
                    "doc_id": child.doc_id,
                    "doc_title": unit.doc_title,
                    "pages": unit.pages,
                    "section_path": unit.section_path,
                    "caption": unit.caption,
                    "unit_kind": unit.kind,
                    "child_kind": child.kind,
                    "text": child.text,
                    "content_hash": content_hash,
                    "pipeline_version": pipeline_version,
                },
            )
        )
    return points


@dataclass
class IngestResult:
    doc_id: str
    units: int
    children: int
    points: ReplaceResult


def ingest_parsed(
    doc: ParsedDoc,
    store: Store,
    embedder: Embedder,
    counter: TokenCounter,
    options: PipelineOptions = PipelineOptions(),
) -> IngestResult:
    units = split_evidence_units(evidence_units(doc, options, counter), options, counter)
    children = children_of(units, counter)
    dense = embedder.embed([c.embed_text for c in children])
    sparse = sparse_vectors(children, SparseEncoder())
    version = options.version(doc.parser, embedder.model_id)
    points = make_points(units, children, dense, sparse, content_hash=doc.content_hash, pipeline_version=version)
    store.ensure_collection(embedder.dim)
    return IngestResult(doc.doc_id, len(units), len(children), store.replace_document(doc.doc_id, points))
