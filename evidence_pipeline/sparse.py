"""BM25 sparse vectors: one tokenizer for documents and queries, stable token ids.

The document side carries only BM25's term-frequency part
``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))``; the IDF part comes
from the store (Qdrant's ``Modifier.IDF`` counts document frequencies over the
collection), so a document's vector never has to change when the corpus grows.
A query vector is 1.0 per unique token, so the Qdrant dot product is exactly
sum over query terms of idf * tf-part, i.e. BM25.

The tokenizer and the token ids live in ``bm25_query``, a self-contained file that
applications copy to build query vectors without this package. Tokens are mapped to
indices with an unkeyed blake2b hash truncated to 31 bits: the same token gets the same
index in every process and release (Python's ``hash`` is salted per process).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from evidence_pipeline.bm25_query import STOPWORDS, TOKENIZER_VERSION, query_vector, token_index, tokenize

__all__ = ["STOPWORDS", "TOKENIZER_VERSION", "SparseEncoder", "SparseVector", "token_index", "tokenize"]


class SparseVector(BaseModel):
    """A sparse vector: token indices (sorted, distinct) and their weights."""

    model_config = ConfigDict(frozen=True)

    indices: list[int]
    values: list[float]


# A document repeats its words thousands of times: each word's hash is computed once per process.
_cached_index = lru_cache(maxsize=1 << 17)(token_index)


class SparseEncoder:
    """BM25 sparse vectors for Qdrant's IDF modifier.

    ``avg_len`` is the expected length of a child in tokens. Children are short
    (a table row sentence, a paragraph, a body sentence), so the default is 40,
    not Qdrant's 256 that is meant for whole documents.
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75, avg_len: float = 40.0):
        if k1 < 0 or not 0.0 <= b <= 1.0 or avg_len <= 0:
            raise ValueError(f"invalid BM25 parameters k1={k1} b={b} avg_len={avg_len}")
        self.k1 = k1
        self.b = b
        self.avg_len = avg_len

    def encode_document(self, text: str) -> SparseVector:
        tokens = tokenize(text)
        # Count per index, not per token: a hash collision merges two tokens' counts
        # instead of sending a duplicate index, which Qdrant rejects.
        tf = Counter(map(_cached_index, tokens))
        norm = self.k1 * (1.0 - self.b + self.b * len(tokens) / self.avg_len)
        indices = sorted(tf)
        values = [tf[i] * (self.k1 + 1.0) / (tf[i] + norm) for i in indices]
        return SparseVector(indices=indices, values=values)

    def encode_query(self, text: str) -> SparseVector:
        indices, values = query_vector(text)
        return SparseVector(indices=indices, values=values)
