"""Per-document assets: raw file -> parsed doc -> evidence units -> split units -> vectors -> Qdrant.

Each asset calls one function of the core and reports what came back as metadata.
"""


from pathlib import Path
from typing import Optional

import dagster as dg
import numpy as np
from pydantic import BaseModel, ConfigDict

from evidence_pipeline import pipeline
from evidence_pipeline.corpus import find_document, doc_id_for
from evidence_pipeline.errors import EvidencePipelineError
from evidence_pipeline.orchestration.resources import CorpusResource, EmbedderResource, ParserResource, StoreResource
from evidence_pipeline.records import ChildUnit, EvidenceUnit, ParsedDoc, SourceDocument, sha256_file
from evidence_pipeline.sparse import SparseEncoder
from evidence_pipeline.store.base import SparseVector

documents = dg.DynamicPartitionsDefinition(name="documents")

GROUP = "evidence"


class RawDocumentConfig(dg.Config):
    path: Optional[str] = None  # set by `evidence-pipeline ingest` for files outside the corpus folder


class ChildEmbeddings(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    children: list[ChildUnit]
    vectors: np.ndarray
    model_id: str


def _preview(units: list[EvidenceUnit], limit: int = 5) -> str:
    lines = []
    for unit in [u for u in units if u.kind == "table"][:limit]:
        pages = ", ".join(map(str, unit.pages)) or "-"
        lines.append(f"**{unit.unit_id}** (pages {pages}) {unit.caption or '(no caption)'}")
        for sentence in unit.row_sentences[:3]:
            lines.append(f"- {sentence}")
        lines.append("")
    return "\n".join(lines) or "(no tables)"


@dg.asset(
    partitions_def=documents,
    group_name=GROUP,
    kinds={"pdf", "file"},
    description="The source file of one document: path, size and content hash (SHA-256).",
)
def raw_pdfs(context: dg.AssetExecutionContext, config: RawDocumentConfig, corpus: CorpusResource) -> dg.Output[SourceDocument]:
    key = context.partition_key
    path = Path(config.path) if config.path else find_document(Path(corpus.root), key)
    if path is None or not path.is_file():
        raise dg.Failure(description=f"partition {key!r}: no such file in corpus folder {corpus.root}")
    doc = SourceDocument(doc_id=doc_id_for(path), path=str(path), content_hash=sha256_file(str(path)), size_bytes=path.stat().st_size)
    return dg.Output(doc, metadata={"path": str(path), "size_bytes": doc.size_bytes, "content_hash": doc.content_hash})


@dg.asset(
    partitions_def=documents,
    group_name=GROUP,
    kinds={"docling", "python"},
    description="The document parsed into text blocks and tables with cells, captions, footnotes and section headers.",
)
def parsed_docs(raw_pdfs: SourceDocument, parser: ParserResource) -> dg.Output[ParsedDoc]:
    try:
        doc = parser.parser().parse(Path(raw_pdfs.path), doc_id=raw_pdfs.doc_id)
    except EvidencePipelineError as exc:
        # The message names the file and the reason; this partition fails alone.
        raise dg.Failure(description=str(exc), metadata={"file": raw_pdfs.path}) from exc
    return dg.Output(
        doc,
        metadata={
            "pages": doc.n_pages,
            "tables": len(doc.tables),
            "blocks": len(doc.blocks),
            "section_headers": sum(b.label == "section_header" for b in doc.blocks),
            "parser": doc.parser,
            "warnings": dg.MetadataValue.md("\n".join(f"- {w}" for w in doc.warnings) or "none"),
        },
    )


@dg.asset(
    partitions_def=documents,
    group_name=GROUP,
    kinds={"python"},
    description="Evidence units: each table with caption, section path, context paragraphs and footnotes; body text as section chunks.",
)
def evidence_units(parsed_docs: ParsedDoc, embedder: EmbedderResource) -> dg.Output[list[EvidenceUnit]]:
    units = pipeline.evidence_units(parsed_docs, pipeline.PipelineOptions(), embedder.counter())
    return dg.Output(
        units,
        metadata={
            "tables": sum(u.kind == "table" for u in units),
            "section_chunks": sum(u.kind == "section" for u in units),
            "captioned": sum(u.kind == "table" and u.caption is not None for u in units),
            "preview": dg.MetadataValue.md(_preview(units)),
        },
    )


@dg.asset(
    partitions_def=documents,
    group_name=GROUP,
    kinds={"python"},
    description="Evidence units within the parent token budget: long tables split by rows, caption and header repeated.",
)
def split_units(evidence_units: list[EvidenceUnit], embedder: EmbedderResource) -> dg.Output[list[EvidenceUnit]]:
    units = pipeline.split_evidence_units(evidence_units, pipeline.PipelineOptions(), embedder.counter())
    return dg.Output(
        units,
        metadata={
            "units": len(units),
            "split_tables": len({u.parent_id for u in units if u.n_pieces > 1}),
            "pieces": sum(u.n_pieces > 1 for u in units),
        },
    )


@dg.asset(
    partitions_def=documents,
    group_name=GROUP,
    kinds={"pytorch", "python"},
    description="Children of every unit, each fitted to the model window, with their dense embeddings.",
)
def child_embeddings(split_units: list[EvidenceUnit], embedder: EmbedderResource) -> dg.Output[ChildEmbeddings]:
    children = pipeline.children_of(split_units, embedder.counter())
    model = embedder.embedder()
    vectors = model.embed([c.embed_text for c in children])
    kinds: dict[str, int] = {}
    for child in children:
        kinds[child.kind] = kinds.get(child.kind, 0) + 1
    return dg.Output(
        ChildEmbeddings(children=children, vectors=vectors, model_id=model.model_id),
        metadata={"children": len(children), "dim": int(vectors.shape[1]) if len(vectors) else 0, "by_kind": kinds},
    )


@dg.asset(
    partitions_def=documents,
    group_name=GROUP,
    kinds={"python"},
    description="BM25 sparse vectors of the document's children (term weights; Qdrant applies IDF).",
)
def bm25_index(split_units: list[EvidenceUnit], embedder: EmbedderResource) -> dg.Output[list[SparseVector]]:
    children = pipeline.children_of(split_units, embedder.counter())
    vectors = pipeline.sparse_vectors(children, SparseEncoder())
    return dg.Output(vectors, metadata={"children": len(vectors), "terms": sum(len(v.indices) for v in vectors)})


@dg.asset(
    partitions_def=documents,
    group_name=GROUP,
    kinds={"qdrant"},
    description="The document's points in Qdrant: one per child, dense + BM25 vectors, parent text in the payload. Replaces the document's previous points.",
)
def qdrant_points(
    context: dg.AssetExecutionContext,
    parsed_docs: ParsedDoc,
    split_units: list[EvidenceUnit],
    child_embeddings: ChildEmbeddings,
    bm25_index: list[SparseVector],
    store: StoreResource,
) -> dg.MaterializeResult:
    version = pipeline.PipelineOptions().version(parsed_docs.parser, child_embeddings.model_id)
    points = pipeline.make_points(
        split_units,
        child_embeddings.children,
        child_embeddings.vectors,
        bm25_index,
        content_hash=parsed_docs.content_hash,
        pipeline_version=version,
    )
    with store.open() as s:
        if points:
            s.ensure_collection(len(points[0].dense))
        result = s.replace_document(parsed_docs.doc_id, points)
        count = s.count(parsed_docs.doc_id)
    return dg.MaterializeResult(
        metadata={
            "points": count,
            "upserted": result.upserted,
            "deleted_stale": result.deleted,
            "content_hash": parsed_docs.content_hash,
            "pipeline_version": version,
        }
    )


ASSETS = [raw_pdfs, parsed_docs, evidence_units, split_units, child_embeddings, bm25_index, qdrant_points]
