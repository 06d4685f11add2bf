"""Reducing long-form SEC answers to printed figures, and checking them against the PDF."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from evidence_pipeline.evaluation.questions import load_questions
from evidence_pipeline.tools.samples.corpus import build_corpus
from scripts.datasets import curate_sec
from scripts.datasets.curate_sec import doc_id_of, reduce_answer


@pytest.mark.parametrize(
    "answer, figure",
    [
        ("were $63,355 million, while", "63,355"),
        ("net cash from operations of $23.198 billion for", "23,198"),
        ("had $1.7 billion of Commercial Paper", "1.7 billion"),
        ("interest expense was $490 million", "490"),
        ("expenses were 34.9% of revenue", None),
    ],
)
def test_reduce_answer(answer, figure):
    assert reduce_answer(answer) == figure


def test_doc_id_of_source_docs_column():
    assert doc_id_of("*2022 Q3 AAPL*") == "2022 Q3 AAPL"


def test_curate_keeps_checked_figures_and_says_why_it_drops(tmp_path: Path, monkeypatch):
    corpus = tmp_path / "corpus"
    (corpus / "pdfs").mkdir(parents=True)
    doc_id, pdf, _ = build_corpus()[0]  # SOP-8812
    (corpus / "pdfs" / f"{doc_id}.pdf").write_bytes(pdf)
    rows = [
        ("What is the smallest batch?", f"*{doc_id}*", "Table", "The smallest batch is 0.5 L, about $12 million."),
        ("Is the mixer blue?", f"*{doc_id}*", "Text", "The document does not say."),
        ("What is the largest batch?", f"*{doc_id}*", "Text", "It is 12 L."),
        ("Missing file?", "*NOPE*", "Text", "It was $5 million."),
    ]
    with open(corpus / "questions.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Question", "Source Docs", "Question Type", "Source Chunk Type", "Answer"])
        w.writerows([(q, d, "Single-Doc Single-Chunk RAG", t, a) for q, d, t, a in rows])
    # Row 0: the automatic figure ("12") is not what the question asks; the override is.
    monkeypatch.setattr(curate_sec, "OVERRIDES", {0: {"answers": ["0.5 L"], "must_include": ["12 L"]}, 2: {"answers": ["99 L"]}})
    out = tmp_path / "sec.jsonl"
    assert curate_sec.main(["--corpus", str(corpus), "--out", str(out), "--cache", str(tmp_path / "cache")]) == 0
    (q,) = load_questions(out)
    assert (q.id, q.doc_id, q.answers, q.must_include, q.kind, q.page) == ("sec-q00", doc_id, ["0.5 L"], ["12 L"], "table_cell", 1)
    notes = json.loads(out.with_suffix(".curation.json").read_text())
    assert (notes["rows"], notes["kept"], notes["dropped"]) == (4, 1, 3)
    reasons = [d.get("reason") for d in notes["decisions"]]
    assert reasons[1] == "no figure found in the answer"
    assert reasons[2] == "'99 L' not found in the PDF text"
    assert reasons[3] == "source PDF NOPE.pdf not in the corpus"
    assert (tmp_path / "cache" / f"{doc_id}.json").is_file()


def test_shipped_sec_questions_are_in_their_documents():
    path = Path(__file__).resolve().parents[1] / "data" / "questions" / "sec-10q.jsonl"
    if not path.is_file():
        pytest.skip("data/questions/sec-10q.jsonl not generated")
    questions = load_questions(path)
    assert len(questions) >= 25
    assert all(q.doc_id.startswith(("2022 Q3", "2023 Q1")) for q in questions)


def test_corpus_has_no_default():
    with pytest.raises(SystemExit) as exc:
        curate_sec.main(["--out", "unused.jsonl"])
    assert exc.value.code == 2
