"""The BM25 tokenizer of the ``bm25`` sparse vectors, as one self-contained file (standard
library only): an application copies it and builds query vectors with ``query_vector(text)``;
the pipeline tokenizes documents and queries with it too (``sparse``), so the two cannot drift.

``TOKENIZER_VERSION`` names this exact tokenization and every point stores it (payload
``bm25_tokenizer``): a copy whose version differs must be refreshed. Any change to the output
of ``tokenize`` or ``token_index`` must change the version (and so re-ingest every document).

Rules, on the NFKC-normalised, case-folded text: 1. words are runs of letters and digits
(``_`` separates), stopwords dropped (numbers never), plurals stripped; 2. compound identifiers
are kept whole besides their parts (``sop-qa-070``, ``3.5``, ``iso-9001:2015``, ``1,000``);
3. bracketed references add ``usp<85>`` for ``USP <85>``, ``<2.6.14>`` for a bare one;
4. a run of Hangul syllables gives itself and its character bigrams (``유량은`` shares ``유량``
with ``유량``); rules 2 and 3 read the text with its Hangul taken out.

A token's index is the first 8 bytes of its unkeyed BLAKE2b digest (UTF-8), big-endian, masked
to 31 bits. A query vector has value 1.0 per distinct index, indices sorted; the collection's
``Modifier.IDF`` supplies the IDF, so its dot product with a document's stored term-frequency
weights is BM25.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

TOKENIZER_VERSION = "ep-bm25-2"

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

# Hangul syllables (NFKC composes conjoining jamo into them).
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+")
_HANGUL_SPLIT = re.compile(r"[\uac00-\ud7a3]+|[^\uac00-\ud7a3]+")

_HASH_MASK = 0x7FFFFFFF


def _fold(text: str) -> str:
    # The tokenizer owns its normalisation: a change elsewhere cannot move its indices.
    return unicodedata.normalize("NFKC", text).casefold()


def light_stem(word: str) -> str:
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


def hangul_tokens(run: str) -> list[str]:
    """A run of Hangul syllables, then its character bigrams (a one-syllable run: itself).

    Korean attaches particles and endings to the stem (``유량은``, ``유량의``, ``유량이``): the
    bigrams of the stem are shared by every form of it, without a dictionary; the whole run
    rewards the exact form."""
    if len(run) == 1:
        return [run]
    return [run] + [run[i : i + 2] for i in range(len(run) - 1)]


def _word_tokens(word: str) -> list[str]:
    if not _HANGUL_RUN.search(word):
        return [] if word in STOPWORDS else [light_stem(word)]
    out: list[str] = []
    for part in _HANGUL_SPLIT.findall(word):
        out.extend(hangul_tokens(part) if _HANGUL_RUN.match(part) else _word_tokens(part))
    return out


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` in order of appearance: words (Hangul runs as bigrams), then compound
    identifiers, then bracketed references (rules 1-4 of the module docstring).

    ``SOP-QA-070`` and ``SOP-QA-007`` (or ``USP <85>`` and ``USP <87>``) then differ by a
    rare token, not only by a number that occurs everywhere.
    """
    norm = _fold(text)
    tokens = [token for word in _WORD.findall(norm) for token in _word_tokens(word)]
    ids = _HANGUL_RUN.sub(" ", norm)
    tokens.extend(_COMPOUND.findall(ids))
    for name, ref in _BRACKETED.findall(ids):
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
