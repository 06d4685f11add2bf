"""Stage 4, group and expand: each ranked parent as one ``SearchHit`` with the text to read.

The store has grouped the children by parent (one stored hit per parent, its best child). A
hit on a piece of a split table comes back with the whole table when it fits
``WHOLE_TABLE_TOKENS``, else with the piece that matched and the pieces that hold a term of
the query (``whole_table``); any other hit comes back as stored (``to_hit``).
"""

from __future__ import annotations

from collections.abc import Sequence

from evidence_pipeline.context import context_texts
from evidence_pipeline.payload import PointPayload
from evidence_pipeline.records import SearchHit
from evidence_pipeline.retrieval.query import Query, read_query
from evidence_pipeline.splitting import piece_number
from evidence_pipeline.store.base import Store, StoredHit
from evidence_pipeline.units import approx_tokens

WHOLE_TABLE_TOKENS = 6000
"""A split table comes back whole when all its pieces together fit this many word pieces
(estimated, ``units.approx_tokens``); above it, the piece that matched plus the pieces that
hold a term of the query (``Query.key_terms``: an identifier or a figure such as "FT-2070"),
in order, to this size. The piece that matched alone is often not the one holding the asked
row: its caption and header match as well as the row does, and every piece repeats them."""


def to_hit(stored: StoredHit) -> SearchHit:
    """A stored point as a search hit (its payload validated), with the stored score."""
    return PointPayload.model_validate(stored.payload).search_hit(stored.score)


def whole_table(store: Store, hit: StoredHit, query: Query | str, max_tokens: int = WHOLE_TABLE_TOKENS) -> StoredHit:
    """``hit`` with the text of its whole split table, or of the pieces that matter (see
    ``WHOLE_TABLE_TOKENS``); a hit that is not a piece of a split table comes back as is."""
    payload = hit.payload
    if payload.get("unit_id") == payload.get("parent_id") or max_tokens <= 0:
        return hit
    pieces = sorted(store.parent(payload["parent_id"]), key=lambda p: piece_number(p.payload["unit_id"], p.payload["parent_id"]))
    if len(pieces) < 2:
        return hit
    texts = context_texts([to_hit(p) for p in pieces])
    sizes = [approx_tokens(t) for t in texts]
    if sum(sizes) > max_tokens:
        if isinstance(query, str):
            query = read_query(query)
        lowered = [p.payload.get("parent_text", "").lower() for p in pieces]
        # a term every piece holds (the document's id in each head) picks no row
        terms = [t for t in (t.lower() for t in query.key_terms) if not all(t in text for text in lowered)]
        wanted = [p.payload["unit_id"] == payload["unit_id"] or any(t in text for t in terms) for p, text in zip(pieces, lowered)]
        keep: list[int] = []
        used = 0
        for n in sorted(range(len(pieces)), key=lambda n: (pieces[n].payload["unit_id"] != payload["unit_id"], n)):
            if wanted[n] and (not keep or used + sizes[n] <= max_tokens):
                keep.append(n)
                used += sizes[n]
        if len(keep) < 2:
            return hit
        pieces = [pieces[n] for n in sorted(keep)]
        texts = context_texts([to_hit(p) for p in pieces])
    pages = sorted({page for p in pieces for page in p.payload.get("pages", [])})
    merged = {**payload, "parent_text": "\n\n".join(texts), "pages": pages}
    return hit.model_copy(update={"payload": merged})


def expand(store: Store, hits: Sequence[StoredHit], query: Query, whole_table_tokens: int = WHOLE_TABLE_TOKENS) -> list[SearchHit]:
    """``hits`` in order as search hits, each split table joined (``whole_table``)."""
    return [to_hit(whole_table(store, s, query, whole_table_tokens)) for s in hits]
