from evidence_pipeline.records import SearchHit
from evidence_pipeline.retrieval import context_texts, pack, render_context, to_hit
from evidence_pipeline.store.base import StoredHit
from evidence_pipeline.units import approx_tokens, build_units
from evidence_pipeline_tests.docs import lnp_doc


def _hits():
    units = build_units(lnp_doc())
    hits = []
    for n, unit in enumerate(units):
        hits.append(
            SearchHit(
                parent_id=unit.parent_id, unit_id=unit.unit_id, score=1.0 / (n + 1), doc_id=unit.doc_id, doc_title=unit.doc_title,
                pages=unit.pages, section_path=unit.section_path, caption=unit.caption, unit_kind=unit.kind,
                matched_text="x", parent_text=unit.text,
            )
        )
    return hits


def test_shared_document_and_section_header_rendered_once():
    table, sec_a, sec_b = _hits()
    twin = sec_a.model_copy(update={"parent_id": "other", "parent_text": sec_a.parent_text + "\nmore"})
    texts = context_texts([sec_a, twin, table])
    assert texts[0] == sec_a.parent_text
    assert not texts[1].startswith("Document:") and texts[1].endswith("more")
    assert texts[2] == table.parent_text  # another section: its header stays
    assert render_context([sec_a, twin]).count("Document: SOP-8812") == 1


def test_pack_keeps_rank_order_within_budget():
    hits = _hits()
    sizes = [approx_tokens(t) for t in context_texts(hits)]
    assert pack(hits, sizes[0] + sizes[1], approx_tokens) == hits[:2]
    assert pack(hits, 1, approx_tokens) == hits[:1]
    assert pack(hits, 10**6, approx_tokens) == hits


def test_to_hit_maps_payload():
    payload = {"parent_id": "p", "unit_id": "p-s1", "child_id": "p-s1-c0", "doc_id": "d", "doc_title": "T", "pages": [3],
               "section_path": ["1 A"], "caption": "Table 1: x", "unit_kind": "table", "child_kind": "row", "text": "row",
               "parent_text": "parent", "content_hash": "h", "pipeline_version": "v"}
    hit = to_hit(StoredHit(id="i", score=0.5, payload=payload))
    assert (hit.parent_id, hit.unit_id, hit.pages, hit.matched_text, hit.parent_text) == ("p", "p-s1", [3], "row", "parent")


def test_named_identifiers():
    from evidence_pipeline.retrieval import named_identifiers

    assert named_identifiers("Under SOP-QA-007, how many units? See also ISO-9001 and SOP-QA-007.") == ["SOP-QA-007", "ISO-9001"]
    assert named_identifiers("What is the maximum flow rate in mL/min at 2.4 bar?") == []


def test_rrf_merge_lifts_parents_in_both_rankings():
    from evidence_pipeline.retrieval import rrf_merge

    def h(parent):
        return StoredHit(id=parent, score=0.0, payload={"parent_id": parent})

    merged = rrf_merge([[h("a"), h("b"), h("c")], [h("c")]], k=3)
    assert [m.payload["parent_id"] for m in merged] == ["c", "a", "b"]
    assert merged[0].score == 1 / 63 + 1 / 61
