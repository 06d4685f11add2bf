"""Loading and validating question files (FORMAT.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidence_pipeline.evaluation.questions import QuestionFileError, load_questions, parse_questions, write_questions
from evidence_pipeline.tools.samples.corpus import write_questions as write_sample_questions

LINE = {
    "id": "q17",
    "question": "Max flow?",
    "doc_id": "SOP-8812",
    "answers": ["1.8"],
    "must_include": ["cooling jacket"],
    "kind": "table_cell",
}


def test_format_example_loads_with_defaults():
    (q,) = parse_questions([json.dumps(LINE)])
    assert (q.id, q.doc_id, q.answers, q.must_include, q.page, q.kind) == (
        "q17",
        "SOP-8812",
        ["1.8"],
        ["cooling jacket"],
        None,
        "table_cell",
    )
    (bare,) = parse_questions([json.dumps({k: LINE[k] for k in ("id", "question", "doc_id", "answers")})])
    assert bare.must_include == [] and bare.kind_or_default == "unspecified"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"answers": []}, "line 1: answers"),
        ({"answers": [" "]}, "line 1: answers"),
        ({"page": 0}, "line 1: page"),
        ({"doc_id": ""}, "line 1: doc_id"),
    ],
)
def test_invalid_records_name_the_line_and_field(change, message):
    with pytest.raises(QuestionFileError, match=message.replace("line 1", r"<questions>:1")):
        parse_questions([json.dumps({**LINE, **change})])


def test_missing_field_duplicate_id_and_bad_json():
    with pytest.raises(QuestionFileError, match=r":1: answers"):
        parse_questions([json.dumps({k: v for k, v in LINE.items() if k != "answers"})])
    with pytest.raises(QuestionFileError, match=r":3: id 'q17' already used on line 1"):
        parse_questions([json.dumps(LINE), "", json.dumps(LINE)])
    with pytest.raises(QuestionFileError, match=r":1: not JSON"):
        parse_questions(["{oops"])


def test_round_trip(tmp_path: Path):
    questions = parse_questions([json.dumps(LINE)])
    path = write_questions(questions, tmp_path / "q.jsonl")
    assert load_questions(path) == questions


def test_sample_corpus_questions_follow_the_format(tmp_path: Path):
    questions = load_questions(write_sample_questions(tmp_path / "sop.jsonl"))
    assert len(questions) >= 40
    assert {q.kind for q in questions} >= {"table_cell", "footnote", "exact_id", "prose"}
    assert all(q.page is not None for q in questions)


def test_shipped_question_files_load():
    root = Path(__file__).resolve().parents[1] / "data" / "questions"
    files = sorted(root.glob("*.jsonl"))
    assert files, "data/questions/*.jsonl missing"
    for path in files:
        assert load_questions(path), path
