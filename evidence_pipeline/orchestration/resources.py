"""Dagster resources: thin, configurable handles on the core's parser, embedder and store."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg
from pydantic import BaseModel, Field, create_model

from evidence_pipeline.embedding import Embedder, TokenCounter, token_counter
from evidence_pipeline.pipeline import PipelineOptions
from evidence_pipeline.settings import DEFAULT_EMBED_BACKEND, EmbeddingSettings, ParserSettings, StoreSettings, corpus_dir


def _parser(settings: ParserSettings):
    # One parser per process and settings: Docling's pipeline (in its worker) is built once.
    from evidence_pipeline.parser import shared_parser

    return shared_parser(settings)


_PARSER_DEFAULTS = ParserSettings()


class ParserResource(dg.ConfigurableResource):
    """Parses documents with Docling, in a worker process with limits per document (or ``inline``).

    Set ``docling_artifacts`` to use Docling's own ML models."""

    docling_artifacts: str | None = None
    isolation: str = _PARSER_DEFAULTS.isolation
    max_pages: int = _PARSER_DEFAULTS.max_pages
    timeout_s: float = _PARSER_DEFAULTS.timeout_s
    max_memory_mb: int = _PARSER_DEFAULTS.max_memory_mb
    max_cell_chars: int = _PARSER_DEFAULTS.max_cell_chars
    max_table_cols: int = _PARSER_DEFAULTS.max_table_cols
    ocr: str = _PARSER_DEFAULTS.ocr  # "auto": pages without a usable text layer are read by OCR; "off"

    @property
    def settings(self) -> ParserSettings:
        return ParserSettings(**{name: getattr(self, name) for name in ParserSettings.model_fields})

    def parser(self):
        return _parser(self.settings)

    @classmethod
    def from_env(cls) -> "ParserResource":
        return cls(**ParserSettings.from_env().model_dump())


class EmbedderResource(dg.ConfigurableResource):
    """The embedding model (default: the packaged all-MiniLM-L6-v2) and what runs it
    (``backend``: one of ``settings.EMBED_BACKENDS``; see settings), loaded once per process;
    ``child_vectors``: how a child's vector is made of its prefix and text (``settings.CHILD_VECTORS``)."""

    model: str | None = None
    batch_size: int = 32
    backend: str = DEFAULT_EMBED_BACKEND
    child_vectors: str = "mixed"
    threads: int | None = None

    @property
    def settings(self) -> EmbeddingSettings:
        return EmbeddingSettings(
            model=self.model, batch_size=self.batch_size, backend=self.backend, child_vectors=self.child_vectors, threads=self.threads
        )

    def embedder(self) -> Embedder:
        return Embedder(self.settings)

    def counter(self) -> TokenCounter:
        return token_counter(self.model)

    @classmethod
    def from_env(cls) -> "EmbedderResource":
        settings = EmbeddingSettings.from_env()
        return cls(model=settings.model, backend=settings.backend, child_vectors=settings.child_vectors, threads=settings.threads)


class StoreResource(dg.ConfigurableResource):
    """Qdrant: embedded (Qdrant Edge at ``path``) or a server when ``url`` is set.

    ``from_env`` passes the API key as ``EnvVar("QDRANT_API_KEY")``: Dagster then shows the
    variable's name, never its value, in the UI and in run records.

    The embedded store admits one process at a time; another one waits up to
    ``lock_timeout_s`` seconds for its turn."""

    path: str = "data/store"
    url: str | None = None
    api_key: str | None = None
    collection: str = "evidence"
    lock_timeout_s: float = 60.0
    upsert_batch: int = 1024

    @property
    def settings(self) -> StoreSettings:
        return StoreSettings(
            path=self.path,
            url=self.url,
            api_key=self.api_key,
            collection=self.collection,
            lock_timeout_s=self.lock_timeout_s,
            upsert_batch=self.upsert_batch,
        )

    @contextmanager
    def open(self, lock_timeout_s: float | None = None) -> Iterator:
        """The store is held only inside this block, so other processes can use it between runs.
        ``lock_timeout_s`` overrides how long to wait for a busy embedded store (0: do not wait)."""
        from evidence_pipeline.store import open_store

        settings = self.settings
        if lock_timeout_s is not None:
            settings = settings.model_copy(update={"lock_timeout_s": lock_timeout_s})
        with open_store(settings) as store:
            yield store

    @classmethod
    def from_env(cls) -> "StoreResource":
        s = StoreSettings.from_env()
        api_key = dg.EnvVar("QDRANT_API_KEY") if s.api_key is not None else None
        return cls(
            path=s.path,
            url=s.url,
            api_key=api_key,
            collection=s.collection,
            lock_timeout_s=s.lock_timeout_s,
            upsert_batch=s.upsert_batch,
        )


class CorpusResource(dg.ConfigurableResource):
    """The folder the sensor scans and where partition keys are resolved to files."""

    root: str = "data/corpus"

    @classmethod
    def from_env(cls) -> "CorpusResource":
        return cls(root=str(corpus_dir()))


def _config_fields(model: type[BaseModel]) -> dict[str, Any]:
    """``create_model`` field specs mirroring ``model``: a nested model becomes a nested
    ``dg.Config``, every default is the core's. So an option added to the core's
    ``PipelineOptions``/``UnitOptions`` appears in the Dagster config by itself."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            nested = create_model(f"{kind.__name__}Config", __base__=dg.Config, __doc__=kind.__doc__, **_config_fields(kind))
            fields[name] = (nested, Field(default_factory=nested, description=info.description))
        else:
            fields[name] = (kind, Field(default=info.default, description=info.description))
    return fields


class _PipelineOptionsBase(dg.ConfigurableResource):
    def options(self) -> PipelineOptions:
        return PipelineOptions.model_validate(self.model_dump())


# How documents become units (``pipeline.PipelineOptions``), configurable per run from the
# launchpad or run config: ``resources: {pipeline_options: {config: {units: {...}}}}``.
# The options are part of the pipeline version, so changing them makes the schedule re-ingest.
PipelineOptionsResource: type[_PipelineOptionsBase] = create_model(  # type: ignore[call-overload]
    "PipelineOptionsResource",
    __base__=_PipelineOptionsBase,
    __doc__="Unit and split options of the pipeline (defaults: the core's PipelineOptions).",
    **_config_fields(PipelineOptions),
)


def current_pipeline_version(parser: ParserResource, embedder: EmbedderResource, options: _PipelineOptionsBase) -> str:
    """The ``pipeline_version`` a run would record now (the embedding model is not loaded)."""
    return options.options().version(parser.parser().name, embedder.embedder().vectors_id)
