"""Korean, Arabic and Hebrew PDFs: text in logical order with its words intact.

Generated PDFs (the sample generator's Korean SOP set in NanumGothic; right-to-left lines set
in DejaVu Sans as a typesetter prints them, shaped and in visual order) and one real Korean
PDF from Docling's test suite (normal_4pages.pdf, a National Assembly research brief).
"""

from __future__ import annotations

import pytest

from evidence_pipeline.parser.scripts import between_hangul, fold_presentation_forms, letter_weight
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.tools.samples.rtl import shape_arabic, visual_order

ARABIC = ["يجب تشغيل سترة التبريد قبل تشغيل المضخات", "الحد الأقصى لمعدل التدفق 1.8 مل في الدقيقة"]
HEBREW = ["יש לוודא שמעיל הקירור פועל לפני הפעלת המשאבות", "קצב הזרימה המרבי הוא 1.8 מ״ל לדקה"]


def _text(doc: ParsedDoc) -> str:
    return " ".join(" ".join(b.text.split()) for b in sorted(doc.blocks, key=lambda b: b.order))


def _rows(table) -> list[list[str]]:
    rows: dict[int, list[str]] = {}
    for c in sorted(table.cells, key=lambda c: (c.row, c.col)):
        rows.setdefault(c.row, []).append(c.text)
    return [rows[r] for r in sorted(rows)][table.header_rows :]


@pytest.fixture(scope="module")
def korean(tmp_path_factory, parse_cached):
    from evidence_pipeline.tools.samples.docs_korean import korean_lnp_doc
    from evidence_pipeline.tools.samples.render import render

    spec = korean_lnp_doc()
    pdf, truth = render(spec)
    path = tmp_path_factory.mktemp("korean") / f"{spec.doc_id}.pdf"
    path.write_bytes(pdf)
    return spec, truth, parse_cached(path)


@pytest.fixture(scope="module")
def right_to_left(tmp_path_factory, parse_cached) -> ParsedDoc:
    from evidence_pipeline.tools.samples.rtl import rtl_pdf

    path = tmp_path_factory.mktemp("rtl") / "rtl.pdf"
    path.write_bytes(rtl_pdf(ARABIC + HEBREW))
    return parse_cached(path)


def test_korean_paragraphs_come_out_whole_and_in_order(korean):
    from evidence_pipeline.tools.samples.spec import P

    spec, _, doc = korean
    text = _text(doc)
    paragraphs = [" ".join(b.plain.split()) for b in spec.blocks if isinstance(b, P)]
    assert len(paragraphs) >= 8
    for p in paragraphs:
        assert p in text, p
    positions = [text.index(p) for p in paragraphs]
    assert positions == sorted(positions)


def test_korean_headings_and_table_cells_keep_their_eojeols(korean):
    _, truth, doc = korean
    headings = [b.text for b in doc.blocks if b.label == "section_header"]
    assert headings == [f"{s.number} {s.title}" for s in truth.sections]  # "1 목적": two syllables are a heading
    by_caption = {t.caption: t for t in doc.tables}
    for expected in truth.tables:
        assert _rows(by_caption[expected.caption]) == expected.body_rows


def test_a_real_korean_table_cell_keeps_its_word_spaces(parse_cached, corpora):
    # The brief sets its spaces kerned to a fraction of a point; docling-parse splits the words
    # at them, and the cell text must keep them ("높거나집단발생의우려가" before the fix).
    doc = parse_cached(corpora / "docling-tests" / "pdfs" / "normal_4pages.pdf")
    cells = [c.text for t in doc.tables for c in t.cells]
    assert any("치명률이 높거나 집단 발생의 우려가" in c for c in cells)
    assert not any("높거나집단" in c for c in cells)


def test_arabic_and_hebrew_lines_read_in_logical_order_as_letters(right_to_left):
    text = _text(right_to_left)
    for line in ARABIC + HEBREW:
        assert line in text, line
    # the shaped glyphs' presentation forms are folded back: what a user types matches
    assert not any(0xFB1D <= ord(ch) <= 0xFDFF or 0xFE70 <= ord(ch) <= 0xFEFE for ch in text)


def test_script_rules():
    assert letter_weight("목적") == 4 and letter_weight("ab") == 2
    assert between_hangul("높거나", "집단") and not between_hangul("상해", "1)") and not between_hangul("Vital", "Signs")
    shaped = shape_arabic("تشغيل")  # initial, medial, medial, medial, final forms
    assert shaped != "تشغيل" and all(0xFE70 <= ord(ch) <= 0xFEFE for ch in shaped)
    assert fold_presentation_forms(shaped) == "تشغيل"
    assert fold_presentation_forms("x² ﬁ") == "x² ﬁ"  # other compatibility characters stay as printed
    assert visual_order("קצב הזרימה 1.8 מ״ל") == "ל״מ 1.8 המירזה בצק"  # words right to left, numbers as read
