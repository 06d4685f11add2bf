import pytest

from evidence_pipeline.children import unit_children
from evidence_pipeline.records import BBox, Table, TableCell, TextBlock
from evidence_pipeline.units import (
    UnitOptions,
    build_units,
    bulleted_list_items,
    drop_duplicate_tables,
    is_contents_entry,
    is_contents_table,
    is_table_caption,
)
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
    assert unit.column_paths == [
        "Stream",
        "Flow rate (mL/min) / Min",
        "Flow rate (mL/min) / Max",
        "Pressure (bar) / Min",
        "Pressure (bar) / Max",
    ]
    assert unit.row_sentences[0] == (
        "Aqueous Phase 1 | Flow rate (mL/min) / Min: 0.6; Flow rate (mL/min) / Max: 1.8; "
        "Pressure (bar) / Min: 1.1; Pressure (bar) / Max: 2.4 (note: Only with the high-pressure manifold installed.)"
    )


def test_text_views_html_only_for_llm():
    unit = _table(build_units(lnp_doc()))
    assert '<th colspan="2">Flow rate (mL/min)</th>' in unit.text
    assert "cooling jacket" in unit.text and "1.8" in unit.text
    assert "<table>" not in unit.retrieval_text
    assert "Aqueous Phase 1 | Flow rate (mL/min) / Min: 0.6" in unit.retrieval_text


def test_unit_children_carry_parent_and_prefix():
    unit = _table(build_units(lnp_doc()))
    children = unit_children(unit)
    kinds = [c.kind for c in children]
    assert kinds == ["summary", "context", "row", "row", "footnote", "context"]
    assert all(c.parent_id == unit.unit_id for c in children)
    assert all(c.prefix.startswith("SOP-8812 Lipid Nanoparticle Formulation | 3 Procedure > 3.1") for c in children)
    assert all(c.prefix.endswith("Table 1: Pump flow rate limits") for c in children)
    assert len({c.child_id for c in children}) == len(children)


def test_children_embed_a_short_prefix_and_bm25_indexes_the_whole_location():
    from evidence_pipeline.pipeline import sparse_vectors
    from evidence_pipeline.sparse import token_index

    long_title = "Quarterly Report on Form 10-Q of Example Holdings for the period ended March 31, 2023"
    path = [
        "PART I. FINANCIAL INFORMATION",
        "ITEM 2. MANAGEMENT'S DISCUSSION AND ANALYSIS OF FINANCIAL CONDITION AND RESULTS OF OPERATIONS",
        "Liquidity",
    ]
    unit = _table(build_units(lnp_doc())).model_copy(update={"doc_title": long_title, "section_path": path})
    child = unit_children(unit)[0]
    # the embedded prefix: title's first 12 words, the two innermost headings (each to 10 words), the caption
    assert child.prefix == (
        "SOP-8812 Quarterly Report on Form 10-Q of Example Holdings for the period ended"
        " | ITEM 2. MANAGEMENT'S DISCUSSION AND ANALYSIS OF FINANCIAL CONDITION AND > Liquidity"
        " | Table 1: Pump flow rate limits"
    )
    assert child.embed_text == f"{child.prefix}\n{child.text}"
    # BM25 still sees the whole location: the outer heading and the title's tail
    assert child.locator == unit.location and child.sparse_text == f"{unit.location}\n{child.text}"
    [vector] = sparse_vectors([child])
    assert {token_index("part"), token_index("2023"), token_index("operation")} <= set(vector.indices)


def test_section_chunks_exclude_table_context_and_furniture():
    units = build_units(lnp_doc())
    sections = [u for u in units if u.kind == "section"]
    bodies = [p for u in sections for p in u.body]
    assert "Prepare the mixer as described below. Check the seals." in bodies
    assert "The particle size must be 80 to 100 nm. Polydispersity must be below 0.2." in bodies
    assert not any("cooling jacket" in p or "Record the flow rates" in p or "Page 2 of 3" in p for p in bodies)
    assert [u.section_path for u in sections] == [["3 Procedure"], ["4 Acceptance criteria"]]
    children = unit_children(sections[1])
    # a sentence of fewer than eight words joins the one before it (children.MIN_SENTENCE_WORDS)
    assert [c.text for c in children] == ["The particle size must be 80 to 100 nm. Polydispersity must be below 0.2."]


