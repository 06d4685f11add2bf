"""Settings read from the environment, as small explicit option objects.

Their variables (each default is on the field that the variable sets):

- paths: ``EVIDENCE_DATA_DIR`` (``./data``), ``EVIDENCE_CORPUS_DIR`` (the folder the sensor
  scans), ``EVIDENCE_STORE_PATH`` (the embedded Qdrant Edge store), ``EVIDENCE_MODEL_CACHE``
  (exported ONNX models), the last three under the data folder unless set;
- store: ``QDRANT_URL`` / ``QDRANT_API_KEY`` (a Qdrant server instead of the embedded store),
  ``EVIDENCE_COLLECTION``, ``EVIDENCE_STORE_LOCK_TIMEOUT_S``, ``EVIDENCE_STORE_UPSERT_BATCH``,
  ``EVIDENCE_STORE_KEEP_OPEN``, ``EVIDENCE_STORE_INDEX_THRESHOLD``, ``EVIDENCE_STORE_HNSW_EF``;
- embedding: ``EVIDENCE_EMBEDDING_MODEL`` (sentence-transformers name or local path; unset, the
  packaged all-MiniLM-L6-v2), ``EVIDENCE_EMBED_BACKEND`` (``EmbedBackend``),
  ``EVIDENCE_CHILD_VECTORS``, ``EVIDENCE_EMBED_THREADS``;
- parsing: ``EVIDENCE_DOCLING_ARTIFACTS`` (Docling's layout and TableFormer weights: when set,
  Docling's own ML models parse instead of the built-in weight-free ones),
  ``EVIDENCE_PARSE_ISOLATION`` (``process``: a worker process, so a crash or a limit fails that
  document alone; or ``inline``), ``EVIDENCE_OCR`` (``auto``: pages without a usable text layer
  are read by OCR; or ``off``) and the per-document limits ``EVIDENCE_PARSE_MAX_PAGES``,
  ``..._TIMEOUT_S``, ``..._MAX_MEMORY_MB``, ``..._MAX_CELL_CHARS``, ``..._MAX_TABLE_COLS``.
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
    def from_env(cls) -> StoreSettings:
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


EmbedBackend = Literal["onnx-int8-token", "onnx"]
EMBED_BACKENDS: tuple[str, ...] = get_args(EmbedBackend)
# The two a user chooses between (``benchmark.embedding_backends`` measures both against raw
# fp32 sentence-transformers): ``onnx-int8-token``, the default, int8 with one activation scale
# per token (embedding_quant), so a text's vector is the same alone and in any batch, and a
# one-file ingest, a backfill and a query give the same vectors for the same text
# (``test_embedding_quant``); and ``onnx``, fp32, torch's own vectors at lower speed. Where an
# ONNX model cannot be exported or run, sentence-transformers on torch runs it instead
# (``Embedder``, with one line on stderr); torch is no choice of its own, its vectors being
# ``onnx``'s. The dynamic int8 variants (one activation scale per batch) were dropped: their
# vectors moved with the batch, for no speed over ``onnx-int8-token``.
DEFAULT_EMBED_BACKEND: EmbedBackend = "onnx-int8-token"

# How a child's vector is made from its location prefix and its text (``Embedder.embed_children``):
# ``mixed`` embeds the two apart and averages them by word pieces (each distinct prefix once);
# ``joint`` embeds ``prefix\ntext`` as one text, the prefix again with every child.
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
    batch_size: int = 32  # texts per batch for torch; the ONNX backends use embedding_onnx.BATCH_SIZE
    backend: EmbedBackend = DEFAULT_EMBED_BACKEND
    cache_dir: str | None = None
    child_vectors: ChildVectors = "mixed"
    # Batches run at once, each on one core; None: every core, less the one a parser process
    # holds while it parses beside the embedding (``embedding.share_cores_with_parser``).
    threads: int | None = Field(None, ge=1)

    @classmethod
    def from_env(cls) -> EmbeddingSettings:
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
    def from_env(cls) -> ParserSettings:
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
