"""The stored documents' source files, for the service to show: found by doc_id in the store
only, served only while the file still has the content hash its points were built from, a
PDF's pages rendered to PNG with pdfium.

A request names a document by its id; the path is the ``source`` its points carry (the file
ingest read), never anything the request says. Every refusal is a ``SourceRefused`` with
the HTTP status the service answers.
"""

from __future__ import annotations

import io
import mimetypes
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from evidence_pipeline.records import sha256_file
from evidence_pipeline.store import Store
from evidence_pipeline.store.base import DOCUMENT_FIELDS, documents_of

PAGE_WIDTH_PX = 1000
"""Width of a rendered page: enough to read a table row, small enough to load at once."""
MAX_SCALE = 3.0  # pixels per PDF point, for pages narrower than PAGE_WIDTH_PX / 3 points
PAGE_CACHE = 64  # rendered pages kept in memory (a page is ~100-300 kB)

_PDFIUM = threading.Lock()  # pdfium is not thread-safe; the service answers requests in threads


class SourceRefused(Exception):
    """Why a document's file or page is not served, with the HTTP status to answer."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class SourceFile(NamedTuple):
    """A document's file as the store recorded it and as it is on disk now (same hash)."""

    doc_id: str
    path: Path
    content_hash: str

    @property
    def is_pdf(self) -> bool:
        return self.path.suffix.lower() == ".pdf"

    @property
    def media_type(self) -> str:
        return mimetypes.guess_type(self.path.name)[0] or "application/octet-stream"


def recorded_source(store: Store, doc_id: str) -> SourceFile:
    """The file ``doc_id``'s points name (``source``, as ingest read it: a relative path is
    taken from the service's working directory) with the content hash they carry.

    404: no point has that doc_id. 409: the points name no file (ingested before sources were
    recorded) or disagree on the hash (an interrupted replace)."""
    found = documents_of(iter(store.payloads("doc_id", doc_id, DOCUMENT_FIELDS)))
    if not found:
        raise SourceRefused(404, f"no document {doc_id!r} in the store")
    info = found[0]
    if not info.source:
        raise SourceRefused(409, f"{doc_id}: the store does not record the file it was ingested from; ingest it again")
    if not info.content_hash:
        raise SourceRefused(409, f"{doc_id}: its points disagree on the content hash (an interrupted ingest); ingest it again")
    return SourceFile(doc_id, Path(info.source), info.content_hash)


def on_disk(source: SourceFile) -> SourceFile:
    """``source`` when the file is there with the recorded content hash; 409 when it is gone or changed."""
    if not source.path.is_file():
        raise SourceRefused(409, f"{source.doc_id}: the file it was ingested from is gone ({source.path.name}); ingest it again")
    if file_hash(source.path) != source.content_hash:
        raise SourceRefused(409, f"{source.doc_id}: {source.path.name} changed since it was ingested (SHA-256 differs); ingest it again")
    return source


def file_hash(path: Path) -> str:
    """SHA-256 of the file, hashed again only when its size, mtime or inode changed."""
    st = os.stat(path)
    return _hash_of(str(path), st.st_size, st.st_mtime_ns, st.st_ino)


@lru_cache(maxsize=256)
def _hash_of(path: str, size: int, mtime_ns: int, inode: int) -> str:
    return sha256_file(path)


def page_png(source: SourceFile, page: int) -> bytes:
    """Page ``page`` (1-based) of a PDF as PNG, ``PAGE_WIDTH_PX`` wide (at most ``MAX_SCALE``
    pixels per point). 415: not a PDF (no pages, no geometry); 404: no such page."""
    if not source.is_pdf:
        raise SourceRefused(415, f"{source.doc_id}: {source.path.suffix or 'the file'} has no pages: no page geometry to show")
    return _render(str(source.path), source.content_hash, page)


@lru_cache(maxsize=PAGE_CACHE)
def _render(path: str, content_hash: str, page: int) -> bytes:
    """Keyed by the content hash too: a file replaced under the same path renders anew."""
    import pypdfium2 as pdfium

    out = io.BytesIO()
    with _PDFIUM:
        pdf = pdfium.PdfDocument(path)
        try:
            if not 1 <= page <= len(pdf):
                raise SourceRefused(404, f"no page {page}: the document has {len(pdf)} pages")
            pdf_page = pdf[page - 1]
            scale = min(PAGE_WIDTH_PX / pdf_page.get_width(), MAX_SCALE)
            # Encoded before the document closes: the image shares the bitmap's memory.
            pdf_page.render(scale=scale).to_pil().save(out, format="PNG")
        finally:
            pdf.close()
    return out.getvalue()
