from evidence_pipeline.parser.dashes import _restore


def test_restore_takes_dashes_as_printed():
    page = "Table 1: Hold times at 2–8 °C\nStep 3 — mix well. SOP-QA-070 applies."
    assert _restore("Table 1: Hold times at 2-8 °C", [page]) == "Table 1: Hold times at 2–8 °C"
    assert _restore("Step 3 - mix well.", [page]) == "Step 3 — mix well."
    assert _restore("SOP-QA-070 applies.", [page]) == "SOP-QA-070 applies."
    assert _restore("not on the page 1-2", [page]) == "not on the page 1-2"


def test_generated_pdf_keeps_en_dash_in_caption_and_text(sample_corpus, parse_cached):
    doc = parse_cached(sample_corpus / "SOP-MFG-231.pdf")
    assert "Table 1: Hold times at 2–8 °C" in [t.caption for t in doc.tables]
    assert any("2–8 °C" in b.text for b in doc.blocks if b.label == "paragraph")
