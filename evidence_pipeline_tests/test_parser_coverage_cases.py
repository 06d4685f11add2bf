"""Words the rule parser once lost, each case pinned on a generated PDF
(``tools/samples/coverage_cases``) and on the real page of Docling's test PDFs that showed it."""

from pathlib import Path

import pytest

from evidence_pipeline.evaluation.parser_quality.coverage import file_coverage
from evidence_pipeline.parser.geometry import Box, Rules, Span
from evidence_pipeline.parser.table_grid import _phrases
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.units import build_units
from evidence_pipeline_tests.conftest import CORPORA

DOCLING_TESTS = CORPORA / "docling-tests" / "pdfs"
FURNITURE = ("page_header", "page_footer")


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, Path]:
    from evidence_pipeline.tools.samples.coverage_cases import write_coverage_cases

    return write_coverage_cases(tmp_path_factory.mktemp("coverage_cases"))


def _body(doc: ParsedDoc) -> list[str]:
    return [b.text for b in doc.blocks if b.label not in FURNITURE]


def _unit_text(doc: ParsedDoc) -> str:
    return "\n".join(u.text for u in build_units(doc))


def test_coverage_cases_are_deterministic(tmp_path):
    from evidence_pipeline.tools.samples.coverage_cases import write_coverage_cases

    a = write_coverage_cases(tmp_path / "a")
    b = write_coverage_cases(tmp_path / "b")
    assert all(a[name].read_bytes() == b[name].read_bytes() for name in a)


def test_raised_markers_join_their_word_and_keep_the_paragraph_whole(cases, parse_cached):
    from evidence_pipeline.tools.samples.coverage_cases import MARKED_LINES

    path = cases["raised_markers"]
    doc = parse_cached(path)
    body = _body(doc)
    # the five lines are one paragraph, in order, each marker raised after its word
    raised = {"": "", "1": "¹", "2": "²"}
    paragraph = next(t for t in body if t.startswith("Recent news headlines"))
    assert paragraph == " ".join(before + raised[m] + after for before, m, after in MARKED_LINES)
    assert "Resource Center¹ reports" in paragraph and "Institute² show" in paragraph
    korean = next(t for t in body if "상해" in t)
    assert korean == "병으로 보아야 할지, 상해¹⁾나 재해²⁾로 보아야 할지"
    assert file_coverage(path, doc).n_lost == 0


def test_a_word_hyphenated_after_a_check_box_stays_one_word(cases, parse_cached):
    from evidence_pipeline.tools.samples.coverage_cases import CHECK_ITEM

    path = cases["check_box_item"]
    doc = parse_cached(path)
    item = next(t for t in _body(doc) if "They are authorized" in t)
    assert item.endswith(CHECK_ITEM[0][:-1] + CHECK_ITEM[1])  # "... practicing lawyer supervises and signs."
    assert file_coverage(path, doc).n_lost == 0


def test_column_tops_in_the_margin_band_are_body_and_the_page_number_is_furniture(cases, parse_cached):
    from evidence_pipeline.tools.samples.coverage_cases import COLUMN_TEXT, COLUMN_TWO, HEADER, PAGE_NUMBER

    path = cases["column_top"]
    doc = parse_cached(path)
    furniture = {b.text for b in doc.blocks if b.label in FURNITURE}
    assert furniture == {HEADER, PAGE_NUMBER}
    body = _body(doc)
    assert " ".join(COLUMN_TEXT) in body and " ".join(COLUMN_TWO) in body
    cov = file_coverage(path, doc)
    assert cov.n_lost == 0 and cov.furniture == 5  # field guide to fasteners, 45 (7 is elsewhere)


def test_a_dash_at_a_line_end_is_not_taken_for_a_hyphen(cases, parse_cached):
    path = cases["dash_line_end"]
    doc = parse_cached(path)
    text = " ".join(_body(doc))
    assert "platforms\u2014reflects" in text and "platformsreflects" not in text
    assert file_coverage(path, doc).n_lost == 0


