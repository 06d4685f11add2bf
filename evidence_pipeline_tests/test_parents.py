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
