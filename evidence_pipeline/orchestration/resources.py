"""Dagster resources: thin, configurable handles on the core's parser, embedder and store."""


from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator, Optional

import dagster as dg

from evidence_pipeline.embedding import Embedder, TokenCounter, token_counter
from evidence_pipeline.settings import EmbeddingSettings, ParserSettings, StoreSettings, corpus_dir


@lru_cache(maxsize=4)
def _parser(settings: ParserSettings):
    # One converter per process: building Docling's pipeline is the expensive part.
    from evidence_pipeline.parser import DoclingParser

    return DoclingParser(settings)


class ParserResource(dg.ConfigurableResource):
    """Parses documents with Docling. Set ``docling_artifacts`` to use Docling's own ML models."""

    docling_artifacts: Optional[str] = None

    @property
    def settings(self) -> ParserSettings:
        return ParserSettings(docling_artifacts=self.docling_artifacts)

    def parser(self):
        return _parser(self.settings)

    @classmethod
    def from_env(cls) -> "ParserResource":
        return cls(docling_artifacts=ParserSettings.from_env().docling_artifacts)


class EmbedderResource(dg.ConfigurableResource):
    """Sentence-transformers model (default: the packaged all-MiniLM-L6-v2), loaded once per process."""

    model: Optional[str] = None
    batch_size: int = 32

    @property
    def settings(self) -> EmbeddingSettings:
        return EmbeddingSettings(model=self.model, batch_size=self.batch_size)

    def embedder(self) -> Embedder:
        return Embedder(self.settings)

    def counter(self) -> TokenCounter:
        return token_counter(self.model)

    @classmethod
    def from_env(cls) -> "EmbedderResource":
        return cls(model=EmbeddingSettings.from_env().model)


class StoreResource(dg.ConfigurableResource):
    """Qdrant: embedded (Qdrant Edge at ``path``) or a server when ``url`` is set.

    The embedded store admits one process at a time; another one waits up to
    ``lock_timeout_s`` seconds for its turn."""

    path: str = "data/store"
    url: Optional[str] = None
    api_key: Optional[str] = None
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
    def open(self, lock_timeout_s: Optional[float] = None) -> Iterator:
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
        return cls(
            path=s.path,
            url=s.url,
            api_key=s.api_key,
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


def current_pipeline_version(parser: ParserResource, embedder: EmbedderResource) -> str:
    """The ``pipeline_version`` a run would record now (cheap: no model is loaded)."""
    from evidence_pipeline.pipeline import PipelineOptions

    return PipelineOptions().version(parser.parser().name, embedder.embedder().model_id)
