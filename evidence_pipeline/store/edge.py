"""Embedded store on Qdrant Edge, Qdrant's engine in-process: one directory holds one shard,
opened by one process. Where Edge differs from a Qdrant server:

- no collections: ``settings.path`` is the shard; ``settings.collection`` is unused; the ingest
  records (``base.IngestRecord``) are a second shard, ``ingest_records``, inside it;
- no group-by: hybrid search fuses dense + BM25 with RRF and keeps each parent's best child
  here (deeper prefetches when too few parents came back); a point id begins with its parent's
  key (``base.point_id``), so candidates group by id and only the winners' payloads are read;
- an exclusive lock while open: every opener first takes ``StoreLock`` (a file beside the shard),
  waiting up to ``settings.lock_timeout_s``, and holds the store only while it is used
  (``open_store``); searches keep one read-only open that lets go when anyone queues (``reader``);
- no background optimizer: ``optimize()`` builds HNSW and vacuums deleted points (the ingest
  calls it through ``index_if_due``); until then dense search is exact brute force.

Crash safety (kill -9 at any moment): every ``update`` is in Edge's WAL before it returns and a
load replays it; a new shard is made in a side folder and renamed into place; what a killed
``replace_document`` leaves is stale by ``document_version`` (every point carries its document's
point count, ``doc_points``), so the next ingest redoes the document; an ingest record killed
before it is written reads as no ingest time (``documents_of``).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from evidence_pipeline.errors import StoreError
from evidence_pipeline.fusion import rrf
from evidence_pipeline.settings import DENSE_VECTOR, SPARSE_VECTOR, StoreSettings
from evidence_pipeline.store.base import (
    DOC_POINTS,
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
    parent_key,
    parent_key_of,
    point_from_record,
    record_id,
    record_payload,
    records_of,
    unit_representatives,
    vector_stats_of,
)
from evidence_pipeline.store.lock import StoreLock, busy_message
from evidence_pipeline.work import WORK

# Edge writes its own config next to the segments; its presence means "a shard lives here".
_EDGE_CONFIG = "edge_config.json"
# Written with a new shard: its point ids carry their parent (``base.point_id``), so search
# groups candidates by id. A shard without this file groups them by payload.
_PARENT_KEYED = "parent_keyed_ids"
_DELETE_BATCH = 4096
# Points fetched beyond a prefetch depth so that ties at the cut are ordered by id; the fetch
# widens while more tie there (see _ranked).
_TIE_MARGIN = 16
_SCROLL_PAGE = 2048
# Grouping retries: each round multiplies the prefetch depth by this, at most this many rounds.
_DEEPEN_FACTOR = 4
_MAX_ROUNDS = 4


class EdgeStore:
    """``Store`` on a Qdrant Edge shard at ``settings.path``.

    When the shard exists, the constructor takes the store's lock (waiting up to
    ``settings.lock_timeout_s``) and loads it; ``close`` releases both. When it does
    not, nothing is locked until ``ensure_collection`` creates it. Read methods on a
    store that was never created answer as for an empty one.
    """

    def __init__(self, settings: StoreSettings):
        self.settings = settings
        self.path = Path(settings.path)
        self._shard: qe.EdgeShard | None = None
        self._records: qe.EdgeShard | None = None  # the ingest records' shard, loaded on first use
        self._records_written = False
        self._written = False  # any update since opening: close() flushes only then
        self._revision = 0  # counts loads and updates: see ``revision``
        self._lock = StoreLock(self.path)
        self._parent_keyed = False
        if (self.path / _EDGE_CONFIG).exists():
            self._open()

    # -- lifecycle -----------------------------------------------------------------

    def _open(self, config: qe.EdgeConfig | None = None) -> None:
        """Lock, then load the shard, or create it with ``config`` when there is none."""
        self._lock.acquire(self.settings.lock_timeout_s)
        try:
            if (self.path / _EDGE_CONFIG).exists():
                self._shard = self._load()
            elif config is not None:
                self._shard = self._create(config)
            WORK.count("store.opens")
            self._parent_keyed = (self.path / _PARENT_KEYED).exists()
            self._revision += 1
        except BaseException:
            self._lock.release()
            raise
        if self._shard is None:  # the shard vanished while we waited
            self._lock.release()

    def _load(self) -> qe.EdgeShard:
        # Edge's own WAL lock can still be taken by a process that opened the shard
        # without the lock file: wait for it too.
        deadline = time.monotonic() + self.settings.lock_timeout_s
        while True:
            try:
                return qe.EdgeShard.load(str(self.path))
            except Exception as exc:  # the binding raises a bare Exception
                if "WouldBlock" not in str(exc):
                    raise StoreError(f"{self.path}: cannot open the Edge store ({exc})") from exc
                if time.monotonic() >= deadline:
                    holder = "holder unknown: it opened the store without its lock file"
                    raise StoreError(busy_message(self.path, self.settings.lock_timeout_s, holder)) from exc
                time.sleep(0.05)

    def _create(self, config: qe.EdgeConfig) -> qe.EdgeShard:
        """A new shard, made in a side folder and renamed into place (atomic: a killed
        creation leaves the side folder, which the next creation clears)."""
        if self.path.exists() and (not self.path.is_dir() or any(self.path.iterdir())):
            raise StoreError(
                f"{self.path}: exists and is not an Edge store (no {_EDGE_CONFIG}); delete it or set EVIDENCE_STORE_PATH to another folder"
            )
        side = self.path.with_name(f".{self.path.name}.creating")
        try:
            shutil.rmtree(side, ignore_errors=True)
            side.mkdir(parents=True)
            qe.EdgeShard.create(str(side), config).close()
            (side / _PARENT_KEYED).write_text("point ids begin with their parent's key (evidence_pipeline.store.base.point_id)\n")
            if self.path.is_dir():
                self.path.rmdir()  # empty: checked above
            os.replace(side, self.path)
            return qe.EdgeShard.load(str(self.path))
        except Exception as exc:
            raise StoreError(f"{self.path}: cannot create the Edge store ({exc})") from exc

    @property
    def is_open(self) -> bool:
        """True while this object holds the shard, and with it the store's lock."""
        return self._shard is not None

    @property
    def revision(self) -> int | None:
        """Changes whenever what this store holds may have changed; None while closed. An
        open Edge store holds the store's lock, so only its own updates change it."""
        return self._revision if self._shard is not None else None

    @property
    def lock_identity(self) -> tuple[int, int] | None:
        """(device, inode) of the lock file held while open (see ``StoreLock.identity``)."""
        return self._lock.identity()

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
            self._open(config)  # another process may have created it meanwhile: then loaded
        if self._shard is not None:
            existing = self.dim
            if existing is not None and existing != dim:
                raise StoreError(
                    f"{self.path}: the store holds {existing}-dimensional vectors, not {dim}; "
                    "use another store path or delete this one to change the embedding model"
                )
        schema = self._require().info().payload_schema
        for key in INDEXED_KEYWORDS:
            if key not in schema:
                self._update(qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword))

    def flush(self) -> None:
        if self._shard is not None:
            WORK.count("store.flushes")
            self._shard.flush()

    def optimize(self) -> bool:
        """Build HNSW / vacuum deletions (blocking). Search is approximate afterwards."""
        self._written = True
        return bool(self._shard.optimize()) if self._shard is not None else False

    def unindexed(self) -> int:
        """Points whose dense vector is in no HNSW graph (searched by brute force). Edge counts
        every sparse vector as indexed, so the dense vectors in a graph are the rest."""
        if self._shard is None:
            return 0
        info = self._shard.info()
        return max(0, 2 * info.points_count - info.indexed_vectors_count)

    def index_if_due(self) -> bool:
        """``optimize`` once ``settings.index_threshold`` points are unindexed (0: never).

        Edge has no background optimizer: every upsert lands in a plain segment that dense
        search scans whole, most of a search on a large store (``benchmark.search_latency``
        measures it). Later ingests extend the graph only past the threshold again; the points
        written since are scanned exactly meanwhile."""
        threshold = self.settings.index_threshold
        if threshold <= 0 or self.unindexed() < threshold:
            return False
        return self.optimize()

    def _update(self, operation: Any) -> None:
        self._written = True
        self._revision += 1
        self._require().update(operation)

    def close(self) -> None:
        shard, self._shard = self._shard, None
        records, self._records = self._records, None
        try:
            if records is not None:
                try:
                    if self._records_written:
                        records.flush()
                finally:
                    records.close()
                    self._records_written = False
            if shard is not None:
                try:
                    # A flush costs time even with nothing to write: a reader skips it.
                    if self._written:
                        WORK.count("store.flushes")
                        shard.flush()
                finally:
                    shard.close()
        finally:
            self._lock.release()  # after Edge let go of its WAL, so the next opener can load

    def __enter__(self) -> EdgeStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes --------------------------------------------------------------------

    def _require(self) -> qe.EdgeShard:
        if self._shard is None:
            raise StoreError(f"{self.path}: the store is not open or not created (ensure_collection first)")
        return self._shard

    def _records_shard(self, create: bool) -> qe.EdgeShard | None:
        """The ingest records' shard, loaded while the store is open; made (in a side folder
        renamed into place) when ``create`` and there is none. None: no records yet."""
        if self._records is None and self._shard is not None:
            folder = self.path / INGEST_RECORDS
            try:
                if (folder / _EDGE_CONFIG).exists():
                    self._records = qe.EdgeShard.load(str(folder))
                elif create:
                    side = self.path / f".{INGEST_RECORDS}.creating"
                    shutil.rmtree(side, ignore_errors=True)
                    qe.EdgeShard.create(str(side), _records_config()).close()
                    os.replace(side, folder)
                    self._records = qe.EdgeShard.load(str(folder))
            except Exception as exc:  # the binding raises a bare Exception
                raise StoreError(f"{folder}: cannot open the ingest records ({exc})") from exc
        return self._records

    def _write_record(self, doc_id: str, payload: dict | None) -> None:
        """Put the document's ingest record (``payload``), or delete it (None)."""
        records = self._records_shard(create=payload is not None)
        if records is None:
            return
        if payload is None:
            ids: list[qe.PointId] = [record_id(doc_id)]
            operation = qe.UpdateOperation.delete_points(ids)
        else:
            operation = qe.UpdateOperation.upsert_points([qe.Point(record_id(doc_id), {}, payload)])
        self._records_written = True
        self._revision += 1
        records.update(operation)

    def replace_document(self, doc_id: str, points: Sequence[Point], *, ingested_at: str | None = None) -> ReplaceResult:
        """See ``Store.replace_document``."""
        for p in points:
            if p.payload.get("doc_id") != doc_id:
                raise ValueError(f"point {p.id} has doc_id {p.payload.get('doc_id')!r}, not {doc_id!r}")
        if self._shard is None and points:
            self.ensure_collection(len(points[0].dense))
        if self._parent_keyed:
            for p in points:
                if parent_key(p.id) != parent_key_of(doc_id, str(p.payload.get("parent_id"))):
                    raise ValueError(
                        f"point {p.id} of {doc_id!r} does not begin with its parent's key: "
                        "make ids with evidence_pipeline.store.base.point_id(doc_id, child_id, parent_id)"
                    )
        if self._shard is None:
            return ReplaceResult(upserted=0, deleted=0)
        before = self.point_ids(doc_id)
        # Upsert first, then drop what the new version no longer has: the document is
        # never absent, and re-running with the same points changes nothing. Every point
        # carries the size of its document version, so that a replace killed between
        # two writes is seen as incomplete (``document_version``).
        size, n = self.settings.upsert_batch, len({p.id for p in points})
        for start in range(0, len(points), size):
            batch = [_to_edge_point(p, n) for p in points[start : start + size]]
            self._update(qe.UpdateOperation.upsert_points(batch))
            WORK.count("store.upserts", len(batch))
        stale: list[qe.PointId] = [*sorted(before - {p.id for p in points})]
        for start in range(0, len(stale), _DELETE_BATCH):
            self._update(qe.UpdateOperation.delete_points(stale[start : start + _DELETE_BATCH]))
        self._write_record(doc_id, record_payload(doc_id, points, ingested_at) if points else None)
        return ReplaceResult(upserted=len(points), deleted=len(stale))

    def delete_document(self, doc_id: str) -> int:
        """See ``Store.delete_document``."""
        if self._shard is None:
            return 0
        n = self.count(doc_id)
        if n:
            self._update(qe.UpdateOperation.delete_points_by_filter(_doc_filter([doc_id])))
        self._write_record(doc_id, None)
        return n

    # -- reads ---------------------------------------------------------------------

    def count(self, doc_id: str | None = None) -> int:
        if self._shard is None:
            return 0
        flt = _doc_filter([doc_id]) if doc_id is not None else None
        return int(self._shard.count(qe.CountRequest(exact=True, filter=flt)))

    def _scroll(
        self, flt: qe.Filter | None, with_payload: Any, with_vector: bool = False, shard: qe.EdgeShard | None = None
    ) -> Iterator[Any]:
        """Every point of ``shard`` (the points' shard by default) that ``flt`` passes, page by page."""
        shard = shard or self._shard
        if shard is None:
            return
        offset = None
        while True:
            records, offset = shard.scroll(
                qe.ScrollRequest(offset=offset, limit=_SCROLL_PAGE, filter=flt, with_payload=with_payload, with_vector=with_vector)
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
            yield point_from_record(r.id, (r.vector or {}), _given_payload(r.payload))

    def document_hashes(self) -> dict[str, str]:
        return hashes_of(r.payload or {} for r in self._scroll(None, ["doc_id", "content_hash"]))

    def documents(self) -> list[DocumentInfo]:
        return documents_of((r.payload or {} for r in self._scroll(None, DOCUMENT_FIELDS)), self.ingest_records())

    def ingest_records(self) -> dict[str, IngestRecord]:
        records = self._records_shard(create=False)
        if records is None:
            return {}
        return records_of(r.payload or {} for r in self._scroll(None, True, shard=records))

    def payloads(self, key: str, value: str, fields: Sequence[str]) -> list[dict]:
        flt = qe.Filter(must=[qe.FieldCondition(key=key, match=qe.MatchValue(value))])
        return [dict(r.payload or {}) for r in self._scroll(flt, list(fields))]

    def document_version(self, doc_id: str) -> DocumentVersion | None:
        """See ``Store.document_version`` and ``agreed_version``: one point read and two counts
        filtered on the indexed doc_id; no scroll over the store. Every Edge point carries
        ``doc_points``, so a first ingest killed between two upsert batches reads as stale."""
        if self._shard is None:
            return None
        records, _ = self._shard.scroll(
            qe.ScrollRequest(
                limit=1,
                filter=_doc_filter([doc_id]),
                with_payload=["content_hash", "pipeline_version", DOC_POINTS],
                with_vector=False,
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
            return int(self._require().count(qe.CountRequest(exact=True, filter=same)))

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
            qe.Query.Nearest(qe.SparseVector(list(sparse.indices), list(sparse.values)), using=SPARSE_VECTOR) if sparse.indices else None
        )

        def candidates(depth: int) -> list[tuple[float, int, int | str]]:
            # Fused here, not by Edge's Fusion.Rrf: Edge returns equal scores in no fixed order
            # (identical children of near-twin documents), and inside its fusion that order
            # changes the fused scores. Each list is put in (score, point id) order first, so
            # the same query on the same points always fuses the same way.
            lists = [self._ranked(dense_q, depth, flt)]
            if sparse_q is not None:
                lists.append(self._ranked(sparse_q, depth, flt))
            parents = {pid: parent for ranked in lists for _, pid, parent in ranked}
            # rank counted from 0, as Qdrant's own RRF
            fused = rrf((((pid for _, pid, _ in ranked), 1.0) for ranked in lists), RRF_K)
            return [(score, pid, parents[pid]) for pid, score in fused.items()]

        return self._grouped(candidates, k, max(prefetch_limit, k), flt)

    def dense_search(self, dense: Sequence[float], k: int, *, doc_ids: Sequence[str] | None = None) -> list[StoredHit]:
        flt = _doc_filter(doc_ids) if doc_ids is not None else None
        query = qe.Query.Nearest(list(map(float, dense)), using=DENSE_VECTOR)

        def candidates(depth: int) -> list[tuple[float, int, int | str]]:
            return self._ranked(query, depth, flt)

        return self._grouped(candidates, k, max(4 * k, 32), flt)

    def sparse_search(
        self,
        sparse: SparseVector,
        k: int,
        *,
        doc_ids: Sequence[str] | None = None,
        unit_kind: str | None = None,
        statements: Sequence[str] | None = None,
    ) -> list[StoredHit]:
        if not sparse.indices:
            return []
        flt = _search_filter(doc_ids, unit_kind, statements)
        query = qe.Query.Nearest(qe.SparseVector(list(sparse.indices), list(sparse.values)), using=SPARSE_VECTOR)

        def candidates(depth: int) -> list[tuple[float, int, int | str]]:
            return self._ranked(query, depth, flt)

        return self._grouped(candidates, k, max(4 * k, 32), flt)

    def parent(self, parent_id: str) -> list[StoredHit]:
        flt = qe.Filter(must=[qe.FieldCondition(key="parent_id", match=qe.MatchAny([parent_id]))])
        ids = unit_representatives((str(r.id), r.payload or {}) for r in self._scroll(flt, ["unit_id"]))
        if not ids:
            return []
        point_ids: list[qe.PointId] = [*ids]
        records = {str(r.id): r for r in self._require().retrieve(point_ids, with_payload=True, with_vector=False)}
        return [StoredHit(id=i, score=0.0, payload=_given_payload(records[i].payload)) for i in ids if i in records]

    def _ranked(self, query: Any, depth: int, flt: qe.Filter | None) -> list[tuple[float, int, int | str]]:
        """(score, point id, parent key) of one query's best ``depth`` points, in score order and
        equal scores by point id, whatever order the points were written in. Edge returns tied
        points in an order of its own, so more are fetched than kept, and the fetch widens until
        the points tied at the cut are all in hand. The parent key is read off the id
        (``base.parent_key``: its first 8 bytes) without touching the payloads, or, in a shard
        whose ids do not carry it (``_PARENT_KEYED``), is the payload's ``parent_id``.

        A point id here is its UUID's 128-bit integer, which orders as its text does (fixed-width
        hex); the text is made only for the few points a search returns (``_grouped``)."""
        keyed = self._parent_keyed
        limit = depth + _TIE_MARGIN
        while True:
            found = self._require().query(
                qe.QueryRequest(
                    limit=limit,
                    query=query,
                    filter=flt,
                    with_payload=False if keyed else qe.PayloadSelector.Include(["parent_id"]),
                    # an indexed segment's graph is walked with at least as many candidates as kept
                    params=qe.SearchParams(hnsw_ef=max(self.settings.hnsw_ef, limit)),
                )
            )
            if not _tied_past(found, depth, limit):
                break
            limit *= 2
        # Sorted as plain (negated score, id) tuples, without a key function: a search sorts a
        # few hundred of them, and the key calls were most of its time outside the store.
        if keyed:
            ranked = sorted([(-float(sp.score), sp.id.int) for sp in found])[:depth]  # type: ignore[union-attr]  # Edge ids are UUIDs
            return [(-negated, pid, pid >> 64) for negated, pid in ranked]
        parented = sorted([(-float(sp.score), sp.id.int, (sp.payload or {}).get("parent_id")) for sp in found])[:depth]  # type: ignore[union-attr]
        return [(-negated, pid, parent if parent is not None else pid) for negated, pid, parent in parented]

    def _grouped(self, candidates, k: int, depth: int, flt: qe.Filter | None) -> list[StoredHit]:
        """Best child of each of up to k parents, in score order (Edge has no group-by).

        ``candidates(depth)`` gives (score, point id, parent id) triples carrying only the
        parent id; full payloads are fetched for the k winners alone (a parent's text can be
        kilobytes, candidates are hundreds). Deeper rounds only append lower ranks, so parents
        found in an earlier round keep their order. Equal scores are ordered by id throughout.
        """
        if self._shard is None or k <= 0:
            return []
        total: int | None = None  # counted only when a round comes back short: counting is not free
        best: dict[int | str, tuple[float, int]] = {}
        for _ in range(_MAX_ROUNDS):
            best = {}
            for score, pid, parent in candidates(depth):
                if parent not in best or (-score, pid) < (-best[parent][0], best[parent][1]):
                    best[parent] = (score, pid)
            if len(best) >= k:
                break
            if total is None:
                total = self.count() if flt is None else int(self._shard.count(qe.CountRequest(filter=flt)))
            if depth >= total:
                break
            depth *= _DEEPEN_FACTOR
        ranked = sorted(best.values(), key=lambda c: -c[0])
        # Parents tied with the k-th are fetched too: equal scores rank by parent id, which
        # a store whose candidates carry only a parent key (see ``_ranked``) reads here.
        cut = ranked[k - 1][0] if len(ranked) >= k else None
        chosen = [c for n, c in enumerate(ranked) if n < k or c[0] == cut]
        ids = [str(uuid.UUID(int=pid)) for _, pid in chosen]
        records = {str(r.id): r for r in self._shard.retrieve([*ids], with_payload=True, with_vector=False)}
        hits = [
            StoredHit(id=pid, score=score, payload=_given_payload(records[pid].payload))
            for (score, _), pid in zip(chosen, ids)
            if pid in records
        ]
        return sorted(hits, key=lambda h: (-h.score, str(h.payload.get("parent_id", h.id))))[:k]


def _records_config() -> qe.EdgeConfig:
    # The records hold no vectors, but Edge wants one declared: a sparse vector no record has.
    return qe.EdgeConfig(sparse_vectors={"none": qe.EdgeSparseVectorParams()}, max_search_threads=1)


def _doc_condition(doc_ids: Sequence[str]) -> qe.FieldCondition:
    return qe.FieldCondition(key="doc_id", match=qe.MatchAny(list(doc_ids)))


def _doc_filter(doc_ids: Sequence[str]) -> qe.Filter:
    return qe.Filter(must=[_doc_condition(doc_ids)])


def _search_filter(doc_ids: Sequence[str] | None, unit_kind: str | None, statements: Sequence[str] | None = None) -> qe.Filter | None:
    """The documents, the kind of unit and the statements a search keeps; None keeps every point."""
    must: list[qe.ConditionType] = [] if doc_ids is None else [_doc_condition(doc_ids)]
    if unit_kind is not None:
        must.append(qe.FieldCondition(key="unit_kind", match=qe.MatchValue(unit_kind)))
    if statements is not None:
        must.append(qe.FieldCondition(key="statement", match=qe.MatchAny(list(statements))))
    return qe.Filter(must=must) if must else None


def _given_payload(payload: dict | None) -> dict:
    """The payload as the pipeline gave it: without the store's own ``doc_points``."""
    return {k: v for k, v in (payload or {}).items() if k != DOC_POINTS}


def _to_edge_point(p: Point, doc_points: int) -> qe.Point:
    # Payload conversion in the binding is most of an upsert's CPU time, yet each point carries
    # its whole payload: setting the fields a parent's children share once per parent
    # (set_payload) or the version stamp once per document (set_payload_by_filter) costs more
    # inside the shard than it saves.
    return qe.Point(
        p.id,
        {DENSE_VECTOR: p.dense, SPARSE_VECTOR: qe.SparseVector(p.sparse.indices, p.sparse.values)},
        {**p.payload, DOC_POINTS: doc_points},
    )


def _tied_past(found: list[Any], depth: int, limit: int) -> bool:
    """Whether a fetch of ``limit`` points may have left out some tied with the ``depth``-th best:
    it came back full and its last point scores as the ``depth``-th (Edge returns best first)."""
    if depth < 1 or len(found) < limit or len(found) <= depth:
        return False
    return float(found[-1].score) >= float(found[depth - 1].score)
