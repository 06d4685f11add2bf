"""BM25 sparse vectors: one tokenizer for documents and queries, stable token ids.

The document side carries only BM25's term-frequency part
``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))``; the IDF part comes
from the store (Qdrant's ``Modifier.IDF`` counts document frequencies over the
collection), so a document's vector never has to change when the corpus grows.
A query vector is 1.0 per unique token, so the Qdrant dot product is exactly
sum over query terms of idf * tf-part, i.e. BM25.

Tokens are mapped to indices with an unkeyed blake2b hash truncated to
31 bits: the same token gets the same index in every process and release
(Python's ``hash`` is salted per process and cannot be used).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

from evidence_pipeline.store.base import SparseVector
from evidence_pipeline.text import fold

# Small English list: words that carry no evidence on their own. Numbers are never dropped.
STOPWORDS: frozenset[str] = frozenset(
    """a an and are as at be been but by can could did do does for from had has have
    how i if in into is it its may might must of on or our shall should so such than
    that the their them then there these they this those to was we were what when where
    which while who whom why will with would you your""".split()
)

_WORD = re.compile(r"[^\W_]+")
# Identifier-like runs: alphanumeric parts joined by -, ., /, _ or : with no space
# (SOP-QA-070, 3.5, 21/CFR, ISO-9001:2015, lot_A12); commas only between digits (1,000).
_COMPOUND = re.compile(r"[^\W_]+(?:(?:[-./_:]|(?<=\d),(?=\d))[^\W_]+)+")
# Bracketed references such as USP <85>, USP<87>, EP <2.6.14>: keep the name and the number together.
_BRACKETED = re.compile(r"([^\W_]+)?\s*<\s*([^\W_]+(?:[-./][^\W_]+)*)\s*>")

_HASH_MASK = 0x7FFFFFFF


def _light_stem(word: str) -> str:
    """Plural strip only (tables -> table, batches -> batch, studies -> study)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` in order of appearance: words, then the compound identifiers.

    Word tokens are split on non-alphanumerics, stopwords dropped (not numbers),
    plurals stripped. Compound tokens keep identifiers matchable as one unit:
    ``SOP-QA-070`` adds ``sop-qa-070`` and ``USP <85>`` adds ``usp<85>``, so that
    ``SOP-QA-070`` and ``SOP-QA-007`` (or ``USP <85>`` and ``USP <87>``) differ by
    a rare token, not only by a number that occurs everywhere.
    """
    norm = fold(text)
    tokens: list[str] = []
    for word in _WORD.findall(norm):
        if word in STOPWORDS:
            continue
        tokens.append(_light_stem(word))
    tokens.extend(_COMPOUND.findall(norm))
    for name, ref in _BRACKETED.findall(norm):
        tokens.append(f"{name}<{ref}>" if name else f"<{ref}>")
    return tokens


def token_index(token: str) -> int:
    """Stable 31-bit index of a token (the same in every process)."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & _HASH_MASK


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
        tf = Counter(token_index(t) for t in tokens)
        norm = self.k1 * (1.0 - self.b + self.b * len(tokens) / self.avg_len)
        indices = sorted(tf)
        values = [tf[i] * (self.k1 + 1.0) / (tf[i] + norm) for i in indices]
        return SparseVector(indices=indices, values=values)

    def encode_query(self, text: str) -> SparseVector:
        indices = sorted({token_index(t) for t in tokenize(text)})
        return SparseVector(indices=indices, values=[1.0] * len(indices))
