"""Dev and validation halves of a question set, split by document.

A document's half is fixed by a hash of its ``doc_id`` (blake2b, last bit), never by the
question file it sits in or the order of its lines: every question of a document lands in the
same half, in every set, on every machine. Tune on ``dev``; report on ``validation``.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable
from typing import Literal

from evidence_pipeline.evaluation.questions import Question

Split = Literal["dev", "validation"]
SPLITS: tuple[Split, Split] = ("dev", "validation")
CHOICES = (*SPLITS, "all")


def split_of(doc_id: str) -> Split:
    """The half a document belongs to (``doc_id`` NFC-normalised, as the pipeline names documents)."""
    digest = hashlib.blake2b(unicodedata.normalize("NFC", doc_id).encode("utf-8"), digest_size=8).digest()
    return SPLITS[digest[-1] & 1]


def filter_split(questions: Iterable[Question], split: str) -> list[Question]:
    """The questions whose document is in ``split`` (``"all"``: every question), order kept."""
    if split == "all":
        return list(questions)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: one of {', '.join(CHOICES)}")
    return [q for q in questions if split_of(q.doc_id) == split]
