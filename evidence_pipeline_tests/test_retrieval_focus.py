"""Focused tables: a large table is read as the rows the question names, the rest one expansion away."""

from evidence_pipeline.children import unit_children
from evidence_pipeline.context import render_context
from evidence_pipeline.records import SearchHit
from evidence_pipeline.retrieval.focus import FOCUS_ROWS, focus
from evidence_pipeline.retrieval.query import read_query
from evidence_pipeline.units import approx_tokens, build_units
from evidence_pipeline_tests.docs import lnp_doc


def _hit(extra_rows: int, matched: str = "") -> SearchHit:
    [unit] = [u for u in build_units(lnp_doc(extra_rows)) if u.kind == "table"]
    return SearchHit(
        parent_id=unit.parent_id, unit_id=unit.unit_id, score=0.03, doc_id=unit.doc_id, doc_title=unit.doc_title,
        pages=unit.pages, section_path=unit.section_path, caption=unit.caption, unit_kind="table",
        matched_text=matched or unit.row_sentences[0], parent_text=unit.text,
    )  # fmt: skip


def test_a_large_table_keeps_the_rows_the_question_names_with_its_head_and_notes():
    hit = _hit(80, matched="")
    assert approx_tokens(hit.parent_text) > 600
    got = focus(hit, read_query("What is the maximum flow rate of Stream 41 and Stream 7?"))
    text = got.context_text
    assert got.parent_text == hit.parent_text  # the whole table stays with the hit
    assert "<td>Stream 41</td>" in text and "<td>Stream 7</td>" in text
    assert "<td>Stream 12</td>" not in text and "<td>Lipid Phase</td>" not in text
    assert text.count("<tr>") - hit.parent_text.split("<tbody>")[0].count("<tr>") <= FOCUS_ROWS  # header rows kept, body cut
    assert "Table 1: Pump flow rate limits" in text and "<thead>" in text
    assert "* Only with the high-pressure manifold installed." in text
    assert "confirm the cooling jacket" not in text or "confirm the cooling jacket" in hit.parent_text
    assert f"of 82 rows shown, those the question names, best first; the whole table is parent {hit.parent_id}" in text
    assert text.index("<td>Stream 7</td>") < text.index("<td>Stream 41</td>")  # equal scores: table order
    assert approx_tokens(text) < approx_tokens(hit.parent_text) / 3
    assert render_context([got]) == text


def test_the_row_that_matched_is_always_kept():
    hit = _hit(80)
    matched = next(c.text for u in build_units(lnp_doc(80)) if u.kind == "table" for c in unit_children(u) if "Stream 63 |" in c.text)
    got = focus(hit.model_copy(update={"matched_text": matched}), read_query("Which pressure limit is highest?"))
    assert got.focus is not None and "<td>Stream 63</td>" in got.focus


def test_small_tables_and_questions_that_name_no_row_are_read_whole():
    assert focus(_hit(2), read_query("flow rate of Stream 1")).focus is None
    assert focus(_hit(80, matched="nothing | here"), read_query("Why is the warning there?")).focus is None


def test_a_financial_statement_is_read_whole():
    # Questions about a statement combine its lines ("operating expenses against revenue") in words
    # its row labels do not print; the whole statement is the evidence.
    hit = _hit(80).model_copy(update={"statement": "income statement"})
    assert focus(hit, read_query("What is the maximum flow rate of Stream 41?")).focus is None


def test_the_rows_kept_come_best_first():
    # The row that matched first, then the others by the query's words they hold (the rarer the
    # word, the more it counts): a budget that cuts the context keeps the likeliest rows.
    matched = next(c.text for u in build_units(lnp_doc(80)) if u.kind == "table" for c in unit_children(u) if "Stream 63 |" in c.text)
    got = focus(_hit(80, matched=matched), read_query("flow rates of Stream 7, Stream 63 and the Lipid Phase"))
    text = got.context_text
    assert text.index("<td>Stream 63</td>") < text.index("<td>Lipid Phase</td>") < text.index("<td>Stream 7</td>")
