"""Stage 5, pack: the ranked parents that fit a token budget (``pack``).

Parents are counted as they will be read (``context.context_texts``: a document's and section's
shared header once), in rank order; the first parent is always kept, and ``budget_note`` says
when it alone is larger than the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from evidence_pipeline.context import context_texts
from evidence_pipeline.records import SearchHit


def pack(hits: Sequence[SearchHit], token_budget: int, count_tokens: Callable[[str], int]) -> list[SearchHit]:
    """Parents in rank order while their aggregated text fits ``token_budget`` (the first always)."""
    packed: list[SearchHit] = []
    used = 0
    for hit, text in zip(hits, context_texts(hits)):
        n = count_tokens(text)
        if packed and used + n > token_budget:
            break
        packed.append(hit)
        used += n
    return packed


def budget_note(hits: Sequence[SearchHit], token_budget: int, count_tokens: Callable[[str], int]) -> str | None:
    """Why a packed list exceeds its budget: the first parent alone is larger (it is kept anyway)."""
    if not hits:
        return None
    first = count_tokens(context_texts(hits[:1])[0])
    if first <= token_budget:
        return None
    return f"the first result alone is {first} tokens, over the budget of {token_budget}"
