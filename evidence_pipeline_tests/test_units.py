from evidence_pipeline.records import Table
from evidence_pipeline.units import build_units, is_table_caption, UnitOptions
from evidence_pipeline_tests.docs import lnp_doc


def _table(units):
    [unit] = [u for u in units if u.kind == "table"]
    return unit


def test_table_unit_gathers_caption_section_warning_footnote():
    unit = _table(build_units(lnp_doc()))
    assert unit.unit_id == "SOP-8812-p2-0"
    assert unit.parent_id == unit.unit_id
    assert unit.caption == "Table 1: Pump flow rate limits"
    assert unit.caption_source == "direct"
    assert unit.section_path == ["3 Procedure", "3.1 Critical process parameters"]
    assert unit.context_before == ["WARNING: If processing lipid nanoparticles, confirm the cooling jacket is active."]
    assert unit.context_after == ["Record the flow rates in the batch record."]
    assert unit.footnotes == ["* Only with the high-pressure manifold installed."]
    assert unit.pages == [2]


def test_row_sentences_join_two_level_headers():
    unit = _table(build_units(lnp_doc()))
    assert unit.column_paths == ["Stream", "Flow rate (mL/min) / Min", "Flow rate (mL/min) / Max", "Pressure (bar) / Min", "Pressure (bar) / Max"]
    assert unit.row_sentences[0] == (
        "Aqueous Phase 1 | Flow rate (mL/min) / Min: 0.6; Flow rate (mL/min) / Max: 1.8; "
        "Pressure (bar) / Min: 1.1; Pressure (bar) / Max: 2.4*"
    )


def test_text_views_html_only_for_llm():
    unit = _table(build_units(lnp_doc()))
    assert '<th colspan="2">Flow rate (mL/min)</th>' in unit.text
    assert "cooling jacket" in unit.text and "1.8" in unit.text
    assert "<table>" not in unit.retrieval_text
    assert "Aqueous Phase 1 | Flow rate (mL/min) / Min: 0.6" in unit.retrieval_text


def test_retrieval_units_carry_parent_and_prefix():
    unit = _table(build_units(lnp_doc()))
    children = unit.retrieval_units
    kinds = [c.kind for c in children]
    assert kinds == ["summary", "context", "row", "row", "footnote", "context"]
    assert all(c.parent_id == unit.unit_id for c in children)
    assert all(c.prefix.startswith("SOP-8812 Lipid Nanoparticle Formulation | 3 Procedure > 3.1") for c in children)
    assert all(c.prefix.endswith("Table 1: Pump flow rate limits") for c in children)
    assert len({c.child_id for c in children}) == len(children)


def test_section_chunks_exclude_table_context_and_furniture():
    units = build_units(lnp_doc())
    sections = [u for u in units if u.kind == "section"]
    bodies = [p for u in sections for p in u.body]
    assert "Prepare the mixer as described below. Check the seals." in bodies
    assert "The particle size must be 80 to 100 nm. Polydispersity must be below 0.2." in bodies
    assert not any("cooling jacket" in p or "Record the flow rates" in p or "Page 2 of 3" in p for p in bodies)
    assert [u.section_path for u in sections] == [["3 Procedure"], ["4 Acceptance criteria"]]
    children = sections[1].retrieval_units
    assert [c.text for c in children] == ["The particle size must be 80 to 100 nm.", "Polydispersity must be below 0.2."]


def test_caption_inferred_from_neighbouring_block_when_not_linked():
    doc = lnp_doc()
    table = doc.tables[0].model_copy(update={"caption": None})
    unit = _table(build_units(doc.model_copy(update={"tables": [table]})))
    assert unit.caption == "Table 1: Pump flow rate limits"
    assert unit.caption_source == "inferred"


def test_context_beyond_distance_is_left_out():
    unit = _table(build_units(lnp_doc(), UnitOptions(context_distance=5)))
    # The warning is directly above: it is kept whatever the distance; the paragraph after is not.
    assert unit.context_before[0].startswith("WARNING")
    assert unit.context_after == []


def test_figure_captions_are_not_table_captions():
    assert is_table_caption("Table 3 – Buffer compositions")
    assert is_table_caption("TABLE 3. Buffer")
    assert not is_table_caption("Figure 1: Mixer schematic")
    assert not is_table_caption("Tablets must be stored dry.")


def test_continuation_table_merges_rows_and_pages():
    doc = lnp_doc()
    first = doc.tables[0]
    cont = first.model_copy(update={"id": "t1", "order": 7, "page": 3, "pages": [3], "caption": None, "continues": "t0", "footnotes": []})
    blocks = [b.model_copy(update={"order": b.order + 1}) if b.order >= 7 else b for b in doc.blocks]
    units = build_units(doc.model_copy(update={"tables": [first, cont], "blocks": blocks}))
    unit = _table(units)
    assert len(unit.rows) == 4  # the repeated header rows of the continuation are dropped
    assert unit.pages == [2, 3]
    assert unit.row_pages == [2, 2, 3, 3]
