"""Hand-made cases where each metric of FORMAT.md must be exactly 0 or 1."""

from __future__ import annotations

import pytest

from evidence_pipeline.evaluation.metrics import (
    Context,
    bootstrap_ci,
    budget_hit,
    budget_text,
    doc_hit_at,
    evidence_hit_at,
    has_evidence,
    normalize,
    page_hit_at,
    reciprocal_rank,
    score_question,
    summarize,
    tokens_per_context,
    whitespace_spans,
)
from evidence_pipeline.evaluation.questions import Question

Q = Question(
    id="q1",
    question="What is the maximum flow rate for Aqueous Phase 1?",
    doc_id="SOP-8812",
    answers=["1.8"],
    must_include=["cooling jacket"],
    page=2,
    kind="table_cell",
)
HIT = Context("WARNING: confirm the Cooling\n  Jacket is active. Aqueous Phase 1 | 0.6 | 1.8", "SOP-8812", (2,), 14)
NO_WARNING = Context("Aqueous Phase 1 | 0.6 | 1.8", "SOP-8812", (2,), 6)
TWIN_DOC = Context(HIT.text, "SOP-8821", (2,), 14)
OTHER_PAGE = Context("Unrelated text about seals.", "SOP-8812", (3,), 4)
FOREIGN = Context("Nothing relevant here.", "SOP-1000", (1,), 3)


def test_normalize_folds_case_width_and_space():
    assert normalize("  ＡＢＣ\u00a0 Def\n\tGHI ") == "abc def ghi"
    assert normalize("Straße") == "strasse"
    assert normalize("25 cm²") == "25 cm2"  # NFKC turns the superscript into a digit


def test_evidence_needs_answer_and_every_must_include():
    assert has_evidence(HIT.text, Q)
    assert not has_evidence(NO_WARNING.text, Q)
    assert has_evidence("value 1.8, cooling jacket", Q.model_copy(update={"must_include": []}))
    assert has_evidence("the answer is 2.0 or so; cooling jacket", Q.model_copy(update={"answers": ["1.8", "2.0"]}))


def test_evidence_hit_at_k():
    assert evidence_hit_at([HIT], Q, 1) == 1.0
    assert evidence_hit_at([NO_WARNING, HIT], Q, 1) == 0.0
    assert evidence_hit_at([NO_WARNING, HIT], Q, 5) == 1.0
    # Right text, wrong document: the near-twin ID must not count.
    assert evidence_hit_at([TWIN_DOC], Q, 5) == 0.0
    assert evidence_hit_at([FOREIGN] * 5 + [HIT], Q, 5) == 0.0
    assert evidence_hit_at([], Q, 5) == 0.0


def test_doc_hit_at_k():
    assert doc_hit_at([OTHER_PAGE], Q, 1) == 1.0
    assert doc_hit_at([FOREIGN, OTHER_PAGE], Q, 1) == 0.0
    assert doc_hit_at([FOREIGN, OTHER_PAGE], Q, 5) == 1.0
    assert doc_hit_at([TWIN_DOC], Q, 5) == 0.0


def test_page_hit_at_5():
    assert page_hit_at([FOREIGN, NO_WARNING], Q, 5) == 1.0
    assert page_hit_at([OTHER_PAGE], Q, 5) == 0.0
    assert page_hit_at([TWIN_DOC], Q, 5) == 0.0  # page 2 of another document
    assert page_hit_at([OTHER_PAGE] * 5 + [HIT], Q, 5) == 0.0
    assert page_hit_at([HIT], Q.model_copy(update={"page": None}), 5) is None


def test_reciprocal_rank_at_10():
    assert reciprocal_rank([HIT], Q) == 1.0
    assert reciprocal_rank([FOREIGN, HIT], Q) == 0.5
    assert reciprocal_rank([FOREIGN] * 3 + [HIT], Q) == 0.25
    assert reciprocal_rank([FOREIGN] * 10 + [HIT], Q) == 0.0
    assert reciprocal_rank([NO_WARNING, TWIN_DOC], Q) == 0.0


