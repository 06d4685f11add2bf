"""Rendering: console table, Markdown with misses, PNG chart."""

from __future__ import annotations

from pathlib import Path

from evidence_pipeline.evaluation.metrics import Context, score_question, summarize, whitespace_spans
from evidence_pipeline.evaluation.questions import Question
from evidence_pipeline.evaluation.report import markdown_report, misses, question_ranks, text_report, write_outputs
from evidence_pipeline.evaluation.systems import Answer, SystemRun

Q1 = Question(id="q1", question="Max flow?", doc_id="A", answers=["1.8"], must_include=["cooling jacket"], kind="table_cell")
Q2 = Question(id="q2", question="Batch sizes?", doc_id="B", answers=["0.5 L to 12 L"], kind="prose")
GOOD = Context("cooling jacket: max 1.8", "A", (1,), 5)
NO_WARNING = Context("max 1.8", "A", (1,), 2)
OTHER = Context("0.5 L to 12 L", "C", (1,), 5)


def _run(name: str, contexts: list[list[Context]]) -> SystemRun:
    return SystemRun(name, 3, [Answer(c, score_question(q, c, whitespace_spans)) for q, c in zip([Q1, Q2], contexts)])


def _systems():
    runs = {"fixed512": _run("fixed512", [[NO_WARNING], [OTHER]]), "full": _run("full", [[GOOD], [OTHER]])}
    return runs, {n: summarize([Q1, Q2], [a.scores for a in r.answers], draws=50) for n, r in runs.items()}


def test_text_table_lists_systems_metrics_and_kinds():
    _, systems = _systems()
    text = text_report(systems)
    lines = text.splitlines()
    assert lines[1].split()[:4] == ["system", "n", "ev@1", "ev@5"]
    full_row = next(line for line in lines if line.startswith("full ") and "[" in line)
    assert full_row.split()[1:4] == ["2", "0.500", "0.500"]
    assert "prose (n=1)" in text and "table_cell (n=1)" in text


def test_misses_explain_why():
    runs, _ = _systems()
    assert misses([Q1, Q2], runs["full"]) == {
        "prose": {
            "n_missed": 1,
            "examples": [
                {
                    "id": "q2",
                    "question": "Batch sizes?",
                    "doc_id": "B",
                    "answers": ["0.5 L to 12 L"],
                    "must_include": [],
                    "top_doc": "C",
                    "top_head": "0.5 L to 12 L",
                    "why": "wrong document",
                    "evidence_rank": None,
                }
            ],
        }
    }
    assert misses([Q1, Q2], runs["fixed512"])["table_cell"]["examples"][0]["why"] == "answer without must_include"


def test_outputs_written(tmp_path: Path):
    runs, systems = _systems()
    report = {"systems": systems, "meta": {"n_docs": 2}, "misses": misses([Q1, Q2], runs["full"])}
    paths = write_outputs(report, tmp_path / "out")
    assert [p.name for p in paths] == ["report.json", "report.md", "report.png"]
    md = markdown_report(report)
    assert "### prose: 1 missed" in md and "wrong document" in md
    from PIL import Image

    with Image.open(paths[2]) as img:
        assert img.size[0] >= 420 and img.size[1] > 300


def test_question_ranks_give_each_systems_evidence_rank():
    q3 = Question(id="q3", question="Max flow?", doc_id="A", answers=["1.8"], kind="table_cell")
    later = [OTHER, Context("1.8 in another document", "C", (1,), 4), NO_WARNING]
    runs = {
        "fixed512": SystemRun("fixed512", 3, [Answer(c, {}) for c in ([NO_WARNING], later)]),
        "full": SystemRun("full", 3, [Answer(c, {}) for c in ([OTHER, GOOD], [])]),
    }
    ranks = question_ranks([Q1, q3], runs)
    # Q1 needs "cooling jacket" too: the context without it is no evidence; a figure in
    # another document is none either
    assert ranks == [
        {"id": "q1", "kind": "table_cell", "doc_id": "A", "evidence_rank": {"fixed512": None, "full": 2}},
        {"id": "q3", "kind": "table_cell", "doc_id": "A", "evidence_rank": {"fixed512": 3, "full": None}},
    ]
    md = markdown_report({"systems": _systems()[1], "questions": ranks})
    assert "| q1 | table_cell | - | 2 |" in md and "| q3 | table_cell | 3 | - |" in md
    # under --ablate, the full system's rank with each rule off, question by question
    runs["full"].ablated = {"routing": [Answer([GOOD], {}), Answer(later, {})]}
    assert [r["without"] for r in question_ranks([Q1, q3], runs)] == [{"routing": 1}, {"routing": 3}]
