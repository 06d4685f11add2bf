"""Flat chunks for the baselines: fixed token windows over a document's full text, and
plain BM25 over those windows.

The full text is the parsed document in reading order, page headers and footers
left out (as the evidence units leave them out), each table written row by row
with cells joined by `` | `` -- the plain-text form a naive chunker sees. Every
character remembers its page, so a window knows the pages it covers.

``Bm25Windows`` is the naive lexical baseline: ``rank_bm25.BM25Okapi`` with its
defaults over the same windows that ``fixed512`` embeds, with the simplest tokenizer
(``bm25_tokens``). On documents full of identifiers and figures it is the bar a
retrieval system must clear.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rank_bm25 import BM25Okapi

from evidence_pipeline.evaluation.metrics import TokenSpans
from evidence_pipeline.records import FURNITURE_LABELS, ParsedDoc, Table


@dataclass(frozen=True)
class FlatChunk:
    """One chunk of a flat (non parent-child) system; the chunk is its own context."""

    chunk_id: str
    doc_id: str
    text: str
    pages: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Segment:
    start: int
    end: int
    pages: tuple[int, ...]


def _table_text(table: Table, captions: set[str], notes: set[str]) -> str:
    lines = []
    if table.caption and table.caption.strip() not in captions:
        lines.append(table.caption.strip())
    lines += [" | ".join(cell.strip() for cell in row) for row in table.grid()]
    lines += [f.strip() for f in table.footnotes if f.strip() not in notes]
    return "\n".join(lines)


def full_text(doc: ParsedDoc) -> tuple[str, list[Segment]]:
    """The document as one string in reading order, with the page span of each item."""
    # A caption or footnote the parser linked to a table usually also exists as a block:
    # write it once, where the block stands.
    captions = {b.text.strip() for b in doc.blocks if b.label == "caption"}
    notes = {b.text.strip() for b in doc.blocks if b.label == "footnote"}
    parts: list[str] = []
    segments: list[Segment] = []
    pos = 0
    for item in doc.items():
        if isinstance(item, Table):
            text = _table_text(item, captions, notes)
            pages = tuple(item.pages or ([item.page] if item.page is not None else []))
        else:
            if item.label in FURNITURE_LABELS:
                continue
            text = item.text.strip()
            pages = (item.page,) if item.page is not None else ()
        if not text:
            continue
        if parts:
            pos += 2  # the "\n\n" joining items
        segments.append(Segment(pos, pos + len(text), pages))
        parts.append(text)
        pos += len(text)
    return "\n\n".join(parts), segments


def pages_between(segments: list[Segment], start: int, end: int) -> list[int]:
    return sorted({p for s in segments if s.start < end and s.end > start for p in s.pages})


def fixed_windows(doc: ParsedDoc, token_spans: TokenSpans, size: int = 512, overlap: int = 64) -> list[FlatChunk]:
    """Windows of ``size`` tokens that start every ``size - overlap`` tokens; the last may be shorter."""
    if not 0 <= overlap < size:
        raise ValueError(f"overlap {overlap} must be in [0, {size})")
    text, segments = full_text(doc)
    spans = token_spans(text)
    chunks: list[FlatChunk] = []
    start = 0
    while start < len(spans):
        end = min(start + size, len(spans))
        lo, hi = spans[start][0], spans[end - 1][1]
        chunks.append(
            FlatChunk(
                chunk_id=f"{doc.doc_id}-w{len(chunks)}",
                doc_id=doc.doc_id,
                text=text[lo:hi],
                pages=pages_between(segments, lo, hi),
            )
        )
        if end == len(spans):
            break
        start += size - overlap
    return chunks


_WORD = re.compile(r"\w+")


def bm25_tokens(text: str) -> list[str]:
    """Lower-cased word tokens: the runs of letters, digits and underscores of ``text.lower()``.

    Nothing more, on purpose: no stop words, no stemming, no compound identifiers, so
    ``SOP-QA-070`` is ``sop``, ``qa``, ``070`` and ``2.4*`` is ``2``, ``4``. The pipeline's own
    tokenizer (``sparse.tokenize``) is what this baseline is measured against.
    """
    return _WORD.findall(text.lower())


class Bm25Windows:
    """BM25Okapi (k1 1.5, b 0.75, epsilon 0.25: rank-bm25's defaults) over flat chunks.

    The index is built on the first search after chunks were added (BM25's statistics
    cover the whole collection). Ties in score go to the chunk of the document whose id
    sorts first, then to the earlier window of that document, so a ranking never
    depends on the order in which documents were added.
    """

    def __init__(self) -> None:
        self._chunks: list[FlatChunk] = []
        self._position: list[int] = []  # index of each chunk within its document's chunks
        self._bm25: BM25Okapi | None = None

    def __len__(self) -> int:
        return len(self._chunks)

    def add(self, chunks: Sequence[FlatChunk]) -> None:
        """Add one document's chunks, in their order in the document."""
        self._chunks += chunks
        self._position += range(len(chunks))
        self._bm25 = None

    def search(self, query: str, k: int) -> list[FlatChunk]:
        """The ``k`` best chunks for ``query``, best first."""
        if not self._chunks:
            return []
        if self._bm25 is None:
            self._bm25 = BM25Okapi([bm25_tokens(c.text) for c in self._chunks])
        scores = self._bm25.get_scores(bm25_tokens(query))
        order = sorted(range(len(self._chunks)), key=lambda i: (-float(scores[i]), self._chunks[i].doc_id, self._position[i]))
        return [self._chunks[i] for i in order[:k]]
