"""The Korean sample corpus: deterministic PDFs in NanumGothic, questions answerable on their page."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from evidence_pipeline.evaluation.korean_questions import generate
from evidence_pipeline.evaluation.questions import load_questions

HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@pytest.fixture(scope="module")
def korean(tmp_path_factory):
    out = tmp_path_factory.mktemp("korean")
    pdfs, questions = generate(out)
    pages = {}
    for path in pdfs:
        pdf = pdfium.PdfDocument(str(path))
        pages[path.stem] = [_norm(pdf[i].get_textpage().get_text_range()) for i in range(len(pdf))]
        pdf.close()
    return out, pdfs, load_questions(questions), pages


def test_regenerating_gives_identical_bytes(tmp_path, korean):
    _, pdfs, _, _ = korean
    again, _ = generate(tmp_path)
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in pdfs]


def test_the_text_layer_is_korean_with_korean_furniture(korean):
    _, _, _, pages = korean
    assert set(pages) == {"SOP-KR-101", "SOP-KR-205", "SOP-KR-318"}
    for doc_id, texts in pages.items():
        assert len(HANGUL.findall(" ".join(texts))) > 300
        assert f"1 / {len(texts)} 페이지" in texts[0] and "대외비" in texts[0] and doc_id.casefold() in texts[0]


def test_questions_are_korean_and_answerable_on_their_page(korean):
    _, _, questions, pages = korean
    assert len(questions) >= 25
    assert {q.kind for q in questions} >= {"table_cell", "footnote", "similar", "prose"}
    for q in questions:
        assert HANGUL.search(q.question), q.id
        page = pages[q.doc_id][q.page - 1]
        assert any(_norm(a) in page for a in q.answers), q.id
        assert all(_norm(m) in " ".join(pages[q.doc_id]) for m in q.must_include), q.id


def test_the_shipped_question_file_is_the_generators(korean):
    out, _, _, _ = korean
    shipped = Path(__file__).resolve().parents[1] / "data" / "questions" / "korean.jsonl"
    assert shipped.read_text(encoding="utf-8") == (out / "questions.jsonl").read_text(encoding="utf-8")
