"""The lookup-set generator's reading of pdfplumber tables: headers in the table or printed
above it, stacked one-row tables, rare values only, stable document names."""

from __future__ import annotations

from pathlib import Path

from evidence_pipeline.evaluation.questions import load_questions
from evidence_pipeline.evaluation.splits import SPLITS, filter_split
from scripts.datasets import lookup_questions as lq


def _cell(text: str, x0: float, top: float, x1: float, bottom: float) -> dict:
    return {"text": text, "box": [x0, top, x1, bottom]}


def _row(top: float, *cells: tuple[str, float, float]) -> list[dict]:
    return [_cell(text, x0, top, x1, top + 10) for text, x0, x1 in cells]


def _statement_page() -> dict:
    """Two shaded one-row tables, the periods printed above them, as a 10-K prints a statement."""
    columns = [(50, 300), (300, 320), (320, 380), (380, 400), (400, 460)]

    def table(top: float, label: str, a: str, b: str) -> dict:
        texts = [label, "$", a, "$", b]
        return {"box": [50, top, 460, top + 10], "rows": [_row(top, *[(t, x0, x1) for t, (x0, x1) in zip(texts, columns)])]}

    words = [["Year", 340, 82, 360, 90], ["ended", 362, 82, 385, 90], ["December", 387, 82, 420, 90], ["31,", 422, 82, 432, 90]]
    words += [["2018", 345, 94, 365, 102], ["2017", 425, 94, 445, 102], ["(Millions)", 55, 94, 95, 102]]
    text = "year ended december 31, (millions) 2018 2017 net sales $ 32,765 $ 31,657 operating income 7,207 7,820"
    return {
        "page": 3,
        "text": text,
        "tables": [table(106, "Net sales", "32,765", "31,657"), table(120, "Operating income", "7,207", "7,820")],
        "words": words,
    }


def test_stacked_shaded_rows_take_the_header_printed_above():
    page = _statement_page()
    blocks = lq.blocks_of(page)
    assert len(blocks) == 1 and len(blocks[0].rows) == 2
    found, headed = lq.block_candidates(blocks[0], page, [])
    assert headed
    asked = {(c.row, c.column, c.value) for c in found}
    assert ("Net sales", "Year ended December 31, 2018", "32,765") in asked
    assert ("Operating income", "Year ended December 31, 2017", "7,820") in asked


def test_header_row_inside_a_ruled_table():
    rows = [
        _row(100, ("Grade", 50, 150), ("Recommendation", 150, 400)),
        _row(110, ("Grade 3", 50, 150), ("Withhold until Grade 1", 150, 400)),
        _row(120, ("Grade 4", 50, 150), ("Discontinue permanently", 150, 400)),
    ]
    page = {
        "page": 7,
        "text": "grade recommendation grade 3 withhold until grade 1 grade 4 discontinue permanently",
        "tables": [{"box": [50, 100, 400, 130], "rows": rows}],
    }
    found, headed = lq.block_candidates(lq.blocks_of(page)[0], page, [])
    assert headed and {(c.row, c.column, c.value) for c in found} == {
        ("Grade 3", "Recommendation", "Withhold until Grade 1"),
        ("Grade 4", "Recommendation", "Discontinue permanently"),
    }


def test_only_rare_values_printed_on_their_page_are_asked():
    page = _statement_page()
    data = {"pages": [page, {"page": 4, "text": "net sales grew to 32,765 and then 32,765 again", "tables": []}]}
    candidates, stats = lq.document_candidates(data, max_occurrences=2)
    values = {c.value for c in candidates}
    assert "32,765" not in values  # printed three times in the document
    assert {"31,657", "7,207", "7,820"} <= values
    assert stats["value too common"] == 1


def test_values_and_labels():
    assert lq.clean("Net income.............................. ") == "Net income"
    assert lq.clean("Cash paid:\n for interest") == "Cash paid: for interest"
    assert lq.is_numeric("(1,234)") and lq.is_numeric("$ 12.5 %") and not lq.is_numeric("Q4 2017")
    assert lq.is_header_text("2018") and not lq.is_header_text("1,804")
    assert not lq.is_value("—") and not lq.is_value("$") and lq.is_value("(0.9)")


def test_document_names():
    assert lq.document_name("2023 Q1 AAPL") == "Apple's 2023 Q1 10-Q"
    assert lq.document_name("JOHNSON_JOHNSON_2022Q4_EARNINGS") == "Johnson & Johnson's 2022 Q4 earnings release"
    assert lq.document_name("MGMRESORTS_2022Q4_EARNINGS") == "MGM Resorts' 2022 Q4 earnings release"
    assert lq.document_name("AMCOR_2022_8K_dated-2022-07-01") == "Amcor's 8-K dated 2022-07-01"
    assert lq.document_name("NCT06158269_Prot_000") == "protocol NCT06158269"
    assert lq.document_name("NCT01144338_Prot_000").startswith("EXSCEL")


def test_questions_are_seeded_and_capped():
    candidates = [lq.Candidate(page=1 + i // 10, row=f"Row {i}", column="2018", value=f"{1000 + i:,}", order=i) for i in range(50)]
    first = lq.document_questions("DOC", list(candidates), per_doc=20)
    again = lq.document_questions("DOC", list(candidates), per_doc=20)
    assert [q.model_dump() for q in first] == [q.model_dump() for q in again]
    assert len(first) == 20 and all(q.kind == "lookup" and q.page for q in first)
    assert [q.page for q in first] == sorted(q.page for q in first)


def test_shipped_lookup_set():
    path = Path(__file__).resolve().parents[1] / "data" / "questions" / "lookup.jsonl"
    questions = load_questions(path)
    docs = {q.doc_id for q in questions}
    assert len(questions) >= 2000 and len(docs) >= 40
    assert max(sum(q.doc_id == d for q in questions) for d in docs) <= 80
    assert all(q.kind == "lookup" and q.page for q in questions)
    assert all(filter_split(questions, s) for s in SPLITS)
