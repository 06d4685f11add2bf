"""The store interface and the point layout shared by every backend.

One point per child. Named dense vector ``dense`` (cosine) and named sparse
vector ``bm25`` (Qdrant's IDF modifier: we send BM25 term-frequency weights,
Qdrant supplies IDF from the collection). The payload is a
``payload.PointPayload`` dumped to a dict: its fields are the payload keys.

Beside the points, each backend keeps one ingest record per document (``IngestRecord``: when its
current points were written, and the SHA-256 they were built from) in a shard or collection of its
own: the points of the same bytes are the same whenever they are written.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

# Re-exported: the fusion constant and score note (``fusion``) and the sparse vector type
# (``sparse``) are part of the point layout's contract.
from evidence_pipeline.fusion import RRF_K as RRF_K
from evidence_pipeline.fusion import SCORE_NOTE as SCORE_NOTE
from evidence_pipeline.settings import DENSE_VECTOR, SPARSE_VECTOR
from evidence_pipeline.sparse import SparseVector as SparseVector

POINT_NAMESPACE = uuid.UUID("6f1c1a52-9d0e-4c43-9d3e-0f6d2c1f7a11")


# Keyword payload indexes every backend creates: delete, count and filter by document, group
# by parent, filter by kind of unit (the document cards are "card") and by financial statement.
INDEXED_KEYWORDS = ("doc_id", "parent_id", "unit_kind", "statement")


def point_id(doc_id: str, child_id: str, parent_id: str) -> str:
    """Deterministic point id: the same document, parent and child always map to the same id.

    The id's first half is a hash of the document and parent (``parent_key``), so a search
    groups its candidates by parent from their ids alone instead of reading each candidate's
    payload, which holds the parent's text. The second half is a hash of the child.
    Formatted as a name-based (version 5) UUID."""
    raw = bytearray(_parent_bytes(doc_id, parent_id) + uuid.uuid5(POINT_NAMESPACE, f"{doc_id}\x1f{child_id}").bytes[8:])
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return str(uuid.UUID(bytes=bytes(raw)))


def _parent_bytes(doc_id: str, parent_id: str) -> bytes:
    """The id's first 8 bytes, version bits (5) included."""
    raw = bytearray(hashlib.blake2b(f"{doc_id}\x1f{parent_id}".encode(), digest_size=8).digest())
    raw[6] = (raw[6] & 0x0F) | 0x50
    return bytes(raw)


PARENT_KEY_CHARS = 18
"""``point_id(...)[:PARENT_KEY_CHARS]`` (its first 8 bytes) is the same for every child of one parent."""


def parent_key(point: str) -> str:
    """The part of a point id that names its parent (see ``point_id``)."""
    return point[:PARENT_KEY_CHARS]


def parent_key_of(doc_id: str, parent_id: str) -> str:
    """``parent_key`` of every point of that parent, without making a point id."""
    return str(uuid.UUID(bytes=_parent_bytes(doc_id, parent_id) + bytes(8)))[:PARENT_KEY_CHARS]


