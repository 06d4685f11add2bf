"""The BM25 tokenizer of the ``bm25`` sparse vectors, as one self-contained file.

An application that queries the collection with its own Qdrant client copies this file
(standard library only; it imports nothing from ``evidence_pipeline``) and builds the
sparse query vector with ``query_vector(text)``. The pipeline itself tokenizes documents
and queries with the functions here (``evidence_pipeline.sparse``), so the two cannot drift.

``TOKENIZER_VERSION`` names this exact tokenization. Every point stores the version it was
indexed with in its payload (``bm25_tokenizer``): an application compares it with the
version of its copy, and a mismatch means the copy must be refreshed. Any change to the
output of ``tokenize`` or ``token_index`` must change the version (and re-ingests every
document, because the pipeline version includes it).

The rules, in order, on the NFKC-normalised, case-folded text:

1. words: runs of letters and digits (``_`` separates); English stopwords dropped (numbers
   never); plurals stripped (tables -> table, batches -> batch, studies -> study);
2. compound identifiers, kept whole besides their parts: alphanumeric parts joined by
   ``- . / _ :`` with no space, commas only between digits (``sop-qa-070``, ``3.5``,
   ``iso-9001:2015``, ``1,000``);
3. bracketed references: ``USP <85>`` adds ``usp<85>``, a bare ``<2.6.14>`` adds ``<2.6.14>``.

A token's index is the first 8 bytes of its unkeyed BLAKE2b digest (UTF-8), big-endian,
masked to 31 bits. A query vector has value 1.0 per distinct index, indices sorted; the
collection's ``Modifier.IDF`` supplies the IDF, so the dot product with a document's
stored term-frequency weights is BM25.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

TOKENIZER_VERSION = "ep-bm25-1"

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


def _fold(text: str) -> str:
    # The tokenizer owns its normalisation: a change elsewhere cannot move its indices.
    return unicodedata.normalize("NFKC", text).casefold()


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
    """Tokens of ``text`` in order of appearance: words, then compound identifiers, then
    bracketed references (rules 1-3 of the module docstring).

    ``SOP-QA-070`` and ``SOP-QA-007`` (or ``USP <85>`` and ``USP <87>``) then differ by a
    rare token, not only by a number that occurs everywhere.
    """
    norm = _fold(text)
    tokens = [_light_stem(word) for word in _WORD.findall(norm) if word not in STOPWORDS]
    tokens.extend(_COMPOUND.findall(norm))
    for name, ref in _BRACKETED.findall(norm):
        tokens.append(f"{name}<{ref}>" if name else f"<{ref}>")
    return tokens


def token_index(token: str) -> int:
    """Stable 31-bit index of a token (the same in every process and release)."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & _HASH_MASK


def query_vector(text: str) -> tuple[list[int], list[float]]:
    """``(indices, values)`` of the sparse query vector for the ``bm25`` named vector."""
    indices = sorted({token_index(t) for t in tokenize(text)})
    return indices, [1.0] * len(indices)


if __name__ == "__main__":
    import json
    import sys

    indices, values = query_vector(" ".join(sys.argv[1:]))
    print(json.dumps({"version": TOKENIZER_VERSION, "indices": indices, "values": values}))
