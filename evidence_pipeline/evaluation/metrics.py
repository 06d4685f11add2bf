"""Retrieval metrics of ``shared/eval/FORMAT.md`` as pure functions.

A system answers a question with a ranked list of ``Context``s (the text handed
to the language model per hit). Matching normalises both sides (NFKC, casefold,
white-space runs collapsed to one space) and searches substrings. Token counts
come from a ``TokenSpans`` callable (character spans of the embedding
tokenizer's pieces), so tests can pass a whitespace tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evidence_pipeline.evaluation.questions import Question
from evidence_pipeline.text import normalise

TokenSpans = Callable[[str], list[tuple[int, int]]]

K_MAX = 10  # contexts retrieved per question (mrr@10)
BUDGET_TOKENS = 1000
CONTEXT_SEPARATOR = "\n\n"

METRICS = (
    "evidence_hit@1",
    "evidence_hit@5",
    "doc_hit@1",
    "doc_hit@5",
    "page_hit@5",
    "mrr@10",
    f"budget_hit@{BUDGET_TOKENS}",
    "tokens_per_context",
)
HEADLINE = "evidence_hit@1"


@dataclass(frozen=True)
class Context:
    text: str
    doc_id: str
    pages: tuple[int, ...] = ()
    n_tokens: int = 0


def normalize(text: str) -> str:
    """FORMAT.md's matching: NFKC, case-folded, runs of white space collapsed (``text.normalise``)."""
    return normalise(text)


def has_evidence(text: str, question: Question) -> bool:
    """The text holds one of the answers and every must_include string (no document check)."""
    norm = normalize(text)
    return any(normalize(a) in norm for a in question.answers) and all(normalize(m) in norm for m in question.must_include)


def is_evidence_hit(context: Context, question: Question) -> bool:
    return context.doc_id == question.doc_id and has_evidence(context.text, question)


def evidence_hit_at(contexts: Sequence[Context], question: Question, k: int) -> float:
    return float(any(is_evidence_hit(c, question) for c in contexts[:k]))


def doc_hit_at(contexts: Sequence[Context], question: Question, k: int) -> float:
    return float(any(c.doc_id == question.doc_id for c in contexts[:k]))


def page_hit_at(contexts: Sequence[Context], question: Question, k: int) -> float | None:
    """None when the question gives no page. A page only counts in the question's document."""
    if question.page is None:
        return None
    return float(any(c.doc_id == question.doc_id and question.page in c.pages for c in contexts[:k]))


def reciprocal_rank(contexts: Sequence[Context], question: Question, k: int = K_MAX) -> float:
    for rank, context in enumerate(contexts[:k], 1):
        if is_evidence_hit(context, question):
            return 1.0 / rank
    return 0.0


def budget_text(contexts: Sequence[Context], budget: int, token_spans: TokenSpans) -> str:
    """The contexts joined in rank order, cut after ``budget`` tokens (at a token's end)."""
    parts: list[str] = []
    used = 0
    for context in contexts:
        spans = token_spans(context.text)
        if used + len(spans) <= budget:
            parts.append(context.text)
            used += len(spans)
            continue
        left = budget - used
        if left > 0:
            parts.append(context.text[: spans[left - 1][1]])
        break
    return CONTEXT_SEPARATOR.join(parts)


def budget_hit(contexts: Sequence[Context], question: Question, budget: int, token_spans: TokenSpans) -> float:
    """As FORMAT.md defines it: the text alone decides, whatever document it came from."""
    return float(has_evidence(budget_text(contexts, budget, token_spans), question))


def tokens_per_context(contexts: Sequence[Context]) -> float | None:
    return float(np.mean([c.n_tokens for c in contexts])) if contexts else None


def score_question(question: Question, contexts: Sequence[Context], token_spans: TokenSpans) -> dict[str, float | None]:
    """Every metric for one question; None where a metric does not apply."""
    return {
        "evidence_hit@1": evidence_hit_at(contexts, question, 1),
        "evidence_hit@5": evidence_hit_at(contexts, question, 5),
        "doc_hit@1": doc_hit_at(contexts, question, 1),
        "doc_hit@5": doc_hit_at(contexts, question, 5),
        "page_hit@5": page_hit_at(contexts, question, 5),
        "mrr@10": reciprocal_rank(contexts, question, K_MAX),
        f"budget_hit@{BUDGET_TOKENS}": budget_hit(contexts, question, BUDGET_TOKENS, token_spans),
        "tokens_per_context": tokens_per_context(contexts),
    }


def mean_scores(rows: Sequence[Mapping[str, float | None]]) -> dict[str, float | None]:
    """Mean of each metric over the rows where it applies (None when it applies to none)."""
    out: dict[str, float | None] = {}
    for metric in METRICS:
        values = [r[metric] for r in rows if r.get(metric) is not None]
        out[metric] = float(np.mean(values)) if values else None
    return out


def bootstrap_ci(
    values: Sequence[float], groups: Sequence[str], *, draws: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of the mean, resampling whole groups (documents) with replacement.

    Questions of one document are not independent (one bad parse fails them together),
    so the documents are the units that are drawn.
    """
    if len(values) != len(groups):
        raise ValueError(f"{len(values)} values but {len(groups)} groups")
    if not values:
        raise ValueError("no values")
    names = sorted(set(groups))
    index = {g: i for i, g in enumerate(names)}
    sums = np.zeros(len(names))
    counts = np.zeros(len(names))
    for v, g in zip(values, groups):
        sums[index[g]] += v
        counts[index[g]] += 1
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(names), size=(draws, len(names)))
    means = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(means, [tail, 100.0 - tail])
    return float(lo), float(hi)


def summarize(questions: Sequence[Question], scores: Sequence[Mapping[str, float | None]], *, draws: int = 1000, seed: int = 0) -> dict:
    """``{"overall": {...}, "by_kind": {kind: {...}}, "n": N}``; each block carries ``n`` and the CI."""

    def block(qs: Sequence[Question], rows: Sequence[Mapping[str, float | None]]) -> dict:
        out: dict = dict(mean_scores(rows))
        out["n"] = len(rows)
        out["n_page"] = sum(1 for q in qs if q.page is not None)
        lo, hi = bootstrap_ci([r[HEADLINE] for r in rows], [q.doc_id for q in qs], draws=draws, seed=seed)
        out[f"{HEADLINE}_ci95_low"] = lo
        out[f"{HEADLINE}_ci95_high"] = hi
        return out

    if len(questions) != len(scores):
        raise ValueError(f"{len(questions)} questions but {len(scores)} score rows")
    by_kind: dict[str, dict] = {}
    for kind in sorted({q.kind_or_default for q in questions}):
        pairs = [(q, s) for q, s in zip(questions, scores) if q.kind_or_default == kind]
        by_kind[kind] = block([q for q, _ in pairs], [s for _, s in pairs])
    # The questions whose evidence must carry a governing context (a warning, a caption).
    subsets: dict[str, dict] = {}
    with_context = [(q, s) for q, s in zip(questions, scores) if q.must_include]
    if with_context:
        subsets["must_include"] = block([q for q, _ in with_context], [s for _, s in with_context])
    return {
        "overall": block(questions, scores) if questions else {},
        "by_kind": by_kind,
        "subsets": subsets,
        "n": len(questions),
    }


def whitespace_spans(text: str) -> list[tuple[int, int]]:
    """A stand-in tokenizer: one token per run of non-space characters."""
    return [m.span() for m in re.finditer(r"\S+", text)]
