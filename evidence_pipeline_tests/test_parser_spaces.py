"""Spaces docling-parse drops between words are put back where pdfium prints them."""

import pytest

from evidence_pipeline.parser.spaces import restore_spaces_in, spaced
from evidence_pipeline.records import ParsedDoc, TextBlock
from evidence_pipeline_tests.conftest import CORPORA

PAGE = (
    "A STUDY OF FRAGMIN (DALTEPARIN SODIUM INJECTION) IN CHILDREN WITH VENOUS\r\nThe glu cose and p atient values.\r\nSee Respiratory Rate."
)
WORDS = frozenset({"dalteparin", "sodium", "children", "with", "respiratory", "rate", "glucose", "patient", "the"})


def test_a_closed_up_word_is_spaced_as_pdfium_prints_it():
    assert spaced("(DALTEPARINSODIUM INJECTION) IN CHILDRENWITH VENOUS", [PAGE], WORDS) == (
        "(DALTEPARIN SODIUM INJECTION) IN CHILDREN WITH VENOUS"
    )
    assert spaced("RespiratoryRate: 20/min", [PAGE], WORDS) == "Respiratory Rate: 20/min"


def test_a_space_pdfium_puts_inside_a_word_is_not_taken():
    # "glu cose": pieces the document never prints; "p atient": a one-letter piece
    assert spaced("The glucose and patient values.", [PAGE], WORDS) == "The glucose and patient values."
    # a word the page prints closed up somewhere stays closed up
    assert spaced("CHILDRENWITH", [PAGE + " CHILDRENWITH"], WORDS) == "CHILDRENWITH"
    # letters pdfium prints in another case are not the same word
    assert spaced("Childrenwith", [PAGE], WORDS) == "Childrenwith"
    assert spaced("DALTEPARINSODIUM", [], WORDS) == "DALTEPARINSODIUM"


def test_restore_spaces_in_reads_the_page_of_each_text_and_the_pages_beside_it():
    texts = ["DALTEPARINSODIUM", "Dalteparin sodium children with", "CHILDRENWITH"]
    blocks = [TextBlock(id=f"b{n}", label="paragraph", text=t, order=n, page=p) for n, (t, p) in enumerate(zip(texts, (2, 9, 9)))]
    doc = ParsedDoc(doc_id="d", source="d.pdf", title="t", n_pages=9, content_hash="0" * 64, parser="p", blocks=blocks)
    out = restore_spaces_in(doc, {1: PAGE})
    assert [b.text for b in out.blocks] == ["DALTEPARIN SODIUM", "Dalteparin sodium children with", "CHILDRENWITH"]
    assert restore_spaces_in(doc, {}) is doc


NCT00952380 = CORPORA / "sponsor-protocols" / "pdfs" / "NCT00952380_Prot_000.pdf"


@pytest.mark.skipif(not NCT00952380.is_file(), reason="shared corpora not present")
def test_a_protocol_whose_words_are_placed_without_spaces_reads_as_printed():
    from evidence_pipeline.parser.docling_parser import DoclingParser

    doc = DoclingParser().parse(NCT00952380, pages=(1, 1))
    text = " ".join([doc.title, *(b.text for b in doc.blocks)])
    assert "(DALTEPARIN SODIUM INJECTION)" in text and "DALTEPARINSODIUM" not in text
    # "A THREE MONTH ...": a one-letter piece, so the line stays as read; "CHILDREN" is
    # printed nowhere else on the page, so "CHILDRENWITH" stays too
    assert "ATHREEMONTHPROSPECTIVE" in text and "CHILDRENWITH" in text