def test_budget_cut_and_hit():
    a = Context("one two three", "SOP-8812")
    b = Context("cooling jacket 1.8", "SOP-8812")
    assert budget_text([a, b], 3, whitespace_spans) == "one two three"
    assert budget_text([a, b], 5, whitespace_spans) == "one two three\n\ncooling jacket"
    assert budget_hit([a, b], Q, 5, whitespace_spans) == 0.0  # 1.8 is the sixth token
    assert budget_hit([a, b], Q, 6, whitespace_spans) == 1.0
    # Answer and warning may sit in different contexts within the budget.
    split = [Context("cooling jacket on", "SOP-8812"), Context("max 1.8", "SOP-8812")]
    assert budget_hit(split, Q, 1000, whitespace_spans) == 1.0
    assert budget_hit([], Q, 1000, whitespace_spans) == 0.0


def test_tokens_per_context_is_the_mean():
    assert tokens_per_context([HIT, NO_WARNING]) == 10.0
    assert tokens_per_context([]) is None


def test_score_question_all_ones_and_all_zeros():
    ones = score_question(Q, [HIT], whitespace_spans)
    assert {k: v for k, v in ones.items() if k != "tokens_per_context"} == {
        "evidence_hit@1": 1.0,
        "evidence_hit@5": 1.0,
        "doc_hit@1": 1.0,
        "doc_hit@5": 1.0,
        "page_hit@5": 1.0,
        "mrr@10": 1.0,
        "budget_hit@1000": 1.0,
    }
    zeros = score_question(Q, [FOREIGN], whitespace_spans)
    assert all(v == 0.0 for k, v in zeros.items() if k != "tokens_per_context")
    assert zeros["tokens_per_context"] == 3.0


def test_summarize_overall_by_kind_and_ci():
    q2 = Q.model_copy(update={"id": "q2", "doc_id": "SOP-1000", "kind": "prose", "page": None})
    rows = [score_question(Q, [HIT], whitespace_spans), score_question(q2, [HIT], whitespace_spans)]
    summary = summarize([Q, q2], rows, draws=200)
    assert summary["n"] == 2
    assert summary["overall"]["evidence_hit@1"] == 0.5
    assert summary["overall"]["page_hit@5"] == 1.0  # only q1 gives a page
    assert summary["overall"]["n_page"] == 1
    assert summary["by_kind"]["table_cell"]["evidence_hit@1"] == 1.0
    assert summary["by_kind"]["prose"]["evidence_hit@1"] == 0.0
    assert summary["by_kind"]["prose"]["page_hit@5"] is None
    assert summary["overall"]["evidence_hit@1_ci95_low"] == 0.0
    assert summary["overall"]["evidence_hit@1_ci95_high"] == 1.0


def test_summarize_scores_the_must_include_subset():
    q2 = Q.model_copy(update={"id": "q2", "must_include": [], "kind": "prose"})
    rows = [score_question(Q, [NO_WARNING], whitespace_spans), score_question(q2, [HIT], whitespace_spans)]
    summary = summarize([Q, q2], rows, draws=50)
    assert summary["overall"]["evidence_hit@1"] == 0.5
    assert summary["subsets"]["must_include"]["n"] == 1
    assert summary["subsets"]["must_include"]["evidence_hit@1"] == 0.0


def test_bootstrap_resamples_documents_and_is_seeded():
    values = [1.0, 1.0, 1.0, 0.0]
    groups = ["a", "a", "a", "b"]
    first = bootstrap_ci(values, groups, draws=500, seed=7)
    assert first == bootstrap_ci(values, groups, draws=500, seed=7)
    # Drawing whole documents: the mean can only be 0, 3/4 (or mixes weighted by size) or 1.
    assert first[0] <= 0.75 <= first[1]
    assert bootstrap_ci([1.0, 1.0], ["a", "b"]) == (1.0, 1.0)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0], ["a", "b"])
