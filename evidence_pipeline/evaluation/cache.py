"""A disk cache for repeated evaluations: parsed documents and embeddings.

An ``eval`` over long filings spends its time parsing and embedding the same documents
again. With ``eval --cache DIR`` both are kept:

- a parsed document under ``DIR/parsed/<parser>-v<PIPELINE_VERSION>/<sha256 of the file>.json``
  (and Docling's own document beside it when the HybridChunker baseline needs it): the key is
  the file's bytes, the parser's name and the pipeline version (bumped with the parser's
  rules), so a new parser, new rules or a changed file parses again;
- an embedding per (model, text) in ``DIR/embeddings.sqlite``: a changed unit re-embeds
  only its changed children.

Figures do not depend on the cache: a text always gets the vector its first embedding gave.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evidence_pipeline.records import ParsedDoc


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", name)


class ParseCache:
    def __init__(self, root: Path, parser_name: str):
        self.folder = Path(root) / "parsed" / _safe(parser_name)

    def _paths(self, content_hash: str) -> tuple[Path, Path]:
        return self.folder / f"{content_hash}.json", self.folder / f"{content_hash}.docling.json"

    def get(self, content_hash: str, doc_id: str, *, with_docling: bool) -> tuple[ParsedDoc, str | None] | None:
        parsed, docling = self._paths(content_hash)
        if not parsed.is_file() or (with_docling and not docling.is_file()):
            return None
        doc = ParsedDoc.model_validate_json(parsed.read_text(encoding="utf-8"))
        # The same bytes under another file name: the id follows the file, not the cache.
        doc = doc if doc.doc_id == doc_id else doc.model_copy(update={"doc_id": doc_id})
        return doc, docling.read_text(encoding="utf-8") if with_docling else None

    def put(self, doc: ParsedDoc, docling_json: str | None) -> None:
        parsed, docling = self._paths(doc.content_hash)
        self.folder.mkdir(parents=True, exist_ok=True)
        if docling_json is not None:
            _write(docling, docling_json)
        _write(parsed, doc.model_dump_json())


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # a killed run never leaves half a file under the real name


class EmbeddingCache:
    """Vectors by (model id, SHA-1 of the text), in one SQLite file."""

    def __init__(self, root: Path, model_id: str):
        Path(root).mkdir(parents=True, exist_ok=True)
        self.model_id = model_id
        self._db = sqlite3.connect(str(Path(root) / "embeddings.sqlite"), check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, vector BLOB, PRIMARY KEY (model, key))")
        self._lock = threading.Lock()

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                rows = self._db.execute(
                    f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({','.join('?' * len(chunk))})",
                    [self.model_id, *chunk],
                )
                found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR IGNORE INTO vectors (model, key, vector) VALUES (?, ?, ?)",
                [(self.model_id, k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
            )

    def close(self) -> None:
        self._db.close()