def test_a_body_fragment_joins_its_neighbour_instead_of_becoming_a_child():
    section = next(u for u in build_units(lnp_doc()) if u.kind == "section")
    # a cover block (lines of fewer than eight words, a split after "D.C."), a sentence, a lead-in
    # with the sentence it introduces, and a split after "vs."
    body = [
        "FORM 10-Q",
        "Washington, D.C. 20549",
        "The mixer is cleaned before every batch of the day. $",
        "Key changes were:",
        "The cooling jacket is now checked before each mixing run.",
        "Q1 2023 vs. Q1 2022",
    ]
    children = unit_children(section.model_copy(update={"body": body}))
    assert [c.text for c in children] == [
        "FORM 10-Q Washington, D.C. 20549 The mixer is cleaned before every batch of the day. $",
        "Key changes were: The cooling jacket is now checked before each mixing run. Q1 2023 vs. Q1 2022",
    ]
    assert [c.child_id for c in children] == [f"{section.unit_id}-c0", f"{section.unit_id}-c1"]
    only = unit_children(section.model_copy(update={"body": ["☐", "$"]}))
    assert [c.text for c in only] == ["☐ $"]  # fragments only: one child, nothing lost
    # a lead-in that ends its section joins the sentence before it
    last = section.model_copy(update={"body": ["The mixer is cleaned before every batch of the day.", "Then:"]})
    assert [c.text for c in unit_children(last)] == ["The mixer is cleaned before every batch of the day. Then:"]


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


def _with_table(doc, **update):
    return doc.model_copy(update={"tables": [doc.tables[0].model_copy(update=update)]})


def test_caption_stage_two_nearest_by_box_distance():
    doc = lnp_doc()
    # Unlinked, and the caption block is not the reading-order neighbour: found by distance.
    blocks = [b.model_copy(update={"order": 20}) if b.id == "b5" else b for b in doc.blocks]
    doc = _with_table(doc.model_copy(update={"blocks": blocks}), caption=None)
    unit = _table(build_units(doc))
    assert (unit.caption, unit.caption_source) == ("Table 1: Pump flow rate limits", "inferred")
    far = _table(build_units(doc, UnitOptions(caption_distance=1)))
    assert far.caption_source == "none"


def test_caption_stage_four_merged_into_first_row():
    doc = lnp_doc()
    blocks = [b for b in doc.blocks if b.id != "b5"]
    table = doc.tables[0]
    shifted = [c.model_copy(update={"row": c.row + 1}) for c in table.cells]
    cap = TableCell(row=0, col=0, col_span=5, text="Table 7: Merged caption", column_header=True)
    doc = _with_table(
        doc.model_copy(update={"blocks": blocks}), caption=None, cells=[cap, *shifted], n_rows=table.n_rows + 1, header_rows=3
    )
    unit = _table(build_units(doc))
    assert (unit.caption, unit.caption_source) == ("Table 7: Merged caption", "inferred")
    assert len(unit.header) == 2 and unit.header[0][1] == "Flow rate (mL/min)"


def test_figure_caption_is_never_used():
    doc = lnp_doc()
    blocks = [b.model_copy(update={"text": "Figure 1: Mixer schematic"}) if b.id == "b5" else b for b in doc.blocks]
    unit = _table(build_units(_with_table(doc.model_copy(update={"blocks": blocks}), caption=None)))
    assert unit.caption is None and unit.caption_source == "none"


