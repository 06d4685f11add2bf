"""The systems of FORMAT.md, built from the same parsed documents and the same model.

- ``fixed512``: 512-token windows (64 overlap) of the embedding tokenizer over the
  full text; dense retrieval; the chunk is the context.
- ``bm25_windows``: the same windows, plain BM25 (``rank_bm25``, ``baselines.Bm25Windows``);
  the window is the context. No store and no embedding.
- ``hybridchunker``: Docling's HybridChunker (its defaults, local tokenizer) over the
  DoclingDocument of the same conversion; ``contextualize(chunk)`` is embedded and is
  the context; dense retrieval.
- ``eu_dense``: evidence units and children exactly as the pipeline builds them;
  dense retrieval, one hit per parent, the parent's text is the context.
- ``full``: the same points, hybrid dense + BM25 with RRF (``retrieval.search_store``).

Each system but ``bm25_windows`` lives in its own temporary Edge store. Flat chunks longer
than the model's 256-piece window are embedded truncated, as those baselines do in practice.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evidence_pipeline.embedding import Embedder, TokenCounter
from evidence_pipeline.evaluation.baselines import Bm25Windows, FlatChunk, fixed_windows
from evidence_pipeline.evaluation.metrics import K_MAX, Context, score_question
from evidence_pipeline.evaluation.questions import Question
from evidence_pipeline.payload import DocumentStamp, PointPayload
from evidence_pipeline.pipeline import PipelineOptions, document_points, prepare, sparse_vectors, write_points
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.retrieval import search_store
from evidence_pipeline.retrieval.rules import ALL_RULES, Rules
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings
from evidence_pipeline.sparse import SparseEncoder
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import Point, Store, point_id

SYSTEMS = ("fixed512", "bm25_windows", "hybridchunker", "eu_dense", "full")
DENSE_ONLY = {"fixed512": True, "hybridchunker": True, "eu_dense": True, "full": False}  # the store-backed systems
WINDOWED = {"fixed512", "bm25_windows"}  # built from ``fixed_windows``
BASELINE_VERSION = "baseline"

# Wraps a loop to show progress: ``wrap(iterable, description)`` (a tqdm bar in the CLI).
Wrap = Callable[[Sequence[Any], str], Any]


def no_progress(items: Sequence[Any], _description: str) -> Sequence[Any]:
    return items


@dataclass
class EvalDoc:
    """A parsed document and, for the HybridChunker baseline, Docling's own document."""

    parsed: ParsedDoc
    docling: Any | None = None


@dataclass
class Answer:
    """What one system returned for one question, and its scores."""

    contexts: list[Context]
    scores: dict[str, float | None]


@dataclass
class SystemRun:
    name: str
    n_chunks: int = 0
    answers: list[Answer] = field(default_factory=list)
    ablated: dict[str, list[Answer]] = field(default_factory=dict)
    """For ``full`` under ``eval --ablate``: the answers with each ranking rule off, by rule."""


class QueryCachingEmbedder(Embedder):
    """Embeds each question once although several systems ask it (queries are the bulk of the work).

    With ``cache`` (``evaluation.cache.EmbeddingCache``) document texts are looked up on disk
    first and only the texts it lacks are embedded, in one call.
    """

    def __init__(self, settings: EmbeddingSettings = EmbeddingSettings(), cache: Any | None = None):
        super().__init__(settings)
        self._queries: dict[str, np.ndarray] = {}
        self._cache = cache

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._cache is None or not texts:
            return super().embed(texts)
        keys = [self._cache.key(t) for t in texts]
        found = self._cache.get_many(list(dict.fromkeys(keys)))
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in found))
        if missing:
            fresh = dict(zip((self._cache.key(t) for t in missing), super().embed(missing)))
            self._cache.put_many(fresh)
            found.update(fresh)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self._queries:
            self._queries[text] = super().embed_query(text)
        return self._queries[text]


