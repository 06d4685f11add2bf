"""Look a parent up by its id: the whole text an application reads once search named it.

A parent is a table or a section chunk. A table too long for one parent was split into
pieces that share its ``parent_id`` (see ``splitting``); search returns the piece that
matched, this lookup returns every piece, in order, as one text.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from evidence_pipeline.context import render_context
from evidence_pipeline.payload import PointPayload
from evidence_pipeline.records import PageBox, Record, UnitKind
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.splitting import piece_number
from evidence_pipeline.store import reading_store
from evidence_pipeline.store.base import StoredHit


class ParentRecord(Record):
    parent_id: str
    doc_id: str
    doc_title: str
    pages: list[int] = Field(description="1-based pages of all its pieces")
    section_path: list[str]
    caption: str | None
    unit_kind: UnitKind
    unit_ids: list[str] = Field(description="its evidence units: one, or one per piece of a split table")
    boxes: list[PageBox] = Field(default_factory=list, description="where its pieces are printed, in order; [] without page geometry")
    text: str = Field(description="what the language model reads: every piece, shared headers once")


def parent_record(points: Sequence[StoredHit]) -> ParentRecord | None:
    """One parent from ``Store.parent``'s points (one per unit); None for no point."""
    hits = [PointPayload.model_validate(p.payload).search_hit(p.score) for p in points]
    if not hits:
        return None
    hits.sort(key=lambda h: (piece_number(h.unit_id, h.parent_id), h.unit_id))
    first = hits[0]
    return ParentRecord(
        parent_id=first.parent_id,
        doc_id=first.doc_id,
        doc_title=first.doc_title,
        pages=sorted({p for h in hits for p in h.pages}),
        section_path=first.section_path,
        caption=first.caption,
        unit_kind=first.unit_kind,
        unit_ids=[h.unit_id for h in hits],
        boxes=[b for h in hits for b in h.boxes],
        text=render_context(hits),
    )


def get_parent(parent_id: str, store_settings: StoreSettings | None = None) -> ParentRecord | None:
    """The parent named ``parent_id`` (a ``SearchHit.parent_id``), or None when the store has none.
    Reads the store as search does (kept open for the next read)."""
    with reading_store(store_settings or StoreSettings.from_env()) as store:
        return parent_record(store.parent(parent_id))
