"""End to end: `evidence-pipeline eval` on two generated SOPs, all five systems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidence_pipeline.cli import main
from evidence_pipeline.evaluation.metrics import METRICS
from evidence_pipeline.evaluation.questions import load_questions, write_questions
from evidence_pipeline.evaluation.systems import SYSTEMS
from evidence_pipeline.tools.samples.corpus import build_corpus
from evidence_pipeline.tools.samples.corpus import write_questions as write_sample_questions

DOCS = ("SOP-QA-070", "SOP-QA-007")  # near-twin IDs: only the document decides exact_id questions


@pytest.fixture(scope="module")
def eval_run(tmp_path_factory) -> tuple[dict, Path, str]:
    root = tmp_path_factory.mktemp("eval")
    corpus = root / "corpus"
    corpus.mkdir()
    for doc_id, pdf, _ in build_corpus():
        if doc_id in DOCS:
            (corpus / f"{doc_id}.pdf").write_bytes(pdf)
    every = load_questions(write_sample_questions(root / "all.jsonl"))
    # A few per document, every kind they have, plus one about a document not indexed.
    picked = [q for d in DOCS for q in [q for q in every if q.doc_id == d][:4]]
    foreign = next(q for q in every if q.doc_id not in DOCS)
    questions = write_questions([*picked, foreign], root / "q.jsonl")
    out = root / "out"
    import contextlib
    import io

    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        rc = main(
            ["eval", "--docs", str(corpus), "--questions", str(questions), "--json", "--out", str(out), "--quiet"]
            + ["--ablate", "routing", "whole_table"]
        )
    assert rc == 0
    return json.loads(stdout.getvalue()), out, stdout.getvalue()


def test_json_is_one_object_with_every_system(eval_run):
    report, _, raw = eval_run
    assert raw.count("\n") == 1  # one line, nothing else on stdout
    assert list(report) == ["systems"]
    assert list(report["systems"]) == list(SYSTEMS)
    for name, block in report["systems"].items():
        assert block["n"] == 8, name  # the foreign question is left out
        assert set(METRICS) <= set(block["overall"])
        for metric in METRICS:
            value = block["overall"][metric]
            if metric != "tokens_per_context":
                assert 0.0 <= value <= 1.0, (name, metric)
        assert (
            block["overall"]["evidence_hit@1_ci95_low"]
            <= block["overall"]["evidence_hit@1"]
            <= block["overall"]["evidence_hit@1_ci95_high"]
        )
        assert sum(k["n"] for k in block["by_kind"].values()) == 8


def test_systems_retrieve_from_the_two_documents(eval_run):
    systems = eval_run[0]["systems"]
    for name in SYSTEMS:
        assert systems[name]["overall"]["doc_hit@5"] >= 0.75, name
    assert systems["full"]["overall"]["doc_hit@5"] == 1.0
    # Parent-child systems hand over whole units; windows are capped at 512 pieces.
    assert systems["fixed512"]["overall"]["tokens_per_context"] <= 512
    assert systems["full"]["overall"]["evidence_hit@5"] >= 0.5


def test_out_dir_holds_json_markdown_and_chart(eval_run):
    report, out, _ = eval_run
    full = json.loads((out / "report.json").read_text())
    assert full["systems"] == report["systems"]
    assert full["meta"]["docs"] == sorted(DOCS)
    assert full["meta"]["chunks"]["eu_dense"] == full["meta"]["chunks"]["full"] > 0
    md = (out / "report.md").read_text()
    assert "| full |" in md and "evidence_hit@1 by kind" in md
    assert (out / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_question_file_is_a_clear_error(tmp_path: Path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    assert main(["eval", "--docs", str(tmp_path), "--questions", str(bad)]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


def test_cli_offers_every_system(tmp_path: Path, capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--docs", str(tmp_path), "--questions", "q.jsonl", "--systems", "bm25"])
    err = capsys.readouterr().err
    assert "choose from " + ", ".join(f"'{s}'" for s in SYSTEMS) in err


def test_ablate_writes_each_rules_contribution_to_the_report(eval_run):
    _, out, _ = eval_run
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert list(report["ablation"]) == ["routing", "whole_table"]
    full = report["systems"]["full"]["overall"]["evidence_hit@1"]
    for rule, entry in report["ablation"].items():
        block = entry["evidence_hit@1"]
        assert block["full"] == pytest.approx(full), rule
        assert block["gain"] == pytest.approx(block["full"] - block["without"]), rule
        assert block["ci95"][0] <= block["gain"] <= block["ci95"][1], rule
    assert "## What each ranking rule adds to `full`" in (out / "report.md").read_text(encoding="utf-8")


def test_ablate_rejects_a_rule_that_does_not_exist(tmp_path: Path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "q", "question": "?", "doc_id": "D", "answers": ["x"]}\n', encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "D.md").write_text("# D\n\nx\n", encoding="utf-8")
    assert main(["eval", "--docs", str(tmp_path / "docs"), "--questions", str(questions), "--ablate", "nope"]) == 2
    assert "no ranking rule 'nope'" in capsys.readouterr().err