class Tokenizer:
    """The embedding model's tokenizer: counts and character spans of word pieces."""

    def __init__(self, counter: TokenCounter):
        from transformers import AutoTokenizer

        self.counter = counter
        self._fast = AutoTokenizer.from_pretrained(counter.model_path)
        self._counts: dict[str, int] = {}

    def spans(self, text: str) -> list[tuple[int, int]]:
        enc = self._fast(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [tuple(s) for s in enc["offset_mapping"]]

    def count(self, text: str) -> int:
        n = self._counts.get(text)
        if n is None:
            n = self._counts[text] = self.counter.count(text)
        return n


def flat_points(chunks: Sequence[FlatChunk], embedder: Embedder, doc: ParsedDoc) -> list[Point]:
    """One point per chunk; the chunk is its own parent, so search returns it as the context."""
    dense = embedder.embed([c.text for c in chunks])
    encoder = SparseEncoder()
    stamp = DocumentStamp.of(doc, BASELINE_VERSION)
    return [
        Point(
            id=point_id(c.doc_id, c.chunk_id, c.chunk_id),
            dense=vec.tolist(),
            sparse=encoder.encode_document(c.text),
            payload=PointPayload(
                **stamp.model_dump(),
                parent_id=c.chunk_id,
                unit_id=c.chunk_id,
                child_id=c.chunk_id,
                parent_text=c.text,
                pages=c.pages,
                section_path=[],
                caption=None,
                unit_kind="section",
                child_kind="sentence",
                text=c.text,
            ).model_dump(),
        )
        for c, vec in zip(chunks, dense)
    ]


def unit_points(doc: ParsedDoc, embedder: Embedder, counter: TokenCounter, options: PipelineOptions) -> list[Point]:
    """The pipeline's points for ``doc`` (``pipeline.ingest_parsed`` minus the write)."""
    units, children = prepare(doc, counter, options)
    dense = embedder.embed_children(children)
    version = options.version(doc.parser, embedder.vectors_id)
    return document_points(doc, units, children, dense, sparse_vectors(children), version)


def hybrid_chunks(doc: EvalDoc, model_dir: str) -> list[FlatChunk]:
    from evidence_pipeline.parser.baseline_chunks import hybrid_chunk_texts

    if doc.docling is None:
        raise ValueError(f"{doc.parsed.doc_id}: the hybridchunker baseline needs the DoclingDocument")
    return [
        FlatChunk(chunk_id=f"{doc.parsed.doc_id}-h{i}", doc_id=doc.parsed.doc_id, text=text, pages=pages)
        for i, (text, pages) in enumerate(hybrid_chunk_texts(doc.docling, model_dir))
    ]


@contextlib.contextmanager
def built_systems(
    docs: Sequence[EvalDoc],
    systems: Sequence[str],
    embedder: Embedder,
    tokenizer: Tokenizer,
    workdir: Path,
    *,
    options: PipelineOptions = PipelineOptions(),
    wrap: Wrap = no_progress,
) -> Iterator[dict[str, tuple[Store, SystemRun]]]:
    """Open one fresh store per system under ``workdir`` and index every document into each."""
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        raise ValueError(f"unknown systems {unknown}; choose from {list(SYSTEMS)}")
    counter = tokenizer.counter
    with contextlib.ExitStack() as stack:
        opened: dict[str, tuple[Store | Bm25Windows, SystemRun]] = {}
        for name in systems:
            if name == "bm25_windows":
                opened[name] = (Bm25Windows(), SystemRun(name))
                continue
            store = stack.enter_context(open_store(StoreSettings(path=str(workdir / name))))
            store.ensure_collection(embedder.dim)
            opened[name] = (store, SystemRun(name))
        for doc in wrap(docs, "index"):
            parsed = doc.parsed
            # eu_dense and full index the same points: embed once, write into both stores.
            eu = unit_points(parsed, embedder, counter, options) if {"eu_dense", "full"} & set(systems) else []
            windows = fixed_windows(parsed, tokenizer.spans) if WINDOWED & set(systems) else []
            for name in systems:
                if name == "bm25_windows":
                    index, run = opened[name]
                    index.add(windows)
                    run.n_chunks += len(windows)
                    continue
                if name == "fixed512":
                    points = flat_points(windows, embedder, parsed)
                elif name == "hybridchunker":
                    points = flat_points(hybrid_chunks(doc, counter.model_path), embedder, parsed)
                else:
                    points = eu
                store, run = opened[name]
                write_points(store, parsed.doc_id, points)
                run.n_chunks += len(points)
        yield opened


def answer(
    index: Store | Bm25Windows, system: str, question: Question, embedder: Embedder, tokenizer: Tokenizer, rules: Rules = ALL_RULES
) -> Answer:
    if isinstance(index, Bm25Windows):
        found = [(c.text, c.doc_id, c.pages) for c in index.search(question.question, K_MAX)]
    else:
        hits = search_store(index, embedder, question.question, k=K_MAX, dense_only=DENSE_ONLY[system], rules=rules)
        found = [(h.context_text, h.doc_id, h.pages) for h in hits]
    contexts = [Context(text=text, doc_id=doc_id, pages=tuple(pages), n_tokens=tokenizer.count(text)) for text, doc_id, pages in found]
    return Answer(contexts, score_question(question, contexts, tokenizer.spans))


def run_systems(
    docs: Sequence[EvalDoc],
    questions: Sequence[Question],
    systems: Sequence[str] = SYSTEMS,
    *,
    embedder: Embedder | None = None,
    counter: TokenCounter | None = None,
    options: PipelineOptions = PipelineOptions(),
    wrap: Wrap = no_progress,
    ablate: Sequence[str] = (),
) -> dict[str, SystemRun]:
    """Index ``docs`` into every system, ask every question of each, score the contexts; ask
    ``full`` again with each rule of ``ablate`` off (``SystemRun.ablated``)."""
    embedder = embedder or QueryCachingEmbedder()
    counter = counter or TokenCounter(None)
    tokenizer = Tokenizer(counter)
    with tempfile.TemporaryDirectory(prefix="evidence-eval-") as tmp:
        with built_systems(docs, systems, embedder, tokenizer, Path(tmp), options=options, wrap=wrap) as opened:
            for question in wrap(questions, "questions"):
                for name in systems:
                    store, run = opened[name]
                    run.answers.append(answer(store, name, question, embedder, tokenizer))
                    for rule in ablate if name == "full" else ():
                        off = ALL_RULES.without(rule)
                        run.ablated.setdefault(rule, []).append(answer(store, name, question, embedder, tokenizer, off))
            return {name: run for name, (_, run) in opened.items()}
