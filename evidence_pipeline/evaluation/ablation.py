"""What each ranking rule adds: the full system beside itself with one rule off.

``eval --ablate`` asks every question of the full system's store once per rule of
``retrieval.rules.Rules`` with that rule off (the store is built once; only the ranking
changes). A rule's contribution is the full system's score minus the score without it, per
question, averaged; its 95% interval resamples whole documents (``metrics.bootstrap_ci``),
since the questions of one document rise and fall together. Run it on a validation half
(``--split validation``): a rule stays only where its contribution there is positive.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evidence_pipeline.evaluation.metrics import BUDGET_TOKENS, HEADLINE, bootstrap_ci

if TYPE_CHECKING:  # the report page renders the table without the systems' imports
    from evidence_pipeline.evaluation.questions import Question
    from evidence_pipeline.evaluation.systems import Answer


def _first(answer: Answer) -> tuple[str, str] | None:
    return (answer.contexts[0].doc_id, answer.contexts[0].text) if answer.contexts else None


ABLATED_METRICS = (HEADLINE, "evidence_hit@5", f"budget_hit@{BUDGET_TOKENS}")


def contributions(
    questions: Sequence[Question], full: Sequence[Answer], without: Mapping[str, Sequence[Answer]]
) -> dict[str, dict[str, Any]]:
    """``{rule: {metric: {"full", "without", "gain", "ci95"}, "changed": n}}``: for each rule, the
    mean of each of ``ABLATED_METRICS`` with every rule and with that rule off, their difference,
    its interval over documents, and how many questions' first context changed."""
    groups = [q.doc_id for q in questions]
    out: dict[str, dict[str, Any]] = {}
    for rule, answers in without.items():
        if len(answers) != len(full):
            raise ValueError(f"{rule}: {len(answers)} answers for {len(full)} questions")
        rows = [a.scores for a in answers]
        entry: dict[str, Any] = {}
        for metric in ABLATED_METRICS:
            gains = [float(f.scores[metric] or 0.0) - float(w[metric] or 0.0) for f, w in zip(full, rows)]
            lo, hi = bootstrap_ci(gains, groups)
            entry[metric] = {
                "full": sum(float(f.scores[metric] or 0.0) for f in full) / len(full),
                "without": sum(float(w[metric] or 0.0) for w in rows) / len(rows),
                "gain": sum(gains) / len(gains),
                "ci95": [lo, hi],
            }
        entry["changed"] = sum(1 for f, w in zip(full, answers) if _first(f) != _first(w))
        out[rule] = entry
    return out


def ablation_table(ablation: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: each rule's gain per metric with its interval, in points."""
    header = ["rule", *(f"{m} gain (95% CI)" for m in ABLATED_METRICS), "first changed"]
    rows = []
    for rule, entry in ablation.items():
        cells = []
        for metric in ABLATED_METRICS:
            m = entry[metric]
            lo, hi = m["ci95"]
            cells.append(f"{100 * m['gain']:+.1f} ({100 * lo:+.1f}, {100 * hi:+.1f})")
        rows.append([rule, *cells, str(entry["changed"])])
    return header, rows
