"""Fit children to the embedding model's window without silent truncation.

all-MiniLM-L6-v2 reads at most 256 word pieces and drops the rest without a
word. A child whose prefix + text is longer is cut into windows at word
boundaries, each embedded whole with the same prefix.
"""

from __future__ import annotations

from evidence_pipeline.embedding import TokenCounter
from evidence_pipeline.records import ChildUnit, EvidenceUnit


def fit_children(children: list[ChildUnit], counter: TokenCounter) -> list[ChildUnit]:
    limit = counter.max_tokens
    fitted: list[ChildUnit] = []
    for child, n in zip(children, counter.counts([c.embed_text for c in children])):
        if n <= limit:
            fitted.append(child)
            continue
        prefix = child.prefix
        if counter.count(prefix) > limit // 2:
            # The prefix is a locator, not content: keep its head so the content keeps most of the window.
            prefix = counter.head(prefix, limit // 2)[0]
        budget = limit - counter.count(prefix + "\n")
        rest, k = child.text, 0
        while rest:
            window, rest = counter.head(rest, budget)
            fitted.append(child.model_copy(update={"child_id": f"{child.child_id}-w{k}", "text": window, "prefix": prefix}))
            k += 1
    return fitted


def build_children(units: list[EvidenceUnit], counter: TokenCounter) -> list[ChildUnit]:
    """Every unit's children, fitted to the model window."""
    return fit_children([c for u in units for c in u.retrieval_units], counter)
