"""The fixed-window baseline over a parsed document's full text, and plain BM25 over its windows."""

from __future__ import annotations

import pytest

from evidence_pipeline.embedding import token_counter
from evidence_pipeline.evaluation.baselines import Bm25Windows, bm25_tokens, fixed_windows, full_text, pages_between
from evidence_pipeline.evaluation.metrics import whitespace_spans
from evidence_pipeline.evaluation.systems import Tokenizer
from evidence_pipeline_tests.docs import calibration_register, lnp_doc


def test_full_text_in_reading_order_without_furniture():
    text, segments = full_text(lnp_doc())
    assert "Page 2 of 3" not in text
    # The caption block stands once, right above the table rows; the footnote follows them.
    assert text.count("Table 1: Pump flow rate limits") == 1
    assert text.index("WARNING") < text.index("Table 1:") < text.index("Aqueous Phase 1 | 0.6 | 1.8 | 1.1 | 2.4*")
    assert text.index("2.4*") < text.index("* Only with the high-pressure manifold installed.")
    assert text.index("manifold") < text.index("4 Acceptance criteria")
    assert pages_between(segments, text.index("WARNING"), text.index("WARNING") + 5) == [2]
    assert pages_between(segments, 0, len(text)) == [1, 2, 3]


def test_windows_overlap_and_cover_every_token():
    doc = lnp_doc(extra_rows=40)
    text, _ = full_text(doc)
    words = whitespace_spans(text)
    chunks = fixed_windows(doc, whitespace_spans, size=50, overlap=10)
    assert [c.chunk_id for c in chunks[:2]] == ["SOP-8812-w0", "SOP-8812-w1"]
    assert all(len(whitespace_spans(c.text)) == 50 for c in chunks[:-1])
    assert 0 < len(whitespace_spans(chunks[-1].text)) <= 50
    # Each window starts 40 tokens after the previous one: its first 10 tokens repeat the previous tail.
    first, second = whitespace_spans(chunks[0].text), whitespace_spans(chunks[1].text)
    tail = [chunks[0].text[a:b] for a, b in first[-10:]]
    assert [chunks[1].text[a:b] for a, b in second[:10]] == tail
    assert len(chunks) == 1 + -(-(len(words) - 50) // 40)
    assert chunks[-1].text.endswith(text.rstrip()[-20:])
    assert chunks[0].pages[0] == 1 and chunks[-1].pages[-1] == 3


def test_windows_of_the_embedding_tokenizer():
    tokenizer = Tokenizer(token_counter(None))
    chunks = fixed_windows(lnp_doc(extra_rows=120), tokenizer.spans, size=512, overlap=64)
    assert len(chunks) >= 2
    assert all(tokenizer.count(c.text) == 512 for c in chunks[:-1])
    assert tokenizer.count(chunks[-1].text) <= 512


def test_overlap_must_be_smaller_than_the_window():
    with pytest.raises(ValueError):
        fixed_windows(lnp_doc(), whitespace_spans, size=10, overlap=10)


def test_bm25_tokens_are_lower_cased_word_runs():
    assert bm25_tokens("Under SOP-QA-070, sample 2.4* mL of Lot_A12!") == [
        "under",
        "sop",
        "qa",
        "070",
        "sample",
        "2",
        "4",
        "ml",
        "of",
        "lot_a12",
    ]


def test_bm25_windows_rank_the_window_with_the_exact_identifier_first():
    docs = [calibration_register("SOP-ENG-114", 1101), calibration_register("SOP-ENG-411", 1102)]
    index = Bm25Windows()
    for doc in docs:
        index.add(fixed_windows(doc, whitespace_spans, size=60, overlap=8))
    assert len(index) > 20  # many windows of identical wording; only the tag tells them apart
    # PT-1367 is the 15th tag (1101 + 19 * 14) of the first register; the twin's 15th is PT-1368.
    hits = index.search("How often is PT-1367 calibrated?", k=3)
    assert hits[0].doc_id == "SOP-ENG-114" and "PT-1367 " in hits[0].text
    assert hits[0].pages == [2]


def test_bm25_windows_break_ties_by_document_then_window_order():
    twin_a, twin_b = calibration_register("B-doc", 1101), calibration_register("A-doc", 1101)  # same text
    index = Bm25Windows()
    index.add(fixed_windows(twin_a, whitespace_spans, size=60, overlap=8))
    index.add(fixed_windows(twin_b, whitespace_spans, size=60, overlap=8))
    hits = index.search("PT-1367", k=2)
    assert [h.doc_id for h in hits] == ["A-doc", "B-doc"]  # equal scores: the id that sorts first wins
    assert hits[0].text == hits[1].text
    # A query with no known word scores every window 0: document, then window order.
    assert [h.chunk_id for h in index.search("zzz", k=3)] == ["A-doc-w0", "A-doc-w1", "A-doc-w2"]
    assert Bm25Windows().search("anything", k=3) == []
