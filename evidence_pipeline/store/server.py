"""Store on a Qdrant server through qdrant-client (or its local mode, for tests).

Same point layout as the Edge store: named dense vector ``dense`` (cosine) and
named sparse vector ``bm25`` with ``Modifier.IDF``; keyword payload indexes on
``doc_id`` and ``parent_id``. Grouping by parent runs on the server
(``query_points_groups``). The ingest records (``base.IngestRecord``) are a vectorless collection
named after the points' one, ``<collection>_ingest_records``, made on the first record written;
a record is written after its document's points, as on Edge.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from qdrant_client import QdrantClient, models

from evidence_pipeline.errors import StoreError
from evidence_pipeline.settings import DENSE_VECTOR, SPARSE_VECTOR, StoreSettings
from evidence_pipeline.store.base import (
    DOCUMENT_FIELDS,
    INDEXED_KEYWORDS,
    INGEST_RECORDS,
    RRF_K,
    DocumentInfo,
    DocumentVersion,
    IngestRecord,
    Point,
    ReplaceResult,
    SparseVector,
    StoredHit,
    VectorStats,
    agreed_version,
    documents_of,
    hashes_of,
    point_from_record,
    record_id,
    record_payload,
    records_of,
    unit_representatives,
    vector_stats_of,
)

_UPSERT_BATCH = 256
_SCROLL_PAGE = 1024


def _rrf_query() -> models.RrfQuery | models.FusionQuery:
    # RrfQuery sets k (qdrant-client >= 1.16); plain FusionQuery(RRF) fixes k at 2.
    if hasattr(models, "RrfQuery"):
        return models.RrfQuery(rrf=models.Rrf(k=RRF_K))
    return models.FusionQuery(fusion=models.Fusion.RRF)


class ServerStore:
    """``Store`` on a Qdrant collection.

    ``client`` (or ``location``/``path``) replaces the client built from
    ``settings.url`` and ``settings.api_key``; tests pass ``location=":memory:"``.
    A client passed in is not closed by ``close``.
    """

    def __init__(
        self,
        settings: StoreSettings,
        *,
        client: QdrantClient | None = None,
        location: str | None = None,
        path: str | None = None,
    ):
        self.settings = settings
        self.collection = settings.collection
        self.records_collection = f"{settings.collection}_{INGEST_RECORDS}"
        self._records_ready = False  # the records' collection is known to exist
        self._owns_client = client is None
        self._ready_dim: int | None = None  # ensure_collection already checked this dim
        try:
            if client is not None:
                self.client = client
            elif location is not None or path is not None:
                self.client = QdrantClient(location=location, path=path)
            elif settings.url:
                key = settings.api_key.get_secret_value() if settings.api_key is not None else None
                # The version check would only warn when the server is down; the probe below
                # turns that case into one StoreError instead.
                self.client = QdrantClient(url=settings.url, api_key=key, check_compatibility=False)
                self.client.collection_exists(self.collection)
            else:
                raise StoreError("ServerStore needs settings.url, a client, a location or a path")
        except StoreError:
            raise
        except Exception as exc:
            where = settings.location if settings.url else (location or path)
            reason = settings.redact(" ".join(str(exc).split()) or type(exc).__name__)
            raise StoreError(f"cannot reach Qdrant at {where}: {reason}") from None

    # -- lifecycle -----------------------------------------------------------------

    def _exists(self) -> bool:
        return self.client.collection_exists(self.collection)

    @property
    def dim(self) -> int | None:
        if not self._exists():
            return None
        vectors = self.client.get_collection(self.collection).config.params.vectors
        params = vectors.get(DENSE_VECTOR) if isinstance(vectors, dict) else None
        return params.size if params is not None else None

    def ensure_collection(self, dim: int) -> None:
        if self._ready_dim == dim:
            return
        if not self._exists():
            self.client.create_collection(
                self.collection,
                vectors_config={DENSE_VECTOR: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
                sparse_vectors_config={SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            )
        else:
            existing = self.dim
            if existing is not None and existing != dim:
                raise StoreError(f"collection {self.collection!r} holds {existing}-dimensional vectors, not {dim}")
        schema = self.client.get_collection(self.collection).payload_schema or {}
        for key in INDEXED_KEYWORDS:
            if key not in schema:
                self.client.create_payload_index(self.collection, key, field_schema=models.PayloadSchemaType.KEYWORD, wait=True)
        self._ready_dim = dim

    @property
    def revision(self) -> None:
        """Always None: other clients of the server may change it at any time."""
        return None

    def index_if_due(self) -> bool:
        """A server builds its HNSW graphs in the background (its optimizer): nothing to do."""
        return False

    def close(self) -> None:
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> ServerStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes --------------------------------------------------------------------

    def _records_exist(self, create: bool) -> bool:
        """Whether the ingest records' collection exists, making it first when ``create``."""
        if self._records_ready or self.client.collection_exists(self.records_collection):
            self._records_ready = True
        elif create:
            try:
                # The records hold no vectors; a sparse vector no record has is declared, as on Edge.
                self.client.create_collection(
                    self.records_collection, vectors_config={}, sparse_vectors_config={"none": models.SparseVectorParams()}
                )
            except Exception:
                if not self.client.collection_exists(self.records_collection):  # not made meanwhile by another writer
                    raise
            self._records_ready = True
        return self._records_ready

    def _write_record(self, doc_id: str, payload: dict | None) -> None:
        """Put the document's ingest record (``payload``), or delete it (None)."""
        if not self._records_exist(create=payload is not None):
            return
        if payload is None:
            selector = models.PointIdsList(points=[record_id(doc_id)])
            self.client.delete(self.records_collection, points_selector=selector, wait=True)
        else:
            record = models.PointStruct(id=record_id(doc_id), vector={}, payload=payload)
            self.client.upsert(self.records_collection, points=[record], wait=True)

    def replace_document(self, doc_id: str, points: Sequence[Point], *, ingested_at: str | None = None) -> ReplaceResult:
        """See ``Store.replace_document``."""
        for p in points:
            if p.payload.get("doc_id") != doc_id:
                raise ValueError(f"point {p.id} has doc_id {p.payload.get('doc_id')!r}, not {doc_id!r}")
        if points:
            self.ensure_collection(len(points[0].dense))
        elif not self._exists():
            return ReplaceResult(upserted=0, deleted=0)
        before = self.point_ids(doc_id)
        # Upsert first, then drop the ids the new version no longer has: the document
        # is never absent, and re-running with the same points changes nothing.
        for start in range(0, len(points), _UPSERT_BATCH):
            self.client.upsert(
                self.collection,
                points=[_to_struct(p) for p in points[start : start + _UPSERT_BATCH]],
                wait=True,
            )
        stale = sorted(before - {p.id for p in points})
        if stale:
            self.client.delete(self.collection, points_selector=models.PointIdsList(points=stale), wait=True)
        self._write_record(doc_id, record_payload(doc_id, points, ingested_at) if points else None)
        return ReplaceResult(upserted=len(points), deleted=len(stale))

    def delete_document(self, doc_id: str) -> int:
        """See ``Store.delete_document``."""
        if not self._exists():
            return 0
        n = self.count(doc_id)
        if n:
            self.client.delete(
                self.collection,
                points_selector=models.FilterSelector(filter=_doc_filter([doc_id])),
                wait=True,
            )
        self._write_record(doc_id, None)
        return n

    # -- reads ---------------------------------------------------------------------

    def count(self, doc_id: str | None = None) -> int:
        if not self._exists():
            return 0
        flt = _doc_filter([doc_id]) if doc_id is not None else None
        return self.client.count(self.collection, count_filter=flt, exact=True).count

    def _scroll(
        self, flt: models.Filter | None, with_payload: Any, with_vectors: bool = False, collection: str | None = None
    ) -> Iterator[models.Record]:
        """Every point of ``collection`` (the points' by default) that ``flt`` passes, page by page."""
        if collection is None and not self._exists():
            return
        offset = None
        while True:
            records, offset = self.client.scroll(
                collection or self.collection,
                scroll_filter=flt,
                limit=_SCROLL_PAGE,
                offset=offset,
                with_payload=with_payload,
                with_vectors=with_vectors,
            )
            yield from records
            if offset is None:
                break

    def point_ids(self, doc_id: str) -> set[str]:
        return {str(r.id) for r in self._scroll(_doc_filter([doc_id]), False)}

    def vector_stats(self, doc_id: str) -> VectorStats:
        records = self._scroll(_doc_filter([doc_id]), ["parent_id", "parent_text"], with_vectors=True)
        return vector_stats_of(((r.vector if isinstance(r.vector, dict) else {}), r.payload or {}) for r in records)

    def iter_points(self, doc_id: str) -> Iterator[Point]:
        for r in self._scroll(_doc_filter([doc_id]), True, with_vectors=True):
            yield point_from_record(r.id, (r.vector if isinstance(r.vector, dict) else {}), r.payload)

    def document_hashes(self) -> dict[str, str]:
        return hashes_of(r.payload or {} for r in self._scroll(None, ["doc_id", "content_hash"]))

    def documents(self) -> list[DocumentInfo]:
        return documents_of((r.payload or {} for r in self._scroll(None, DOCUMENT_FIELDS)), self.ingest_records())

    def ingest_records(self) -> dict[str, IngestRecord]:
        if not self._records_exist(create=False):
            return {}
        return records_of(r.payload or {} for r in self._scroll(None, True, collection=self.records_collection))

    def payloads(self, key: str, value: str, fields: Sequence[str]) -> list[dict]:
        flt = models.Filter(must=[models.FieldCondition(key=key, match=models.MatchValue(value=value))])
        return [dict(r.payload or {}) for r in self._scroll(flt, list(fields))]

    def document_version(self, doc_id: str) -> DocumentVersion | None:
        """See ``Store.document_version``: one point read and two filtered counts."""
        if not self._exists():
            return None
        records, _ = self.client.scroll(
            self.collection,
            scroll_filter=_doc_filter([doc_id]),
            limit=1,
            with_payload=["content_hash", "pipeline_version"],
            with_vectors=False,
        )

        def count_with(version: DocumentVersion) -> int:
            same = models.Filter(
                must=[
                    _doc_condition([doc_id]),
                    models.FieldCondition(key="content_hash", match=models.MatchValue(value=version.content_hash)),
                    models.FieldCondition(key="pipeline_version", match=models.MatchValue(value=version.pipeline_version)),
                ]
            )
            return self.client.count(self.collection, count_filter=same, exact=True).count

        first = (records[0].payload or {}) if records else None
        return agreed_version(first, count_with, lambda: self.count(doc_id))

    def hybrid_search(
        self,
        dense: Sequence[float],
        sparse: SparseVector,
        k: int,
        *,
        prefetch_limit: int = 100,
        doc_ids: Sequence[str] | None = None,
    ) -> list[StoredHit]:
        if k <= 0 or not self._exists():
            return []
        flt = _doc_filter(doc_ids) if doc_ids is not None else None
        depth = max(prefetch_limit, k)
        prefetch = [models.Prefetch(query=list(map(float, dense)), using=DENSE_VECTOR, limit=depth, filter=flt)]
        if sparse.indices:
            prefetch.append(
                models.Prefetch(
                    query=models.SparseVector(indices=list(sparse.indices), values=list(sparse.values)),
                    using=SPARSE_VECTOR,
                    limit=depth,
                    filter=flt,
                )
            )
        return self._groups(query=_rrf_query(), prefetch=prefetch, k=k, flt=flt)

    def dense_search(self, dense: Sequence[float], k: int, *, doc_ids: Sequence[str] | None = None) -> list[StoredHit]:
        if k <= 0 or not self._exists():
            return []
        flt = _doc_filter(doc_ids) if doc_ids is not None else None
        return self._groups(query=list(map(float, dense)), using=DENSE_VECTOR, k=k, flt=flt)

    def sparse_search(
        self,
        sparse: SparseVector,
        k: int,
        *,
        doc_ids: Sequence[str] | None = None,
        unit_kind: str | None = None,
        statements: Sequence[str] | None = None,
    ) -> list[StoredHit]:
        if k <= 0 or not sparse.indices or not self._exists():
            return []
        flt = _search_filter(doc_ids, unit_kind, statements)
        query = models.SparseVector(indices=list(sparse.indices), values=list(sparse.values))
        return self._groups(query=query, using=SPARSE_VECTOR, k=k, flt=flt)

    def parent(self, parent_id: str) -> list[StoredHit]:
        flt = models.Filter(must=[models.FieldCondition(key="parent_id", match=models.MatchValue(value=parent_id))])
        ids = unit_representatives((str(r.id), r.payload or {}) for r in self._scroll(flt, ["unit_id"]))
        if not ids:
            return []
        records = {str(r.id): r for r in self.client.retrieve(self.collection, ids, with_payload=True, with_vectors=False)}
        return [StoredHit(id=i, score=0.0, payload=dict(records[i].payload or {})) for i in ids if i in records]

    def _groups(self, *, k: int, flt: models.Filter | None, **query: Any) -> list[StoredHit]:
        result = self.client.query_points_groups(
            self.collection,
            group_by="parent_id",
            group_size=1,
            # Twice the groups asked for: parents tied at the k-th place are all seen, then cut.
            limit=2 * k,
            query_filter=flt,
            with_payload=True,
            **query,
        )
        hits = []
        for group in result.groups:
            best = group.hits[0]
            hits.append(StoredHit(id=str(best.id), score=float(best.score), payload=dict(best.payload or {})))
        # Equal scores in parent id order, so a query gives one order on every run.
        return sorted(hits, key=lambda h: (-h.score, str(h.payload.get("parent_id", h.id))))[:k]