def test_contents_table_is_dropped():
    rows = [["1 Purpose ..........", "1"], ["2 Scope ..........", "1"], ["3 Procedure ..........", "2"], ["4 Records ..........", "4"]]
    cells = [TableCell(row=r, col=c, text=t) for r, row in enumerate(rows) for c, t in enumerate(row)]
    toc = Table(id="toc", order=0, n_rows=4, n_cols=2, cells=cells, page=1)
    assert is_contents_table(toc)
    doc = lnp_doc()
    units = build_units(doc.model_copy(update={"tables": [toc.model_copy(update={"order": -1}), *doc.tables]}))
    assert [u.caption for u in units if u.kind == "table"] == ["Table 1: Pump flow rate limits"]
    assert not is_contents_table(doc.tables[0])


def test_contents_table_whose_page_numbers_follow_the_leader_in_one_cell_is_dropped():
    rows = [
        ["4.3", "Procedures ........................ 15"],
        ["4.4", "Skin Biopsy (Optional) ......... 16"],
        ["5", "SAFETY . . . . . . . . 17"],
    ]
    cells = [TableCell(row=r, col=c, text=t) for r, row in enumerate(rows) for c, t in enumerate(row)]
    assert is_contents_table(Table(id="toc", order=0, n_rows=3, n_cols=2, cells=cells, page=3))
    prose = [["Mixer", "Stirred at 300 rpm.... then cooled"], ["Pump", "12 mL/min"], ["Jacket", "4 °C"]]
    cells = [TableCell(row=r, col=c, text=t) for r, row in enumerate(prose) for c, t in enumerate(row)]
    assert not is_contents_table(Table(id="t", order=0, n_rows=3, n_cols=2, cells=cells, page=3))


def _grid_table(rows: list[list[str]], page: int = 2) -> Table:
    cells = [TableCell(row=r, col=c, text=t) for r, row in enumerate(rows) for c, t in enumerate(row) if t]
    return Table(id="t", order=0, n_rows=len(rows), n_cols=max(map(len, rows)), cells=cells, page=page)


def test_an_index_of_statements_without_leaders_is_a_contents_table():
    """A filing's index: entries and their pages in a grid, no dot leaders, no "Contents"."""
    index = _grid_table(
        [
            ["Consolidated Statements of Cash Flows", "3"],
            ["Consolidated Statements of Operations", "4"],
            ["Consolidated Balance Sheets", "6"],
            ["Notes to Consolidated Financial Statements", "7"],
        ]
    )
    items = _grid_table(
        [["10.", "Directors and Executive Officers", "156"], ["11.", "Executive Compensation", "156"], ["12.", "Security Ownership", "157"]]
    )
    assert is_contents_table(index, n_pages=50) and is_contents_table(items, n_pages=200)
    assert not is_contents_table(index)  # without the document's page count, nothing says they are pages
    assert not is_contents_table(index, n_pages=6)  # page 7 is past the last: these are figures


def test_a_table_of_small_figures_is_not_an_index():
    # in order and within the page count: only the figure beside the last tells a table of figures
    beside = _grid_table([["Units granted", "9", "5"], ["Units vested", "5", "6"], ["Units forfeited", "2", "7"]])
    out_of_order = _grid_table(
        [["Cost of sales", "29"], ["Selling and administrative", "3"], ["Research and development", "8"], ["Total", "40"]]
    )
    assert not is_contents_table(beside, n_pages=80) and not is_contents_table(out_of_order, n_pages=80)
    doc = lnp_doc()
    kept = build_units(doc.model_copy(update={"tables": [out_of_order.model_copy(update={"order": -1}), *doc.tables]}))
    assert sum(u.kind == "table" for u in kept) == 2


def test_a_bulleted_list_read_as_a_table_is_a_list():
    listed = _grid_table(
        [["•", "limited fulfillment infrastructure;"], ["•", "lower levels of credit card usage and"], ["", "increased payment risk;"]]
    )
    items = bulleted_list_items(listed)
    assert [(b.label, b.text) for b in items] == [
        ("list_item", "limited fulfillment infrastructure;"),
        ("list_item", "lower levels of credit card usage and increased payment risk;"),
    ]
    doc = lnp_doc()
    units = build_units(doc.model_copy(update={"tables": [listed.model_copy(update={"order": -1}), *doc.tables]}))
    assert [u.caption for u in units if u.kind == "table"] == ["Table 1: Pump flow rate limits"]
    assert any("lower levels of credit card usage and increased payment risk;" in u.text for u in units if u.kind == "section")


