"""What a store holds, as a value two stores can be compared by.

Used to show that an ingest that was interrupted (kill -9) and run again, or that ran
while other processes searched, leaves exactly the store an undisturbed ingest leaves:
the same point ids, nothing stale, nothing missing, the same payloads (wherever the files
were read from).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from evidence_pipeline.store.base import Point, Store

# Payload keys that say where the bytes were read from, not what they hold: the same file read
# from another folder gives the same units, ids and vectors.
LOCATION_KEYS = frozenset({"source"})


def point_hash(point: Point) -> str:
    """SHA-256 of a point's payload (but for ``LOCATION_KEYS``) and BM25 vector.

    The dense vector is left out: the same text embedded in another batch can differ in
    the last bits of its floats, and the payload already holds the text it was made from.
    """
    payload = {k: v for k, v in point.payload.items() if k not in LOCATION_KEYS}
    content = {"payload": payload, "bm25": [point.sparse.indices, point.sparse.values]}
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def store_fingerprint(store: Store, doc_ids: Iterable[str] | None = None) -> dict[str, str]:
    """point id -> ``point_hash``, over every document of the store or those of ``doc_ids``."""
    docs = sorted(store.document_hashes()) if doc_ids is None else sorted(doc_ids)
    return {p.id: point_hash(p) for doc_id in docs for p in store.iter_points(doc_id)}


def fingerprint_difference(got: dict[str, str], want: dict[str, str]) -> str:
    """One line saying how two fingerprints differ ("" when they are equal)."""
    missing = len(want.keys() - got.keys())
    extra = len(got.keys() - want.keys())
    changed = sum(got[k] != want[k] for k in got.keys() & want.keys())
    if not (missing or extra or changed):
        return ""
    return f"{missing} points missing, {extra} extra (stale or other ids), {changed} with other content, of {len(want)}"
