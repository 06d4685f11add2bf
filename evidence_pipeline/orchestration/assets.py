"""Per-document assets: raw file -> parsed doc -> evidence units -> split units -> vectors -> Qdrant.

Each asset calls one function of the core per document and reports what came back
as metadata of that document's partition. A run covers one document or, in a
backfill, a batch of them (``batching``); the body is the same loop either way.
"""

import warnings
from pathlib import Path
from typing import Any

import dagster as dg
import numpy as np
from pydantic import BaseModel, ConfigDict

from evidence_pipeline import pipeline
from evidence_pipeline.corpus import doc_id_for, file_fingerprint, scan
from evidence_pipeline.errors import EvidencePipelineError
from evidence_pipeline.orchestration.batching import BACKFILL_POLICY, each, partition_keys, record_metadata, run_batched
from evidence_pipeline.orchestration.history import latest_metadata
from evidence_pipeline.orchestration.resources import (
    CorpusResource,
    EmbedderResource,
    ParserResource,
    PipelineOptionsResource,
    StoreResource,
)
from evidence_pipeline.records import ChildUnit, EvidenceUnit, ParsedDoc, SourceDocument, sha256_file
from evidence_pipeline.sparse import SparseEncoder
from evidence_pipeline.store.base import SparseVector

# backfill_policy is a beta parameter of @asset in Dagster 1.13; it is what batches backfills.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`", category=dg.BetaWarning)

documents = dg.DynamicPartitionsDefinition(name="documents")

GROUP = "evidence"
# The embedded store takes one writer at a time; dagster.yaml limits this pool to 1 slot.
STORE_POOL = "qdrant_writer"

# Every asset shares the partitions and the backfill policy, so a backfill runs the
# whole chain for a batch of documents in one run (one model load).
_COMMON: dict[str, Any] = {"partitions_def": documents, "group_name": GROUP, "backfill_policy": BACKFILL_POLICY}


class RawDocumentConfig(dg.Config):
    path: str | None = None  # set by `evidence-pipeline ingest` for files outside the corpus folder


