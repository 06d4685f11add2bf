"""Is a document's index stale? One answer for the CLI, the runner, the sensor and the schedule.

A document's index is fresh when what was last indexed for it (its content hash and
pipeline version, read from the store or from the run history) equals what a run would
write now. Each caller knows a different part of that: the store (``ingest``), the
latest materializations (schedule, sensor), or only the file's content (the sensor,
which leaves code and model changes to the schedule). They all ask ``document_state``.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from evidence_pipeline.records import sha256_file
from evidence_pipeline.store.base import DocumentVersion, Store


class DocumentState(str, Enum):
    """Why a document needs (or does not need) ingesting; the value is what logs print."""

    FRESH = "fresh"
    NEVER_INDEXED = "never indexed"
    CONTENT_CHANGED = "content"
    VERSION_CHANGED = "version"
    MISSING_FROM_STORE = "missing from store"

    @property
    def stale(self) -> bool:
        return self is not DocumentState.FRESH


def document_state(
    content_hash: str,
    indexed: DocumentVersion | None,
    current_version: str | None,
    *,
    store_holds: bool | None = None,
) -> DocumentState:
    """Compare the file's ``content_hash`` and the ``current_version`` a run would record
    with what was last ``indexed`` (None: nothing was).

    ``current_version=None`` compares content only (a caller that does not know the
    version). ``store_holds=False`` says the store no longer holds the indexed content
    although the run history says it was written (a wiped or replaced store).
    """
    if indexed is None:
        return DocumentState.NEVER_INDEXED
    if indexed.content_hash != content_hash:
        return DocumentState.CONTENT_CHANGED
    if current_version is not None and indexed.pipeline_version != current_version:
        return DocumentState.VERSION_CHANGED
    if store_holds is False:
        return DocumentState.MISSING_FROM_STORE
    return DocumentState.FRESH


def stored_state(store: Store, doc_id: str, path: str | Path, current_version: str) -> DocumentState:
    """The state of the file at ``path`` against what ``store`` holds for ``doc_id``."""
    return document_state(sha256_file(str(path)), store.document_version(doc_id), current_version)