class Point(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    dense: list[float]
    sparse: SparseVector
    payload: dict[str, Any]


class StoredHit(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    score: float
    payload: dict[str, Any]


class ReplaceResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    upserted: int
    deleted: int


class VectorStats(BaseModel):
    """How many of a document's points carry each vector and each parent field."""

    model_config = ConfigDict(frozen=True)

    points: int
    dense: int = Field(description="points with a dense vector")
    sparse: int = Field(description="points with a non-empty BM25 vector")
    parent_id: int = Field(description="points with a non-empty parent_id")
    parent_text: int = Field(description="points with a non-empty parent_text")


class DocumentInfo(BaseModel):
    """One stored document as its points describe it, with its ingest record's time (``Store.documents``)."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    doc_title: str
    points: int = Field(description="points (children) stored for the document")
    parents: int = Field(description="distinct parent_id values: tables and section chunks")
    content_hash: str
    pipeline_version: str
    bm25_tokenizer: str | None = Field(description="tokenizer version of the bm25 vectors; None for points older than the field")
    source: str | None = Field(description="path of the file the document was ingested from; None for points older than the field")
    doc_type: str | None = Field(description="card: document type (10-Q, SOP, ...)")
    period_end: str | None = Field(description="card: ISO date the reporting period ends")
    fiscal_year: int | None = Field(description="card: fiscal year covered")
    ingested_at: str | None = Field(
        default=None,
        description="UTC ISO 8601 time the document's current points were written (its ingest record); "
        "None when the store holds no record for them (written before the records existed, or cut short)",
    )


class IngestRecord(NamedTuple):
    """When a document's current points were written, kept outside the points (``Store.ingest_records``)."""

    ingested_at: str  # UTC, ISO 8601 with milliseconds: 2026-12-03T09:41:07.512Z
    sha256: str  # the content_hash every point written carried ("" when they disagreed)


# Where the records are kept: on Edge, a shard in this folder inside the store's folder; on a
# server, the collection named ``f"{collection}_{INGEST_RECORDS}"``.
INGEST_RECORDS = "ingest_records"
_RECORD_NAMESPACE = uuid.UUID("0b7c5e1e-3f47-4a8e-9c61-2d4f8a3e5b90")


def record_id(doc_id: str) -> str:
    """The id of the document's ingest record (a name-based UUID of the doc_id)."""
    return str(uuid.uuid5(_RECORD_NAMESPACE, doc_id))


def utc_now() -> str:
    """The current time as an ingest record writes it: UTC, ISO 8601, milliseconds, ``Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def record_payload(doc_id: str, points: Sequence[Point], ingested_at: str | None = None) -> dict[str, str]:
    """The ingest record's payload for ``points`` just written: ``ingested_at`` (now when None)
    and the content_hash the points carry ("" when they carry more than one, or none)."""
    hashes = {p.payload.get("content_hash") for p in points}
    sha256 = hashes.pop() if len(hashes) == 1 else ""
    return {"doc_id": doc_id, "ingested_at": ingested_at or utc_now(), "sha256": sha256 if isinstance(sha256, str) else ""}


def records_of(payloads: Iterable[dict]) -> dict[str, IngestRecord]:
    """doc_id -> IngestRecord from the records' payloads; payloads missing a field are skipped."""
    out = {}
    for p in payloads:
        doc_id, at, sha256 = p.get("doc_id"), p.get("ingested_at"), p.get("sha256")
        if isinstance(doc_id, str) and isinstance(at, str) and isinstance(sha256, str):
            out[doc_id] = IngestRecord(at, sha256)
    return out


# The payload keys ``documents`` reads: small fields only, never the parents' texts.
DOCUMENT_FIELDS = [
    "doc_id", "doc_title", "parent_id", "content_hash", "pipeline_version", "bm25_tokenizer",
    "source", "doc_type", "period_end", "fiscal_year",
]  # fmt: skip


def documents_of(payloads: Iterator[dict], records: Mapping[str, IngestRecord] | None = None) -> list[DocumentInfo]:
    """Per document, sorted by id: the first point's fields and the counts of points and parents.

    A document whose points disagree on a version field (an interrupted replace) shows ""
    for that field, as ``agreed_version`` does. ``ingested_at`` comes from the document's
    record in ``records`` only when the record's sha256 is the content_hash its points agree
    on: a record left by an earlier version of the document (a write cut short between the
    points and the record) gives None, never that version's time.
    """
    seen: dict[str, dict] = {}
    parents: dict[str, set] = {}
    for p in payloads:
        doc_id = p.get("doc_id")
        if not isinstance(doc_id, str):
            continue
        info = seen.get(doc_id)
        if info is None:
            seen[doc_id] = info = {k: p.get(k) for k in DOCUMENT_FIELDS if k != "parent_id"} | {"points": 0}
        info["points"] += 1
        for key in ("content_hash", "pipeline_version"):
            if info[key] != p.get(key):
                info[key] = ""
        parents.setdefault(doc_id, set()).add(p.get("parent_id"))
    return [
        DocumentInfo(
            doc_id=doc_id,
            doc_title=str(info.get("doc_title") or ""),
            points=info["points"],
            parents=len(parents[doc_id] - {None}),
            content_hash=str(info.get("content_hash") or ""),
            pipeline_version=str(info.get("pipeline_version") or ""),
            bm25_tokenizer=info.get("bm25_tokenizer"),
            source=info.get("source"),
            doc_type=info.get("doc_type"),
            period_end=info.get("period_end"),
            fiscal_year=info.get("fiscal_year"),
            ingested_at=_ingested_at((records or {}).get(doc_id), str(info.get("content_hash") or "")),
        )
        for doc_id, info in sorted(seen.items())
    ]


def _ingested_at(record: IngestRecord | None, content_hash: str) -> str | None:
    return record.ingested_at if record is not None and content_hash and record.sha256 == content_hash else None


class DocumentVersion(NamedTuple):
    """What a document's points were built from: every point of a document carries both."""

    content_hash: str
    pipeline_version: str


# Written by the embedded store on every point: how many points its document has, so that a
# first ingest interrupted between two upsert batches is seen as incomplete.
DOC_POINTS = "doc_points"


def agreed_version(
    first: dict | None, count_with: Callable[[DocumentVersion], int], count_all: Callable[[], int]
) -> DocumentVersion | None:
    """The version every point of a document carries, from one point's payload and two
    counts (``count_with(version)``: the document's points carrying that version).

    None when the document has no point (``first`` is None); ``("", "")`` when its points
    disagree (a replace interrupted before its stale points were deleted), carry none, or
    number other than the ``doc_points`` they carry (a first ingest interrupted between
    upsert batches), so that any comparison with a real version says "changed".
    """
    if first is None:
        return None
    content_hash, pipeline_version = first.get("content_hash"), first.get("pipeline_version")
    if not (isinstance(content_hash, str) and isinstance(pipeline_version, str)):
        return DocumentVersion("", "")
    version = DocumentVersion(content_hash, pipeline_version)
    total = count_all()
    expected = first.get(DOC_POINTS)
    if isinstance(expected, int) and expected != total:
        return DocumentVersion("", "")
    return version if count_with(version) == total else DocumentVersion("", "")


class Store(Protocol):
    """What the pipeline and search need from a vector store."""

    def ensure_collection(self, dim: int) -> None: ...

    def replace_document(self, doc_id: str, points: Sequence[Point], *, ingested_at: str | None = None) -> ReplaceResult:
        """Upsert ``points``, then delete the document's points that are not among them, then
        write the document's ingest record (``record_payload``: ``ingested_at``, now when None);
        with no points, delete its record instead. The points never carry the time."""

    def delete_document(self, doc_id: str) -> int:
        """Delete the document's points, then its ingest record; the number of points deleted."""

    def ingest_records(self) -> dict[str, IngestRecord]:
        """doc_id -> its ingest record; {} for a store written before the records existed."""

    def count(self, doc_id: str | None = None) -> int: ...

    def document_hashes(self) -> dict[str, str]:
        """doc_id -> content_hash of what is stored (one scroll over payloads)."""

    def documents(self) -> list[DocumentInfo]:
        """Every stored document with its counts, versions and ingest time (one scroll over small
        payload fields and one over the ingest records; see ``documents_of``)."""

    def document_version(self, doc_id: str) -> DocumentVersion | None:
        """``(content_hash, pipeline_version)`` every point of ``doc_id`` carries (see ``agreed_version``)."""

    def point_ids(self, doc_id: str) -> set[str]: ...

    def vector_stats(self, doc_id: str) -> VectorStats: ...

    def iter_points(self, doc_id: str) -> Iterator[Point]:
        """The document's points with vectors and payloads, page by page."""

    def payloads(self, key: str, value: str, fields: Sequence[str]) -> list[dict]:
        """``fields`` of the payload of every point whose keyword ``key`` equals ``value``."""

    def hybrid_search(
        self,
        dense: Sequence[float],
        sparse: SparseVector,
        k: int,
        *,
        prefetch_limit: int = 100,
        doc_ids: Sequence[str] | None = None,
    ) -> list[StoredHit]:
        """Dense + BM25 prefetch fused by RRF; the best child of each of up to k distinct parents."""

    def dense_search(self, dense: Sequence[float], k: int, *, doc_ids: Sequence[str] | None = None) -> list[StoredHit]:
        """Dense only, grouped by parent like hybrid_search."""

    def sparse_search(
        self,
        sparse: SparseVector,
        k: int,
        *,
        doc_ids: Sequence[str] | None = None,
        unit_kind: str | None = None,
        statements: Sequence[str] | None = None,
    ) -> list[StoredHit]:
        """BM25 only, grouped by parent like hybrid_search (for queries the dense model cannot read);
        ``unit_kind``: only the children of that kind of unit ("table"); ``statements``: only the
        children of tables that are one of these statements (payload ``statement``)."""

    def parent(self, parent_id: str) -> list[StoredHit]:
        """The parent's evidence units, one point each with its full payload (score 0: no query),
        ordered by unit id; a split table has one unit per piece. [] when no point has that parent."""

    @property
    def revision(self) -> object | None:
        """A value that changes whenever the store's contents may have changed, for caches
        derived from them; None when the store cannot tell (a server others write to)."""

    def index_if_due(self) -> bool:
        """Build the dense vectors' search index when enough points lack one (blocking);
        True when it built one. A server indexes in the background: False."""

    def close(self) -> None: ...


# Record handling shared by the backends: each passes (id, named vectors, payload)
# of the records it scrolled, whatever its client's record type.


def point_from_record(point_id: object, vectors: dict, payload: dict | None) -> Point:
    sparse = vectors.get(SPARSE_VECTOR)
    return Point(
        id=str(point_id),
        dense=list(vectors.get(DENSE_VECTOR) or []),
        sparse=SparseVector(indices=list(getattr(sparse, "indices", [])), values=list(getattr(sparse, "values", []))),
        payload=dict(payload or {}),
    )


def vector_stats_of(records: Iterator[tuple[dict, dict]]) -> VectorStats:
    """``records``: (named vectors, payload) of every point of one document."""
    counts = dict.fromkeys(VectorStats.model_fields, 0)
    for vectors, payload in records:
        counts["points"] += 1
        counts["dense"] += bool(vectors.get(DENSE_VECTOR))
        counts["sparse"] += bool(getattr(vectors.get(SPARSE_VECTOR), "indices", None))
        counts["parent_id"] += bool(payload.get("parent_id"))
        counts["parent_text"] += bool(payload.get("parent_text"))
    return VectorStats(**counts)


def unit_representatives(records: Iterable[tuple[str, dict]]) -> list[str]:
    """``records``: (point id, payload with ``unit_id``) of one parent's points. The smallest
    point id of each unit (one fixed point per unit on every call), in unit id order."""
    first: dict[str, str] = {}
    for pid, payload in records:
        unit = str(payload.get("unit_id", ""))
        if unit not in first or pid < first[unit]:
            first[unit] = pid
    return [first[u] for u in sorted(first)]


def hashes_of(payloads: Iterator[dict]) -> dict[str, str]:
    return {p["doc_id"]: p.get("content_hash", "") for p in payloads if "doc_id" in p}
