"""Dev / validation halves by document: fixed by doc_id, balanced, never splitting a document."""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from evidence_pipeline.cli import main
from evidence_pipeline.evaluation.questions import Question, load_questions
from evidence_pipeline.evaluation.splits import CHOICES, SPLITS, filter_split, split_of

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "questions"


def _questions(n_docs: int, per_doc: int = 3) -> list[Question]:
    return [
        Question(id=f"d{d}-q{i}", question=f"q {i} of doc {d}", doc_id=f"DOC-{d:04d}", answers=[f"answer {d}.{i}"])
        for i in range(per_doc)
        for d in range(n_docs)
    ]


def test_a_document_always_falls_in_the_same_half():
    # Pinned: a change of hash or bit would move documents between halves and void every past score.
    assert [split_of(d) for d in ("3M_2018_10K", "NCT00230607_Prot_000", "2023 Q1 AAPL", "SOP-8812")] == [
        "dev",
        "validation",
        "validation",
        "validation",
    ]
    assert all(split_of(f"DOC-{i}") == split_of(f"DOC-{i}") for i in range(200))
    # The pipeline names documents in NFC; a file name in NFD is the same document.
    name = "Präparat-Ü"
    assert split_of(unicodedata.normalize("NFD", name)) == split_of(unicodedata.normalize("NFC", name))


def test_halves_are_balanced_within_reason():
    counts = Counter(split_of(f"DOC-{i:05d}") for i in range(2000))
    assert set(counts) == set(SPLITS)
    assert 0.45 < counts["dev"] / 2000 < 0.55


def test_filter_keeps_every_question_of_a_document_together():
    questions = _questions(60)
    dev, validation = filter_split(questions, "dev"), filter_split(questions, "validation")
    assert dev and validation
    assert {q.id for q in dev}.isdisjoint(q.id for q in validation)
    assert len(dev) + len(validation) == len(questions)
    dev_docs, validation_docs = {q.doc_id for q in dev}, {q.doc_id for q in validation}
    assert dev_docs.isdisjoint(validation_docs)
    per_doc = Counter(q.doc_id for q in questions)
    assert all(per_doc[d] == sum(q.doc_id == d for q in dev) for d in dev_docs)
    assert [q.id for q in dev] == [q.id for q in questions if q.doc_id in dev_docs]  # order kept
    assert filter_split(questions, "all") == questions
    with pytest.raises(ValueError, match="unknown split"):
        filter_split(questions, "test")


@pytest.mark.parametrize(
    "name", ["sponsor-protocols.jsonl", "financebench-more.jsonl", "lookup.jsonl", "protocols.jsonl", "sec-10q-more.jsonl"]
)
def test_shipped_sets_have_both_halves(name: str):
    questions = load_questions(QUESTIONS / name)
    halves = {s: filter_split(questions, s) for s in SPLITS}
    assert all(halves.values())
    assert sum(len(h) for h in halves.values()) == len(questions)


def test_eval_split_option(tmp_path: Path, capsys):
    doc = next(f"DOC-{i}" for i in range(100) if split_of(f"DOC-{i}") == "validation")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "q1", "question": "?", "doc_id": doc, "answers": ["x"]}) + "\n")
    # Nothing of the file is in the dev half: a clear error before any document is read.
    assert main(["eval", "--docs", str(tmp_path), "--questions", str(path), "--split", "dev"]) == 2
    assert "dev split" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["eval", "--docs", str(tmp_path), "--questions", str(path), "--split", "test"])
    assert "choose from " + ", ".join(f"'{c}'" for c in CHOICES) in capsys.readouterr().err