def test_dot_leaders_do_not_send_a_born_digital_page_to_ocr(cases, parse_cached):
    from evidence_pipeline.tools.samples.coverage_cases import CONTENTS

    path = cases["contents"]
    doc = parse_cached(path)
    assert not any("OCR" in w for w in doc.warnings)
    text = "\n".join(_body(doc))
    for number, title, _ in CONTENTS:
        assert f"{number} {title}" in text
    # read, and left out of the evidence: a contents line is navigation (units.is_contents_entry),
    # counted with the furniture; the page's title heads nothing else (it is the document's title)
    coverage = file_coverage(path, doc)
    assert coverage.lost == ["contents"] and coverage.furniture == coverage.words - 1
    assert not any(title in _unit_text(doc) for _, title, _ in CONTENTS)


def test_a_picture_font_bullet_stays_apart_from_the_word_it_touches():
    """Wingdings' bullet decodes as a letter ("y"); set tight against a label it must not
    glue onto it (table_mislabeled_as_picture.pdf, where "y" + "Persons" read "yPersons")."""
    bullet = Span(0, "y", Box(74.0, 190.0, 78.1, 198.4), font="/XXQNYR+Wingdings", size=8.4)
    word = Span(1, "Children", Box(78.1, 190.0, 110.0, 198.4), font="/XXQNYR+MyriadRg", size=8.4)
    plain = Span(2, "s", Box(110.0, 190.0, 113.0, 198.4), font="/XXQNYR+MyriadRg", size=8.4)
    (phrase,) = _phrases([bullet, word, plain], Rules())
    assert phrase.text == "y Childrens"


# ---------------------------------------------------------------------------- real pages

needs_docling_tests = pytest.mark.skipif(not DOCLING_TESTS.is_dir(), reason="shared corpora not present")


@needs_docling_tests
def test_real_raised_markers_and_contents_page():
    """redp5110_sampled.pdf: "Resource Center¹ reports" on p. 5 (the line's raised 1 once split
    its paragraph, lines interleaved), and p. 2, a table of contents once read by OCR."""
    from evidence_pipeline.parser import DoclingParser

    parser = DoclingParser()
    doc = parser.parse(DOCLING_TESTS / "redp5110_sampled.pdf", pages=(5, 5))
    paragraph = next(t for t in _body(doc) if t.startswith("Recent news headlines"))
    assert "cyber-attacks impacting global businesses of all sizes. The Identity Theft Resource Center¹ reports" in paragraph
    assert "Ponemon Institute²" in " ".join(_body(doc))

    contents = parser.parse(DOCLING_TESTS / "redp5110_sampled.pdf", pages=(2, 2))
    assert not any("OCR" in w for w in contents.warnings)
    assert any(t.startswith("3.6.1 Assigning the QIBM_DB_SECADM function ID to the consultants") for t in _body(contents))
    assert "QIBM_DB_SECADM" not in _unit_text(contents)


@needs_docling_tests
def test_real_korean_markers_glued_as_printed():
    """normal_4pages.pdf p. 1: "상해1)나" prints its note number raised between the words."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(DOCLING_TESTS / "normal_4pages.pdf", pages=(1, 1))
    assert "상해¹⁾나 재해²⁾로 보아야 할지" in " ".join(_body(doc))


@needs_docling_tests
def test_real_short_documents_lose_no_body_line(parse_cached):
    """One-page documents of Docling's test set: the first lines of the columns of
    amt_handbook_sample.pdf sit in the top band; table_mislabeled_as_picture.pdf hyphenates
    "practic-/ing" after a check box and sets Wingdings bullets tight against the labels;
    multi_page.pdf ends a line with an em dash."""
    amt = parse_cached(DOCLING_TESTS / "amt_handbook_sample.pdf")
    assert any(t.startswith("pulleys, provided the inner race of the bearing is clamped to the supporting") for t in _body(amt))
    assert [b.text for b in amt.blocks if b.label in FURNITURE] == ["7-45"]

    form = parse_cached(DOCLING_TESTS / "table_mislabeled_as_picture.pdf")
    assert any("faculty member or practicing lawyer supervises" in t for t in _body(form))
    (table,) = form.tables
    labels = [row[:2] for row in table.grid()[1:]]
    assert ["y y", "Persons with disabilities"] in labels

    essay = parse_cached(DOCLING_TESTS / "multi_page.pdf")
    assert "AI-powered platforms\u2014reflects humanity" in " ".join(_body(essay))

    for path, doc in (("amt_handbook_sample.pdf", amt), ("table_mislabeled_as_picture.pdf", form), ("multi_page.pdf", essay)):
        cov = file_coverage(DOCLING_TESTS / path, doc)
        assert cov.share >= 0.995, (path, cov.lost)
