"""Hand-written question sets are checked against the PDFs' own text: each answer is printed on
the question's page."""

from __future__ import annotations

from pathlib import Path

from evidence_pipeline.evaluation.check_questions import main, problems
from evidence_pipeline.evaluation.questions import Question, load_questions

ROOT = Path(__file__).resolve().parents[1]
PROTOCOLS = ROOT / "data" / "questions" / "protocols.jsonl"
SEC_MORE = ROOT / "data" / "questions" / "sec-10q-more.jsonl"


def test_the_protocol_set_holds_up_on_its_pages(corpora, capsys):
    docs = corpora / "clinical-protocols" / "pdfs"
    questions = load_questions(PROTOCOLS)
    assert len(questions) >= 80 and len({q.doc_id for q in questions}) >= 9
    assert main([str(PROTOCOLS), str(docs)]) == 0
    assert capsys.readouterr().out.strip().endswith(": 0 problems")


def test_the_written_10q_set_holds_up_on_its_pages(corpora, capsys):
    """Each filing's questions name its company and period; a short figure is pinned by its label."""
    questions = load_questions(SEC_MORE)
    assert len(questions) == 60 and len({q.doc_id for q in questions}) == 10
    short = [q for q in questions if any(a.strip("()$%").replace(",", "").isdigit() and len(a.strip("()")) < 5 for a in q.answers)]
    assert len(short) >= 3 and all(q.must_include for q in short)
    assert main([str(SEC_MORE), str(corpora / "sec-10q-dev" / "pdfs")]) == 0
    assert capsys.readouterr().out.strip().endswith(": 0 problems")


def test_a_wrong_page_a_typo_and_a_missing_file_are_reported(corpora):
    docs = corpora / "clinical-protocols" / "pdfs"
    good = next(q for q in load_questions(PROTOCOLS) if q.must_include)
    moved = good.model_copy(update={"id": "moved", "page": good.page + 1})
    typo = good.model_copy(update={"id": "typo", "answers": [good.answers[0] + "7"]})
    label = good.model_copy(update={"id": "label", "must_include": ["a label no page prints"]})
    missing = Question(id="missing", question="?", doc_id="NO_SUCH_FILE", answers=["x"], page=1)
    found = problems([good, moved, typo, label, missing], docs)
    assert [line.split(":")[0] for line in found] == ["moved", "moved", "typo", "label", "missing"]
    assert not any(line.startswith(good.id) for line in found)


def test_a_folder_that_is_not_there_is_one_error(tmp_path, capsys):
    assert main([str(PROTOCOLS), str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
