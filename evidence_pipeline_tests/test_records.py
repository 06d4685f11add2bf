"""Records: the point payload that writers and readers share, and the text head they share."""

import pytest
from pydantic import ValidationError

from evidence_pipeline.bm25_query import TOKENIZER_VERSION
from evidence_pipeline.embedding import token_counter
from evidence_pipeline.payload import DocumentStamp, PointPayload
from evidence_pipeline.pipeline import PipelineOptions, card_of, prepare
from evidence_pipeline.records import SearchHit, document_head
from evidence_pipeline.retrieval import context_texts, to_hit
from evidence_pipeline.store.base import StoredHit

MD = """# Storage of reagents

## 3 Limits

Keep the cold room closed. Record every excursion.

Table 2: Storage limits

| Item | Min | Max |
|---|---|---|
| Temperature (C) | 2 | 8 |
| Humidity (%) | 30 | 60 |

Values outside these limits are deviations.

Table 3: Alarm delays

| Alarm | Delay (min) |
|---|---|
| Door open | 5 |
| Power loss | 1 |
"""

# The payload layout. Removing, renaming or adding a key must change this test, and only this one:
# every writer builds a PointPayload and every reader parses one.
PAYLOAD_KEYS = {
    "doc_id",
    "doc_title",
    "content_hash",
    "pipeline_version",
    "bm25_tokenizer",  # the document's stamp
    "doc_type",
    "organisation",
    "names",
    "tickers",
    "period_end",
    "period_months",  # its card
    "fiscal_year",
    "fiscal_quarter",
    "identifiers",
    "parent_id",
    "unit_id",
    "child_id",
    "parent_text",
    "pages",
    "section_path",
    "caption",
    "statement",
    "unit_kind",
    "child_kind",
    "text",
    "source",  # the file it was read from
    "boxes",
    "row_box",  # where it is printed
}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    from evidence_pipeline.parser import DoclingParser

    path = tmp_path_factory.mktemp("records") / "storage-limits.md"
    path.write_text(MD)
    doc = DoclingParser().parse(path)
    units, children = prepare(doc, token_counter(None), PipelineOptions())
    return doc, units, children


def test_payload_keys_are_the_layout():
    assert set(PointPayload.model_fields) == PAYLOAD_KEYS
    assert set(DocumentStamp.model_fields) < PAYLOAD_KEYS
    # Everything a search hit shows comes from the payload (score, matched_text, focus and context are added per query).
    assert set(SearchHit.model_fields) - {"score", "matched_text", "focus", "context"} <= PAYLOAD_KEYS  # made per query


def test_payload_of_a_table_row_round_trips(prepared):
    doc, units, children = prepared
    table = next(u for u in units if u.kind == "table")
    row = next(c for c in children if c.unit_id == table.unit_id and c.kind == "row")
    payload = PointPayload.for_child(DocumentStamp.of(doc, "v1", card_of(units)), table, row)

    stored = payload.model_dump()
    assert set(stored) == PAYLOAD_KEYS
    assert PointPayload.model_validate(stored) == payload
    assert stored["doc_id"] == "storage-limits" and stored["content_hash"] == doc.content_hash
    assert stored["caption"] == "Table 2: Storage limits" and stored["unit_kind"] == "table"
    assert stored["statement"] is None  # no financial statement
    assert stored["child_kind"] == "row" and "Temperature (C)" in stored["text"]
    assert stored["parent_text"] == table.text and stored["section_path"][-1] == "3 Limits"


# Optional on purpose: points written before the key existed read as None (unknown tokenizer;
# no statement known: stores of pipeline version 19 and before, read until they are re-ingested).
OPTIONAL_KEYS = {"bm25_tokenizer", "statement", "source", "boxes", "row_box"}


def test_a_payload_without_the_tokenizer_version_reads_as_unknown(prepared):
    doc, units, children = prepared
    unit = next(u for u in units if u.unit_id == children[0].unit_id)
    stored = PointPayload.for_child(DocumentStamp.of(doc, "v1"), unit, children[0]).model_dump()
    assert stored["bm25_tokenizer"] == TOKENIZER_VERSION
    del stored["bm25_tokenizer"]
    assert PointPayload.model_validate(stored).bm25_tokenizer is None


def test_a_markdown_payload_says_it_has_no_page_geometry(prepared):
    doc, units, children = prepared
    table = next(u for u in units if u.kind == "table")
    row = next(c for c in children if c.unit_id == table.unit_id and c.kind == "row")
    stored = PointPayload.for_child(DocumentStamp.of(doc, "v1"), table, row).model_dump()
    assert stored["boxes"] == [] and stored["row_box"] is None
    assert stored["source"] == doc.source and doc.page_sizes == {}
    for key in ("boxes", "row_box", "source"):  # points written before the fields existed
        del stored[key]
    hit = PointPayload.model_validate(stored).search_hit(1.0)
    assert hit.boxes == [] and hit.row_box is None


def test_a_payload_written_before_statements_reads_as_none(prepared):
    doc, units, children = prepared
    unit = next(u for u in units if u.unit_id == children[0].unit_id)
    stored = PointPayload.for_child(DocumentStamp.of(doc, "v1"), unit, children[0]).model_dump()
    del stored["statement"]
    assert PointPayload.model_validate(stored).statement is None


@pytest.mark.parametrize("key", sorted(PAYLOAD_KEYS - OPTIONAL_KEYS))
def test_a_payload_missing_any_key_is_rejected_where_it_is_read(prepared, key):
    doc, units, children = prepared
    unit = next(u for u in units if u.unit_id == children[0].unit_id)
    stored = PointPayload.for_child(DocumentStamp.of(doc, "v1", card_of(units)), unit, children[0]).model_dump()
    del stored[key]
    with pytest.raises(ValidationError, match=key):
        to_hit(StoredHit(id="x", score=1.0, payload=stored))


def test_search_drops_the_head_the_unit_text_opens_with(prepared):
    doc, units, children = prepared
    stamp = DocumentStamp.of(doc, "v1", card_of(units))
    by_unit = {u.unit_id: u for u in units}
    # Two parents of one document and section: the second is shown without the shared head.
    same_section = [u for u in units if u.section_path == units[-1].section_path]
    assert len(same_section) >= 2, [u.section_path for u in units]
    hits = []
    for unit in same_section[:2]:
        child = next(c for c in children if c.unit_id == unit.unit_id)
        hits.append(
            to_hit(
                StoredHit(id=child.child_id, score=1.0, payload=PointPayload.for_child(stamp, by_unit[unit.unit_id], child).model_dump())
            )
        )
    head = "\n".join(document_head(doc.doc_id, stamp.doc_title, same_section[0].section_path)) + "\n"
    assert all(h.parent_text.startswith(head) for h in hits)
    first, second = context_texts(hits)
    assert first == hits[0].parent_text and second == hits[1].parent_text[len(head) :]


def test_bbox_overlaps_and_gap():
    from evidence_pipeline.records import BBox

    a, b = BBox(l=0, t=0, r=10, b=20), BBox(l=6, t=15, r=30, b=40)
    assert (a.h_overlap(b), a.v_overlap(b)) == (4, 5) == (b.h_overlap(a), b.v_overlap(a))
    far = BBox(l=50, t=30, r=60, b=35)
    assert (a.h_overlap(far), a.v_overlap(far)) == (0, 0)
    assert a.vertical_gap(far) == 10
