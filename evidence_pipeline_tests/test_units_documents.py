"""Evidence units built from real parses: the generated SOP corpus and a shared document."""

import pytest

from evidence_pipeline.children import unit_children
from evidence_pipeline.embedding import token_counter
from evidence_pipeline.pipeline import PipelineOptions, evidence_units, split_evidence_units
from evidence_pipeline.tools.samples.truth import load_truth


@pytest.fixture(scope="module")
def units_of(sample_corpus, parse_cached):
    counter = token_counter(None)
    options = PipelineOptions()

    def build(doc_id: str):
        doc = parse_cached(sample_corpus / f"{doc_id}.pdf")
        return split_evidence_units(evidence_units(doc, options, counter), options, counter)

    return build


def _by_caption(units, prefix):
    return [u for u in units if u.kind == "table" and (u.caption or "").startswith(prefix)]


def test_warning_above_table_is_in_the_parent(units_of):
    [unit] = _by_caption(units_of("SOP-8812"), "Table 1")
    assert unit.caption_source == "direct"
    assert any(p.startswith("WARNING: If processing lipid nanoparticles") for p in unit.context_before)
    assert unit.section_path[-1].endswith("Critical process parameters")
    assert "Aqueous Phase 1 | Flow rate (mL/min) / Min: 0.6; Flow rate (mL/min) / Max: 1.8" in unit.row_sentences[0]
    assert "(note: Only with the high-pressure manifold installed.)" in unit.row_sentences[0]
    assert "cooling jacket" in unit.text and "<table>" in unit.text


def test_long_table_is_one_parent_across_pages_and_pieces(units_of, sample_corpus):
    truth = {t.doc_id: t for t in load_truth(sample_corpus.parent / "truth")}["SOP-ENG-114"]
    [expected] = [t for t in truth.tables if t.caption.startswith("Table 2")]
    pieces = _by_caption(units_of("SOP-ENG-114"), "Table 2")
    assert len({p.parent_id for p in pieces}) == 1
    assert [r[0] for p in pieces for r in p.rows] == [r[0] for r in expected.body_rows]
    assert sorted({pg for p in pieces for pg in p.pages}) == sorted(set(expected.row_pages))
    for piece in pieces:
        assert piece.header and piece.caption == pieces[0].caption
        assert token_counter(None).count(piece.text) <= PipelineOptions().max_parent_tokens


def test_borderless_table_with_caption_below(units_of):
    [unit] = _by_caption(units_of("SOP-ENG-114"), "Table 3")
    assert unit.rows and unit.header


def test_same_shaped_tables_told_apart_by_caption(units_of):
    units = units_of("SOP-MFG-231")
    one, two = _by_caption(units, "Table 1"), _by_caption(units, "Table 2")
    assert one and two and one[0].column_paths == two[0].column_paths
    assert any(p.upper().startswith("CAUTION") for p in two[0].context_before)
    assert all(c.prefix.endswith(two[0].caption) for c in unit_children(two[0]))


def test_real_document_tables_get_captions_and_sections(parse_cached, corpora):
    doc = parse_cached(corpora / "docling-tests" / "pdfs" / "2305.03393v1-pg9.pdf")
    units = evidence_units(doc, PipelineOptions(), token_counter(None))
    tables = [u for u in units if u.kind == "table"]
    assert tables and tables[0].caption and tables[0].caption.startswith("Table 1")
    assert tables[0].row_sentences and all(" | " in s or ":" in s for s in tables[0].row_sentences)
    sections = [u for u in units if u.kind == "section"]
    assert sections and all(u.section_path for u in sections[1:])
