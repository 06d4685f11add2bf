"""Children: the small retrieval units built from evidence units, fitted to the model's window.

``unit_children(unit)`` lists what is embedded for one unit: a table's summary, context, row
sentences and footnotes; a section chunk's sentences (short ones joined to a neighbour); a
card's one sentence. Each child carries the unit's location (``EvidenceUnit.prefix``,
``EvidenceUnit.location``). ``fit_children`` cuts a child whose prefix and text exceed the
model's window into windows at word boundaries, each embedded whole with the same prefix, so
nothing is truncated silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from evidence_pipeline.records import ChildKind, ChildUnit, EvidenceUnit


class WindowCounter(Protocol):
    """What fitting needs of the embedding model's tokenizer (``embedding.TokenCounter``)."""

    max_tokens: int

    def count(self, text: str) -> int: ...

    def counts(self, texts: Sequence[str]) -> list[int]: ...

    def head(self, text: str, n_tokens: int) -> tuple[str, str]: ...


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")


def sentences(paragraph: str) -> list[str]:
    """Split a paragraph into sentences; procedure steps and short items stay whole."""
    return [s.strip() for s in _SENTENCE_END.split(paragraph) if s.strip()]


MIN_SENTENCE_WORDS = 8
"""A body sentence of fewer words is no child of its own: a split after an abbreviation
("Washington, D.C." / "20549"), a label, a date or a chart's title ("Date: February 2, 2023"),
a lone sign ("☐", "$"). On its own its vector is mostly its section's prefix, so it would
match any query that names the document or the section (``joined_fragments``)."""


def joined_fragments(items: list[str]) -> list[str]:
    """A section's sentences in order, each one of fewer than ``MIN_SENTENCE_WORDS`` words
    joined to a neighbour: a lead-in ("Key changes in operating expenses were:") to the
    sentence after it, any other to the sentence before it (the first to the one after it)."""
    out: list[str] = []
    carry = ""
    for item in items:
        text = f"{carry} {item}" if carry else item
        carry = ""
        if len(item.split()) >= MIN_SENTENCE_WORDS:
            out.append(text)
        elif out and not item.rstrip().endswith(":"):
            out[-1] = f"{out[-1]} {text}"
        else:
            carry = text
    if carry and out:
        out[-1] = f"{out[-1]} {carry}"  # a lead-in that ends its section
    elif carry:
        out.append(carry)  # a section of fragments only: one child of them all
    return out


def unit_children(unit: EvidenceUnit) -> list[ChildUnit]:
    """The children to embed for ``unit``, in order, each with the unit's location as prefix;
    child ids are ``{unit_id}-c{n}``, empty texts left out."""
    items: list[tuple[ChildKind, str, int | None]] = []
    if unit.kind == "table":
        items.append(("summary", unit.summary, None))
        items += [("context", p, None) for p in unit.context_before]
        items += [("row", s, row) for row, s in enumerate(unit.sentences_by_row) if s]
        items += [("footnote", f, None) for f in unit.footnotes]
        items += [("context", p, None) for p in unit.context_after]
    elif unit.kind == "card":
        items.append(("card", unit.card.retrieval_text if unit.card else "", None))
    else:
        items += [("sentence", s, None) for s in joined_fragments([s for p in unit.body for s in sentences(p)])]
    return [
        ChildUnit(
            child_id=f"{unit.unit_id}-c{i}",
            unit_id=unit.unit_id,
            parent_id=unit.parent_id,
            doc_id=unit.doc_id,
            kind=kind,
            text=text,
            prefix=unit.prefix,
            locator=unit.location,
            row=row,
        )
        for i, (kind, text, row) in enumerate(items)
        if text.strip()
    ]


def fit_children(children: list[ChildUnit], counter: WindowCounter) -> list[ChildUnit]:
    """``children`` in order, each one longer than ``counter.max_tokens`` (prefix and text
    together) replaced by its windows ``{child_id}-w{n}``; a prefix over half the window is cut
    to its head (it is a locator, not content)."""
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


def build_children(units: list[EvidenceUnit], counter: WindowCounter) -> list[ChildUnit]:
    """Every unit's children (``unit_children``), fitted to the model window."""
    return fit_children([c for u in units for c in unit_children(u)], counter)
