from evidence_pipeline.children import unit_children
from evidence_pipeline.splitting import split_unit
from evidence_pipeline.units import approx_tokens, build_units
from evidence_pipeline_tests.docs import lnp_doc


def _table_unit(extra_rows):
    return [u for u in build_units(lnp_doc(extra_rows)) if u.kind == "table"][0]


def test_small_table_is_not_split():
    unit = _table_unit(0)
    assert split_unit(unit, 10_000) == [unit]


def test_long_table_split_by_rows_repeats_caption_and_header():
    unit = _table_unit(80)
    budget = 500
    pieces = split_unit(unit, budget, approx_tokens)
    assert len(pieces) > 2
    assert [p.unit_id for p in pieces] == [f"{unit.unit_id}-s{n}" for n in range(len(pieces))]
    assert {p.parent_id for p in pieces} == {unit.unit_id}
    assert [r for p in pieces for r in p.rows] == unit.rows
    for piece in pieces:
        assert piece.caption == unit.caption and piece.header == unit.header
        assert "<thead>" in piece.text and unit.caption in piece.text
        assert approx_tokens(piece.text) <= budget
        assert piece.row_sentences[0].count("Flow rate (mL/min) / Max") == 1
    assert pieces[0].context_before == unit.context_before and pieces[-1].context_before == []
    assert pieces[-1].footnotes == unit.footnotes and pieces[0].footnotes == []
    assert pieces[-1].context_after == unit.context_after
    assert "Part 2 of" in pieces[1].text


def test_children_of_pieces_share_the_table_id():
    pieces = split_unit(_table_unit(80), 500, approx_tokens)
    children = [c for p in pieces for c in unit_children(p)]
    assert {c.parent_id for c in children} == {pieces[0].parent_id}
    assert len({c.child_id for c in children}) == len(children)