class ChildEmbeddings(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    children: list[ChildUnit]
    vectors: np.ndarray
    model_id: str  # Embedder.vectors_id: the model and how the children's vectors were made


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip() or " "


def unit_preview(units: list[EvidenceUnit], limit: int = 5, rows: int = 3) -> str:
    """Markdown for the UI: each table's caption, pages, section and first rows."""
    tables = [u for u in units if u.kind == "table"]
    lines = []
    for unit in tables[:limit]:
        pages = ", ".join(map(str, unit.pages)) or "-"
        part = f", part {unit.piece + 1}/{unit.n_pieces}" if unit.n_pieces > 1 else ""
        lines.append(f"**{unit.caption or '(no caption)'}** - `{unit.unit_id}`, pages {pages}{part}")
        if unit.section_path:
            lines.append(f"*{' > '.join(unit.section_path)}*")
        lines.append("")
        width = unit.n_cols
        head = unit.column_paths or [""] * width
        if width:
            lines.append("| " + " | ".join(_cell(h) for h in head) + " |")
            lines.append("|" + "---|" * width)
            for row in unit.rows[:rows]:
                lines.append("| " + " | ".join(_cell(c) for c in row + [""] * (width - len(row))) + " |")
            if len(unit.rows) > rows:
                lines.append(f"\n... {len(unit.rows) - rows} more rows")
        lines.append("")
    if len(tables) > limit:
        lines.append(f"... and {len(tables) - limit} more tables")
    return "\n".join(lines) or "(no tables)"


@dg.asset(
    **_COMMON,
    kinds={"pdf", "file"},
    description="The source file of one document: path, size and content hash (SHA-256).",
)
def raw_pdfs(context: dg.AssetExecutionContext, config: RawDocumentConfig, corpus: CorpusResource):
    keys = partition_keys(context)
    # One scan of the corpus folder for the whole batch, not one per document.
    found = {keys[0]: Path(config.path)} if config.path and len(keys) == 1 else scan(Path(corpus.root)).paths

    def read(key: str):
        path = found.get(key)
        if path is None and not config.path:
            # A document ingested from outside the corpus folder (`evidence-pipeline ingest
            # /elsewhere/x.pdf`): its latest materialization recorded where it was read.
            recorded = latest_metadata(context.instance, "raw_pdfs", [key]).get(key, {}).get("source_path")
            if recorded:
                path = Path(recorded)
                if not path.is_file():
                    raise dg.Failure(
                        description=f"partition {key!r}: no such file in corpus folder {corpus.root}, "
                        f"and its recorded source {recorded} is gone"
                    )
        if path is None or not path.is_file():
            raise dg.Failure(description=f"partition {key!r}: no such file in corpus folder {corpus.root}")
        stat = path.stat()  # before hashing: a write during the hash then shows as a change next tick
        doc = SourceDocument(doc_id=doc_id_for(path), path=str(path), content_hash=sha256_file(str(path)), size_bytes=stat.st_size)
        return doc, {
            "source_path": str(path),
            "doc_id": doc.doc_id,
            "size_bytes": doc.size_bytes,
            "content_hash": doc.content_hash,
            # The sensor's cheap pre-check: a file with this size and mtime is not hashed again.
            "fingerprint": file_fingerprint(stat),
        }

    return run_batched(context, (), read, keyed=True)


@dg.asset(
    **_COMMON,
    kinds={"docling", "python"},
    description="The document parsed into text blocks and tables with cells, captions, footnotes and section headers.",
)
def parsed_docs(context: dg.AssetExecutionContext, raw_pdfs, parser: ParserResource):
    def parse(raw: SourceDocument):
        try:
            doc = parser.parser().parse(Path(raw.path), doc_id=raw.doc_id)
        except EvidencePipelineError as exc:
            # The message names the file and the reason; this document fails alone.
            raise dg.Failure(description=str(exc), metadata={"file": raw.path}) from exc
        return doc, {
            "pages": doc.n_pages,
            "tables": len(doc.tables),
            "blocks": len(doc.blocks),
            "section_headers": sum(b.label == "section_header" for b in doc.blocks),
            "parser": doc.parser,
            "warnings": dg.MetadataValue.md("\n".join(f"- {w}" for w in doc.warnings) or "none"),
            "warning_count": len(doc.warnings),
            "card": dg.MetadataValue.md("\n".join(f"- {line}" for line in pipeline.document_card(doc).lines)),
        }

    return run_batched(context, (raw_pdfs,), parse)


@dg.asset(
    **_COMMON,
    kinds={"python"},
    description="Evidence units: each table with caption, section path, context paragraphs and footnotes; body text as section chunks.",
)
def evidence_units(context: dg.AssetExecutionContext, parsed_docs, embedder: EmbedderResource, pipeline_options: PipelineOptionsResource):
    options = pipeline_options.options()

    def build(doc: ParsedDoc):
        units = pipeline.evidence_units(doc, options, embedder.counter())
        return units, {
            "tables": sum(u.kind == "table" for u in units),
            "section_chunks": sum(u.kind == "section" for u in units),
            "cards": sum(u.kind == "card" for u in units),
            "captioned": sum(u.kind == "table" and u.caption is not None for u in units),
            "rows": sum(len(u.rows) for u in units),
            "preview": dg.MetadataValue.md(unit_preview(units)),
        }

    return run_batched(context, (parsed_docs,), build)


@dg.asset(
    **_COMMON,
    kinds={"python"},
    description="Evidence units within the parent token budget: long tables split by rows, caption and header repeated.",
)
def split_units(context: dg.AssetExecutionContext, evidence_units, embedder: EmbedderResource, pipeline_options: PipelineOptionsResource):
    options = pipeline_options.options()

    def split(units: list[EvidenceUnit]):
        pieces = pipeline.split_evidence_units(units, options, embedder.counter())
        return pieces, {
            "units": len(pieces),
            "split_tables": len({u.parent_id for u in pieces if u.n_pieces > 1}),
            "pieces": sum(u.n_pieces > 1 for u in pieces),
            "preview": dg.MetadataValue.md(
                unit_preview([u for u in pieces if u.n_pieces > 1]) if any(u.n_pieces > 1 for u in pieces) else "(no split tables)"
            ),
        }

    return run_batched(context, (evidence_units,), split)


@dg.asset(
    **_COMMON,
    kinds={"pytorch", "python"},
    description="Children of every unit, each fitted to the model window, with their dense embeddings.",
)
def child_embeddings(context: dg.AssetExecutionContext, split_units, embedder: EmbedderResource):
    model = embedder.embedder()

    def embed(units: list[EvidenceUnit]):
        children = pipeline.children_of(units, embedder.counter())
        vectors = model.embed_children(children)
        kinds: dict[str, int] = {}
        for child in children:
            kinds[child.kind] = kinds.get(child.kind, 0) + 1
        value = ChildEmbeddings(children=children, vectors=vectors, model_id=model.vectors_id)
        return value, {"children": len(children), "dim": int(vectors.shape[1]) if len(vectors) else 0, "by_kind": kinds}

    return run_batched(context, (split_units,), embed)


@dg.asset(
    **_COMMON,
    kinds={"python"},
    description="BM25 sparse vectors of the children that child_embeddings embedded, in the same order (term weights; Qdrant applies IDF).",
)
def bm25_index(context: dg.AssetExecutionContext, child_embeddings):
    encoder = SparseEncoder()

    def encode(embedded: ChildEmbeddings):
        vectors = pipeline.sparse_vectors(embedded.children, encoder)
        return vectors, {"children": len(vectors), "terms": sum(len(v.indices) for v in vectors)}

    return run_batched(context, (child_embeddings,), encode)


@dg.asset(
    **_COMMON,
    kinds={"qdrant"},
    pool=STORE_POOL,
    description=(
        "The document's points in Qdrant: one per child, dense + BM25 vectors, parent text in the payload. "
        "Replaces the document's previous points. Metadata: content_hash and pipeline_version of what is indexed."
    ),
)
def qdrant_points(
    context: dg.AssetExecutionContext,
    parsed_docs,
    split_units,
    child_embeddings,
    bm25_index,
    store: StoreResource,
    pipeline_options: PipelineOptionsResource,
) -> None:
    options = pipeline_options.options()
    # One store session for the batch: Edge is locked while open, so the step holds it
    # once instead of once per document.
    keys = partition_keys(context)
    with store.open() as s:
        for key, (doc, units, embedded, sparse) in each(context, parsed_docs, split_units, child_embeddings, bm25_index, keys=keys):
            embedded: ChildEmbeddings
            sparse: list[SparseVector]
            version = options.version(doc.parser, embedded.model_id)
            points = pipeline.document_points(doc, units, embedded.children, embedded.vectors, sparse, version)
            result = pipeline.write_points(s, doc.doc_id, points)
            metadata = {
                "doc_id": doc.doc_id,
                "points": s.count(doc.doc_id),
                "upserted": result.upserted,
                "deleted_stale": result.deleted,
                "content_hash": doc.content_hash,
                "pipeline_version": version,
            }
            record_metadata(context, keys, key, metadata)
        # A large embedded store gets its search index once enough points lack one (Edge has
        # no background optimizer); the write lock is still held, so searches wait meanwhile.
        if s.index_if_due():
            context.log.info(f"built the store's dense search index ({s.count()} points)")


ASSETS = [raw_pdfs, parsed_docs, evidence_units, split_units, child_embeddings, bm25_index, qdrant_points]
