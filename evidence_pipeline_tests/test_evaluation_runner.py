"""``evaluate_docs``: the same documents and questions give the same report, in any process.

The documents are hand-made ParsedDocs, so the parser (whose own determinism is tested
with it) plays no part: what is tested is indexing, ranking, scoring, the seeded bootstrap
and the rendering, in two interpreters with different hash seeds and thread counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from evidence_pipeline.evaluation.questions import Question
from evidence_pipeline.evaluation.report import markdown_report
from evidence_pipeline.evaluation.runner import evaluate_docs
from evidence_pipeline.evaluation.systems import EvalDoc
from evidence_pipeline_tests.docs import calibration_register, lnp_doc

SYSTEMS = ["fixed512", "bm25_windows", "eu_dense", "full"]  # hybridchunker needs Docling's own document


def _questions() -> list[Question]:
    qs = [
        Question(
            id="q1",
            question="What is the maximum flow rate of Aqueous Phase 1?",
            doc_id="SOP-8812",
            answers=["1.8"],
            must_include=["Table 1: Pump flow rate limits"],
            page=2,
            kind="table_cell",
        ),
        Question(id="q2", question="What particle size is acceptable?", doc_id="SOP-8812", answers=["80 to 100 nm"], kind="prose"),
    ]
    # The 15th tag of each register: PT-1367 and its near twin PT-1368, both every 18 months.
    for n, (doc_id, tag) in enumerate([("SOP-ENG-114", 1367), ("SOP-ENG-411", 1368), ("SOP-ENG-114", 1120)], start=3):
        qs.append(
            Question(
                id=f"q{n}",
                question=f"How often is PT-{tag} calibrated?",
                doc_id=doc_id,
                answers=[f"PT-{tag} on the Suite B2 skid"],
                kind="exact_id",
            )
        )
    return qs


def report_text() -> str:
    """The report of one run as text: its JSON (every figure) and its markdown."""
    docs = [
        EvalDoc(lnp_doc(extra_rows=30)),
        EvalDoc(calibration_register("SOP-ENG-114", 1101)),
        EvalDoc(calibration_register("SOP-ENG-411", 1102)),
    ]
    report = evaluate_docs(docs, _questions(), SYSTEMS, log=lambda message: None)
    return json.dumps(report, ensure_ascii=False) + "\n" + markdown_report(report)


def _run_in_fresh_process(hash_seed: str, threads: str) -> str:
    env = os.environ | {"PYTHONHASHSEED": hash_seed, "OMP_NUM_THREADS": threads}
    code = "from evidence_pipeline_tests.test_evaluation_runner import report_text; print(report_text())"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_two_runs_print_the_same_report():
    first = _run_in_fresh_process("1", "1")
    second = _run_in_fresh_process("2", "2")
    assert first == second
    report = json.loads(first.splitlines()[0])
    assert list(report["systems"]) == SYSTEMS
    # Not a vacuous report: BM25 finds the exact tags, every system sees every question.
    assert report["systems"]["bm25_windows"]["by_kind"]["exact_id"]["evidence_hit@1"] == 1.0
    assert all(block["n"] == 5 for block in report["systems"].values())
    assert report["meta"]["chunks"]["fixed512"] == report["meta"]["chunks"]["bm25_windows"] > 0
    assert "seconds" not in report["meta"]  # timings are the caller's, outside the compared figures