def test_a_dash_column_beside_figures_is_no_list():
    dashes = _grid_table([["–", "1,200"], ["–", "3,400"], ["–", "4,600"]])  # a dash for "none": no item has a letter
    labelled = _grid_table([["Stream", "Flow"], ["•", "limited"], ["•", "lower"]])
    assert bulleted_list_items(dashes) is None and bulleted_list_items(labelled) is None


def test_contents_lines_in_the_body_are_no_evidence():
    def block(i: int, text: str, label: str = "paragraph") -> TextBlock:
        return TextBlock(id=f"toc{i}", label=label, text=text, order=-10 + i, page=1)

    lines = ["3.5 Withdrawal from the Study ........................ 12", "Notices . . . . . . . . . . . . . . vii", "1 INTRODUCTION …… 5"]
    assert all(is_contents_entry(block(i, t)) for i, t in enumerate(lines))
    # a leader without the page it points to, or a few dots in a sentence, is body text
    # nor is a figure after a leader: a row printed as a line
    for text in (
        "Signature: ........................",
        "Stir.... then cool to 4 °C",
        "see p. 12",
        "Net sales ........ 1,234",
        "Yield ...... 12 %",
    ):
        assert not is_contents_entry(block(0, text)), text
    assert not is_contents_entry(block(0, lines[0], "section_header"))
    doc = lnp_doc()
    units = build_units(doc.model_copy(update={"blocks": [*(block(i, t) for i, t in enumerate(lines)), *doc.blocks]}))
    text = "\n".join(u.text for u in units)
    assert "Withdrawal from the Study" not in text and "Notices" not in text and "INTRODUCTION" not in text
    assert "Prepare the mixer as described below. Check the seals." in text


def test_table_detected_twice_becomes_one():
    doc = lnp_doc()
    twin = doc.tables[0].model_copy(update={"id": "t9", "order": 6, "bbox": BBox(l=75, t=302, r=518, b=418), "caption": None})
    assert len(drop_duplicate_tables([doc.tables[0], twin])) == 1
    units = build_units(doc.model_copy(update={"tables": [doc.tables[0], twin]}))
    assert sum(u.kind == "table" for u in units) == 1


def test_structural_map_opens_the_parent_text():
    unit = _table(build_units(lnp_doc()))
    head = unit.text.split("<table>")[0]
    assert "Columns: Stream | Flow rate (mL/min): Min, Max | Pressure (bar): Min, Max" in head
    assert "Rows (2): Aqueous Phase 1, Lipid Phase" in head
    assert head.index("Caption:") < head.index("WARNING")


def test_footnote_marker_resolved_in_row_sentence():
    unit = _table(build_units(lnp_doc()))
    assert "Pressure (bar) / Max: 2.4 (note: Only with the high-pressure manifold installed.)" in unit.row_sentences[0]
    assert "2.4*" in unit.table_html  # the HTML keeps the cell as printed


def test_a_contents_heading_heads_no_unit(corpora, parse_cached):
    """NCT06151600's protocol prints "TABLE OF CONTENTS:" as a heading, then its contents, its
    abbreviations and its synopsis with no heading of their own: they are not part of the
    contents."""
    pdf = corpora / "clinical-protocols" / "pdfs" / "NCT06151600_Prot_000.pdf"
    if not pdf.is_file():
        pytest.skip("shared corpora not present")
    units = build_units(parse_cached(pdf))
    synopsis = [u for u in units if u.kind == "table" and (u.caption or "").startswith("CLINICAL PROTOCOL SYNOPSIS")]
    assert synopsis and all(u.section_path == [] for u in synopsis)
    assert not any("TABLE OF CONTENTS:" in u.section_path for u in units)
    # the headings after it still nest as printed
    assert any(u.section_path[:1] == ["4 POTENTIAL RISKS"] for u in units)
