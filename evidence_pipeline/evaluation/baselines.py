"""Flat chunks for the baselines: fixed token windows over a document's full text.

The full text is the parsed document in reading order, page headers and footers
left out (as the evidence units leave them out), each table written row by row
with cells joined by `` | `` -- the plain-text form a naive chunker sees. Every
character remembers its page, so a window knows the pages it covers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


def fixed_windows(
    doc: ParsedDoc, token_spans: TokenSpans, size: int = 512, overlap: int = 64
) -> list[FlatChunk]:
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
