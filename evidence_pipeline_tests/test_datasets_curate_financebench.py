"""Reducing FinanceBench questions to strings printed on their evidence pages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evidence_pipeline.evaluation.questions import load_questions
from scripts.datasets import curate_financebench

ULTA = "ULTABEAUTY_2023Q4_EARNINGS"  # 9 pages: the smallest filing of the set


def _corpus(tmp_path: Path, corpora: Path) -> Path:
    source = corpora / "financebench-dev"
    rows = [json.loads(line) for line in (source / "questions.jsonl").read_text().splitlines() if line.strip()]
    corpus = tmp_path / "fb"
    (corpus / "pdfs").mkdir(parents=True)
    shutil.copy(source / "pdfs" / f"{ULTA}.pdf", corpus / "pdfs")
    keep = [r for r in rows if r["doc_id"] == ULTA]
    keep.append({**keep[0], "id": "missing-doc", "doc_id": "NOPE"})
    (corpus / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in keep) + "\n")
    return corpus


def test_curate_keeps_printed_reductions_and_says_why_it_drops(tmp_path: Path, corpora: Path, monkeypatch):
    corpus = _corpus(tmp_path, corpora)
    reductions = dict(curate_financebench.REDUCTIONS)
    # One reduction that is not printed on its page must be dropped, not trusted.
    reductions["financebench_id_00606"] = {"answers": ["a phrase the release never prints"]}
    reductions["missing-doc"] = {"answers": ["47 new stores"]}
    monkeypatch.setattr(curate_financebench, "REDUCTIONS", reductions)
    out = tmp_path / "fb.jsonl"
    assert curate_financebench.main(["--corpus", str(corpus), "--out", str(out)]) == 0
    questions = {q.id: q for q in load_questions(out)}
    assert set(questions) == {"financebench_id_00601", "financebench_id_00603", "financebench_id_00605"}
    q = questions["financebench_id_00605"]
    assert (q.doc_id, q.answers, q.must_include, q.page) == (ULTA, ["$328.1 million"], ["$900.0 million"], 3)
    notes = json.loads(out.with_suffix(".curation.json").read_text())
    reasons = {d["id"]: d.get("reason") for d in notes["decisions"]}
    assert reasons["financebench_id_00606"] == "['a phrase the release never prints'] not printed on page 2"
    assert reasons["missing-doc"] == "source PDF NOPE.pdf not in the corpus"


def test_shipped_financebench_questions_follow_the_format():
    path = Path(__file__).resolve().parents[1] / "data" / "questions" / "financebench.jsonl"
    questions = load_questions(path)
    assert len(questions) == 25
    assert all(q.page and q.answers for q in questions)
    assert len({q.doc_id for q in questions}) == 8


def test_shipped_financebench_more_questions_follow_the_format():
    root = Path(__file__).resolve().parents[1] / "data" / "questions"
    questions = load_questions(root / "financebench-more.jsonl")
    assert len(questions) == 38 and len({q.doc_id for q in questions}) == 22
    assert all(q.page and q.answers for q in questions)
    notes = json.loads((root / "financebench-more.curation.json").read_text())
    assert (notes["questions"], notes["kept"]) == (38, len(questions))
    # One table of reductions serves both corpora: no id of one is an id of the other.
    assert not {q.id for q in questions} & {q.id for q in load_questions(root / "financebench.jsonl")}