def _doc_condition(doc_ids: Sequence[str]) -> models.FieldCondition:
    return models.FieldCondition(key="doc_id", match=models.MatchAny(any=list(doc_ids)))


def _doc_filter(doc_ids: Sequence[str]) -> models.Filter:
    return models.Filter(must=[_doc_condition(doc_ids)])


def _search_filter(doc_ids: Sequence[str] | None, unit_kind: str | None, statements: Sequence[str] | None = None) -> models.Filter | None:
    """The documents, the kind of unit and the statements a search keeps; None keeps every point."""
    must: list[models.Condition] = [] if doc_ids is None else [_doc_condition(doc_ids)]
    if unit_kind is not None:
        must.append(models.FieldCondition(key="unit_kind", match=models.MatchValue(value=unit_kind)))
    if statements is not None:
        must.append(models.FieldCondition(key="statement", match=models.MatchAny(any=list(statements))))
    return models.Filter(must=must) if must else None


def _to_struct(p: Point) -> models.PointStruct:
    return models.PointStruct(
        id=p.id,
        vector={
            DENSE_VECTOR: list(p.dense),
            SPARSE_VECTOR: models.SparseVector(indices=list(p.sparse.indices), values=list(p.sparse.values)),
        },
        payload=dict(p.payload),
    )
