"""Each rule's contribution: the full system's score minus the score with the rule off, with an
interval over documents; the rules are switched by name."""

import pytest

from evidence_pipeline.evaluation.ablation import ablation_table, contributions
from evidence_pipeline.evaluation.metrics import Context
from evidence_pipeline.evaluation.questions import Question
from evidence_pipeline.evaluation.systems import Answer
from evidence_pipeline.retrieval.rules import ALL_RULES, RULE_NAMES


def _answer(hit1, hit5, first="a"):
    scores = {"evidence_hit@1": hit1, "evidence_hit@5": hit5, "budget_hit@1000": hit5}
    return Answer([Context(text=first, doc_id="D", pages=(1,), n_tokens=1)], scores)


def _questions(n_docs, per_doc):
    return [Question(id=f"q{d}-{i}", question="?", doc_id=f"D{d}", answers=["x"]) for d in range(n_docs) for i in range(per_doc)]


def test_a_rule_that_wins_every_first_answer_gains_one_point_per_question():
    questions = _questions(4, 2)
    full = [_answer(1.0, 1.0) for _ in questions]
    without = {"named_rows": [_answer(0.0, 1.0, "b") for _ in questions], "routing": [_answer(1.0, 1.0) for _ in questions]}
    table = contributions(questions, full, without)
    assert table["named_rows"]["evidence_hit@1"] == {"full": 1.0, "without": 0.0, "gain": 1.0, "ci95": [1.0, 1.0]}
    assert table["named_rows"]["evidence_hit@5"]["gain"] == 0.0
    assert (table["named_rows"]["changed"], table["routing"]["changed"]) == (8, 0)
    assert table["routing"]["evidence_hit@1"]["gain"] == 0.0


def test_the_interval_resamples_documents():
    questions = _questions(2, 3)  # D0 gains 1 on each question, D1 loses 1 on each
    full = [_answer(1.0 if q.doc_id == "D0" else 0.0, 1.0) for q in questions]
    without = {"reference_last": [_answer(0.0 if q.doc_id == "D0" else 1.0, 1.0) for q in questions]}
    entry = contributions(questions, full, without)["reference_last"]["evidence_hit@1"]
    assert entry["gain"] == 0.0
    assert entry["ci95"] == [-1.0, 1.0]  # a draw of D0 twice gains 1, of D1 twice loses 1
    header, rows = ablation_table({"reference_last": contributions(questions, full, without)["reference_last"]})
    assert header[0] == "rule" and rows[0][0] == "reference_last"
    assert rows[0][1] == "+0.0 (-100.0, +100.0)"


def test_rules_switch_by_name():
    assert set(RULE_NAMES) >= {"routing", "named_statements", "named_rows", "lexical_tables", "whole_table", "reference_last"}
    off = ALL_RULES.without("routing")
    assert not off.routing and off.named_rows and ALL_RULES.routing
    with pytest.raises(ValueError, match="no ranking rule 'sentence_size'"):
        ALL_RULES.without("sentence_size")
