"""Parent lookup by id: every piece of a split table, in order, as one text."""

import pytest

from evidence_pipeline.embedding import Embedder, token_counter
from evidence_pipeline.parents import get_parent
from evidence_pipeline.pipeline import PipelineOptions, ingest_parsed, prepare
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.splitting import piece_number
from evidence_pipeline.store import open_store
from evidence_pipeline_tests.docs import lnp_doc

# A budget the 94-row table exceeds more than ten times (the default keeps 10-Q statements whole).
OPTIONS = PipelineOptions(max_parent_tokens=700)


@pytest.fixture(scope="module")
def split_store(tmp_path_factory):
    doc = lnp_doc(extra_rows=90)  # the table splits into more than ten pieces
    settings = StoreSettings(path=str(tmp_path_factory.mktemp("parents") / "store"))
    with open_store(settings) as store:
        ingest_parsed(doc, store, Embedder(), token_counter(None), OPTIONS)
    units, _ = prepare(doc, token_counter(None), OPTIONS)
    return settings, units


def test_split_table_comes_back_whole_in_piece_order(split_store):
    settings, units = split_store
    pieces = [u for u in units if u.kind == "table"]
    assert len(pieces) > 10  # s10 must follow s9, not s1
    parent = get_parent(pieces[0].parent_id, settings)
    assert parent.unit_ids == [p.unit_id for p in pieces]
    assert [piece_number(u, parent.parent_id) for u in parent.unit_ids] == list(range(len(pieces)))
    rows = [r[0] for p in pieces for r in p.rows]
    positions = [parent.text.index(f"<td>{name}</td>") for name in rows]  # every row, in table order
    assert positions == sorted(positions)
    assert parent.text.count("Document: SOP-8812 - Lipid Nanoparticle Formulation") == 1
    assert (parent.caption, parent.unit_kind, parent.pages) == ("Table 1: Pump flow rate limits", "table", [2])


def test_section_parent_is_its_unit_text(split_store):
    settings, units = split_store
    section = next(u for u in units if u.kind == "section")
    parent = get_parent(section.parent_id, settings)
    assert (parent.text, parent.unit_ids, parent.section_path) == (section.text, [section.unit_id], section.section_path)


def test_unknown_parent_is_none(split_store, tmp_path):
    settings, _ = split_store
    assert get_parent("SOP-8812-p9-9", settings) is None
    assert get_parent("anything", StoreSettings(path=str(tmp_path / "missing"))) is None


def test_search_returns_the_whole_split_table(split_store):
    """A hit on any piece carries every piece when they fit the whole-table budget."""
    from evidence_pipeline.retrieval import search_store

    settings, units = split_store
    pieces = [u for u in units if u.kind == "table"]
    with open_store(settings) as store:
        [hit] = search_store(store, Embedder(), "maximum pressure of Stream 57", k=1)
        single = search_store(store, Embedder(), "maximum pressure of Stream 57", k=1, whole_table_tokens=0)[0]
    assert hit.parent_id == pieces[0].parent_id
    assert all(f"<td>{r[0]}</td>" in hit.parent_text for p in pieces for r in p.rows)
    assert hit.parent_text.count("Document: SOP-8812") == 1
    assert single.parent_text in {p.text for p in pieces}  # budget 0: the matched piece alone


def test_over_budget_the_pieces_holding_the_query_terms_come_back(split_store):
    from evidence_pipeline.retrieval import search_store

    settings, units = split_store
    pieces = [u for u in units if u.kind == "table"]
    holder = next(p for p in pieces if any(r[0] == "Stream 83" for r in p.rows))
    with open_store(settings) as store:
        [hit] = search_store(store, Embedder(), "What is the maximum flow rate of Stream 83?", k=1, whole_table_tokens=1200)
    assert "<td>Stream 83</td>" in hit.parent_text
    assert len(hit.parent_text) < sum(len(p.text) for p in pieces) / 3
    assert set(holder.pages) <= set(hit.pages)


def test_with_the_whole_table_rule_off_a_piece_comes_back_alone(split_store):
    from evidence_pipeline.retrieval import search_store
    from evidence_pipeline.retrieval.rules import ALL_RULES

    settings, units = split_store
    with open_store(settings) as store:
        [off] = search_store(store, Embedder(), "maximum pressure of Stream 57", k=1, rules=ALL_RULES.without("whole_table"))
        [single] = search_store(store, Embedder(), "maximum pressure of Stream 57", k=1, whole_table_tokens=0)
    assert off.parent_text == single.parent_text
    assert off.parent_text in {u.text for u in units if u.kind == "table"}


def test_a_language_model_reads_the_tables_in_markdown_unless_the_rule_is_off(split_store):
    from evidence_pipeline.retrieval import context_texts, search_store
    from evidence_pipeline.retrieval.rules import ALL_RULES
    from evidence_pipeline.tables import markdown_tables

    settings, _ = split_store
    query = "What is the maximum pressure of Stream 57?"
    with open_store(settings) as store:
        [hit] = search_store(store, Embedder(), query, k=1)
        [off] = search_store(store, Embedder(), query, k=1, rules=ALL_RULES.without("markdown_tables"))
    assert hit.parent_text == off.parent_text and hit.focus == off.focus  # ranking and the stored HTML unchanged
    assert hit.context_text == markdown_tables(off.context_text) == context_texts([hit])[0]
    assert "<td>" not in hit.context_text and "| Stream 57 |" in hit.context_text
    assert off.context is None and "<td>Stream 57</td>" in off.context_text
