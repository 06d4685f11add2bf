"""Copy every document of one store into another, e.g. the embedded store to a Qdrant server.

Scaling out starts here: runs on several machines cannot share an Edge directory, so the
index already built moves to a server collection once, and the runs write there after.
The copy goes document by document through the ``Store`` interface (``iter_points`` +
``replace_document``): memory holds one document's points, and running it again leaves
the target the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evidence_pipeline.errors import StoreError
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import Point, Store, point_id


@dataclass
class CopyResult:
    documents: int
    points: int


def _id_of(point: Point) -> str:
    payload = point.payload
    if not all(isinstance(payload.get(k), str) for k in ("doc_id", "child_id", "parent_id")):
        return point.id
    return point_id(payload["doc_id"], payload["child_id"], payload["parent_id"])


def copy_store(source: Store, target: Store) -> CopyResult:
    """Every document of ``source`` into ``target``, with the ingest time the source records for
    it (``DocumentInfo.ingested_at``; the time of the copy where the source has none)."""
    documents = points = 0
    for info in source.documents():
        doc_id = info.doc_id
        batch = list(source.iter_points(doc_id))
        if not batch:
            continue
        target.ensure_collection(len(batch[0].dense))
        # ids made again from the payload: a store made before ids carried their parent
        # (``base.point_id``) copies into one that groups by them
        batch = [p.model_copy(update={"id": _id_of(p)}) for p in batch]
        target.replace_document(doc_id, batch, ingested_at=info.ingested_at)
        documents += 1
        points += len(batch)
    return CopyResult(documents=documents, points=points)


def copy_store_settings(source: StoreSettings, target: StoreSettings) -> CopyResult:
    """Open both stores from their settings (``url`` set -> server, else Edge) and copy.

    A missing or empty source is a StoreError, not "copied 0 documents": the path was
    most likely wrong.
    """
    if not source.url and not Path(source.path).is_dir():
        raise StoreError(f"{source.location}: no such store folder")
    with open_store(source) as src:
        if src.count() == 0:
            raise StoreError(f"nothing to copy: the store at {source.location} holds no points")
        with open_store(target) as dst:
            return copy_store(src, dst)
