"""Embedded store on Qdrant Edge: one directory holds one shard, opened by one process.

Edge is Qdrant's engine in-process. It differs from a Qdrant server in ways this
module works around:

- no collections: ``settings.path`` is the shard; ``settings.collection`` is unused;
- no group-by: hybrid search fuses dense + BM25 with RRF, then keeps the best child
  of each parent here, querying again with deeper prefetches when too few distinct
  parents came back;
- an exclusive lock while open: open the store only while it is used (``open_store``)
  and close it, so that another process (a Dagster step, the CLI) can open it next;
- no background optimizer: points stay in appendable plain segments where search is
  exact brute force (milliseconds at 100k points). ``optimize()`` builds HNSW and
  vacuums deleted points; after it, dense search is approximate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Sequence

import qdrant_edge as qe

from evidence_pipeline.errors import StoreError
from evidence_pipeline.settings import DENSE_VECTOR, SPARSE_VECTOR, StoreSettings
from evidence_pipeline.store.base import (
    INDEXED_KEYWORDS,
    DocumentVersion,
    RRF_K,
    Point,
    ReplaceResult,
    SparseVector,
    StoredHit,
    VectorStats,
    agreed_version,
    hashes_of,
    point_from_record,
    vector_stats_of,
)

# Edge writes its own config next to the segments; its presence means "a shard lives here".
_EDGE_CONFIG = "edge_config.json"
_UPSERT_BATCH = 1024
_DELETE_BATCH = 4096
_SCROLL_PAGE = 2048
# Grouping retries: each round multiplies the prefetch depth by this, at most this many rounds.
_DEEPEN_FACTOR = 4
_MAX_ROUNDS = 4


class EdgeStore:
    """``Store`` on a Qdrant Edge shard at ``settings.path``.

    The shard is loaded in the constructor when it exists (taking the lock), and
    created by ``ensure_collection`` otherwise. Read methods on a store that was
    never created answer as for an empty one.
    """

    def __init__(self, settings: StoreSettings):
        self.settings = settings
        self.path = Path(settings.path)
        self._shard: qe.EdgeShard | None = None
        if (self.path / _EDGE_CONFIG).exists():
            self._shard = self._load()

    # -- lifecycle -----------------------------------------------------------------

    def _load(self) -> qe.EdgeShard:
        try:
            return qe.EdgeShard.load(str(self.path))
        except Exception as exc:  # the binding raises a bare Exception (e.g. WAL lock WouldBlock)
            raise StoreError(
                f"{self.path}: cannot open the Edge store; another process may hold it open ({exc})"
            ) from exc

    @property
    def dim(self) -> int | None:
        """Dense dimension of the existing shard, read from Edge's persisted config."""
        try:
            config = json.loads((self.path / _EDGE_CONFIG).read_text())
            return int(config["vectors"][DENSE_VECTOR]["size"])
        except (OSError, KeyError, ValueError, TypeError):
            return None

    def ensure_collection(self, dim: int) -> None:
        if self._shard is None:
            config = qe.EdgeConfig(
                vectors={DENSE_VECTOR: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
                sparse_vectors={SPARSE_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            )
            self.path.mkdir(parents=True, exist_ok=True)
            try:
                self._shard = qe.EdgeShard.create(str(self.path), config)
            except Exception as exc:
                raise StoreError(f"{self.path}: cannot create the Edge store ({exc})") from exc
        else:
            existing = self.dim
            if existing is not None and existing != dim:
                raise StoreError(
                    f"{self.path}: the store holds {existing}-dimensional vectors, not {dim}; "
                    "use another store path or delete this one to change the embedding model"
                )
        schema = self._shard.info().payload_schema
        for key in INDEXED_KEYWORDS:
            if key not in schema:
                self._shard.update(
                    qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword)
                )

    def flush(self) -> None:
        if self._shard is not None:
            self._shard.flush()

    def optimize(self) -> bool:
        """Build HNSW / vacuum deletions (blocking). Search is approximate afterwards."""
        return bool(self._shard.optimize()) if self._shard is not None else False

    def close(self) -> None:
        shard, self._shard = self._shard, None
        if shard is not None:
            try:
                shard.flush()
            finally:
                shard.close()

    def __enter__(self) -> "EdgeStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes --------------------------------------------------------------------

    def _require(self) -> qe.EdgeShard:
        if self._shard is None:
            raise StoreError(f"{self.path}: the store is not open or not created (ensure_collection first)")
        return self._shard

    def replace_document(self, doc_id: str, points: Sequence[Point]) -> ReplaceResult:
        for p in points:
            if p.payload.get("doc_id") != doc_id:
                raise ValueError(f"point {p.id} has doc_id {p.payload.get('doc_id')!r}, not {doc_id!r}")
        if self._shard is None and points:
            self.ensure_collection(len(points[0].dense))
        if self._shard is None:
            return ReplaceResult(upserted=0, deleted=0)
        shard = self._shard
        before = self.point_ids(doc_id)
        # Upsert first, then drop what the new version no longer has: the document is
        # never absent, and re-running with the same points changes nothing.
        for start in range(0, len(points), _UPSERT_BATCH):
            batch = [_to_edge_point(p) for p in points[start : start + _UPSERT_BATCH]]
            shard.update(qe.UpdateOperation.upsert_points(batch))
        stale = sorted(before - {p.id for p in points})
        for start in range(0, len(stale), _DELETE_BATCH):
            shard.update(qe.UpdateOperation.delete_points(stale[start : start + _DELETE_BATCH]))
        return ReplaceResult(upserted=len(points), deleted=len(stale))

    def delete_document(self, doc_id: str) -> int:
        if self._shard is None:
            return 0
        n = self.count(doc_id)
        if n:
            self._shard.update(qe.UpdateOperation.delete_points_by_filter(_doc_filter([doc_id])))
        return n

    # -- reads ---------------------------------------------------------------------

    def count(self, doc_id: str | None = None) -> int:
        if self._shard is None:
            return 0
        flt = _doc_filter([doc_id]) if doc_id is not None else None
        return int(self._shard.count(qe.CountRequest(exact=True, filter=flt)))

    def _scroll(self, flt: qe.Filter | None, with_payload: Any, with_vector: bool = False) -> Iterator[Any]:
        if self._shard is None:
            return
        offset = None
        while True:
            records, offset = self._shard.scroll(
                qe.ScrollRequest(
                    offset=offset, limit=_SCROLL_PAGE, filter=flt, with_payload=with_payload, with_vector=with_vector
                )
            )
            yield from records
            if offset is None:
                break

    def point_ids(self, doc_id: str) -> set[str]:
        return {str(r.id) for r in self._scroll(_doc_filter([doc_id]), False)}

    def vector_stats(self, doc_id: str) -> VectorStats:
        records = self._scroll(_doc_filter([doc_id]), ["parent_id", "parent_text"], with_vector=True)
        return vector_stats_of(((r.vector or {}), r.payload or {}) for r in records)

    def iter_points(self, doc_id: str) -> Iterator[Point]:
        for r in self._scroll(_doc_filter([doc_id]), True, with_vector=True):
            yield point_from_record(r.id, (r.vector or {}), r.payload)

    def document_hashes(self) -> dict[str, str]:
        return hashes_of(r.payload or {} for r in self._scroll(None, ["doc_id", "content_hash"]))

    def payloads(self, key: str, value: str, fields: Sequence[str]) -> list[dict]:
        flt = qe.Filter(must=[qe.FieldCondition(key=key, match=qe.MatchValue(value))])
        return [dict(r.payload or {}) for r in self._scroll(flt, list(fields))]

    def document_version(self, doc_id: str) -> DocumentVersion | None:
        """See ``Store.document_version``: one point read and two counts filtered on the
        indexed doc_id; no scroll over the whole store.
        Not detected: the first ingest of a document of more than one upsert batch
        (1024 children) interrupted between batches; ``ingest_file(force=True)`` redoes it."""
        if self._shard is None:
            return None
        records, _ = self._shard.scroll(
            qe.ScrollRequest(
                limit=1, filter=_doc_filter([doc_id]), with_payload=["content_hash", "pipeline_version"], with_vector=False
            )
        )

        def count_with(version: DocumentVersion) -> int:
            same = qe.Filter(
                must=[
                    qe.FieldCondition(key="doc_id", match=qe.MatchAny([doc_id])),
                    qe.FieldCondition(key="content_hash", match=qe.MatchValue(version.content_hash)),
                    qe.FieldCondition(key="pipeline_version", match=qe.MatchValue(version.pipeline_version)),
                ]
            )
            return int(self._shard.count(qe.CountRequest(exact=True, filter=same)))

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
        flt = _doc_filter(doc_ids) if doc_ids is not None else None
        dense_q = qe.Query.Nearest(list(map(float, dense)), using=DENSE_VECTOR)
        sparse_q = (
            qe.Query.Nearest(qe.SparseVector(list(sparse.indices), list(sparse.values)), using=SPARSE_VECTOR)
            if sparse.indices
            else None
        )

        def request(depth: int) -> qe.QueryRequest:
            prefetches = [qe.Prefetch(limit=depth, query=dense_q, filter=flt)]
            if sparse_q is not None:
                prefetches.append(qe.Prefetch(limit=depth, query=sparse_q, filter=flt))
            # Fusion.Rrf takes k: score = sum of 1 / (k + rank), rank counted from 0.
            # Limit = every fused candidate, so grouping sees the whole fused list.
            return qe.QueryRequest(
                limit=depth * len(prefetches),
                prefetches=prefetches,
                query=qe.Fusion.Rrf(k=RRF_K),
                filter=flt,
                with_payload=qe.PayloadSelector.Include(["parent_id"]),
            )

        return self._grouped(request, k, max(prefetch_limit, k), flt)

    def dense_search(
        self, dense: Sequence[float], k: int, *, doc_ids: Sequence[str] | None = None
    ) -> list[StoredHit]:
        flt = _doc_filter(doc_ids) if doc_ids is not None else None
        query = qe.Query.Nearest(list(map(float, dense)), using=DENSE_VECTOR)

        def request(depth: int) -> qe.QueryRequest:
            return qe.QueryRequest(
                limit=depth,
                query=query,
                filter=flt,
                with_payload=qe.PayloadSelector.Include(["parent_id"]),
            )

        return self._grouped(request, k, max(4 * k, 32), flt)

    def _grouped(self, request, k: int, depth: int, flt: qe.Filter | None) -> list[StoredHit]:
        """Best child of each of up to k parents, in score order (Edge has no group-by).

        Candidates carry only ``parent_id``; full payloads are fetched for the k
        winners alone (a parent's text can be kilobytes, candidates are hundreds).
        Deeper rounds only append lower ranks to each prefetch list, so parents
        found in an earlier round keep their order.
        """
        if self._shard is None or k <= 0:
            return []
        total: int | None = None  # counted only when a round comes back short (~2 ms at 10k points)
        best: dict[str, Any] = {}
        for _ in range(_MAX_ROUNDS):
            best = {}
            for sp in self._shard.query(request(depth)):
                parent = (sp.payload or {}).get("parent_id", str(sp.id))
                # Equal scores keep the smaller point id: the same winner on every run.
                if parent not in best or (sp.score, str(best[parent].id)) > (best[parent].score, str(sp.id)):
                    best[parent] = sp
            if len(best) >= k:
                break
            if total is None:
                total = self.count() if flt is None else int(self._shard.count(qe.CountRequest(filter=flt)))
            if depth >= total:
                break
            depth *= _DEEPEN_FACTOR
        # Score order, equal scores by parent id: Edge returns ties in no fixed order.
        winners = [best[p] for p in sorted(best, key=lambda p: (-best[p].score, p))][:k]
        records = {str(r.id): r for r in self._shard.retrieve([sp.id for sp in winners], with_payload=True, with_vector=False)}
        return [
            StoredHit(id=str(sp.id), score=float(sp.score), payload=dict(records[str(sp.id)].payload or {}))
            for sp in winners
            if str(sp.id) in records
        ]


def _doc_filter(doc_ids: Sequence[str]) -> qe.Filter:
    return qe.Filter(must=[qe.FieldCondition(key="doc_id", match=qe.MatchAny(list(doc_ids)))])


def _to_edge_point(p: Point) -> qe.Point:
    # The binding converts each payload string at several microseconds: payload conversion
    # is most of an upsert's CPU time (see `evidence-pipeline bench`). Sending the fields a
    # parent's children share once per parent (set_payload) or the version stamp once per
    # document (set_payload_by_filter) was measured and costs more inside the shard than it saves.
    return qe.Point(
        p.id,
        {DENSE_VECTOR: p.dense, SPARSE_VECTOR: qe.SparseVector(p.sparse.indices, p.sparse.values)},
        dict(p.payload),
    )
