"""Comparison measures: text normalisation, box overlap, one-to-one matching, multiset counts.

Text comparison normalises NFKC, case, dashes and white space. Cell and caption texts
drop white space entirely: the measure is which characters land in which cell, not how
two text extractors space words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from evidence_pipeline.records import BBox
from evidence_pipeline.text import normalise as _normalise

IOU_MATCH = 0.5


def normalise(text: str | None) -> str:
    """The project's normaliser with dashes unified (texts from different extractors)."""
    return _normalise(text, dashes=True)


def text_key(text: str | None) -> str:
    """Normalised text without any white space (cell and caption comparison)."""
    return "".join(normalise(text).split())


def same_caption(truth: str | None, pred: str | None) -> bool:
    return bool(text_key(truth)) and text_key(truth) == text_key(pred)


def iou(a: BBox, b: BBox) -> float:
    w = min(a.r, b.r) - max(a.l, b.l)
    h = min(a.b, b.b) - max(a.t, b.t)
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = a.width * a.height + b.width * b.height - inter
    return inter / union if union > 0 else 0.0


def greedy_match(pairs: list[tuple[float, int, int]]) -> dict[int, int]:
    """One-to-one matching, best-scoring (score, truth index, predicted index) pairs first."""
    out: dict[int, int] = {}
    used: set[int] = set()
    for _, i, j in sorted(pairs, reverse=True):
        if i not in out and j not in used:
            out[i] = j
            used.add(j)
    return out


def match_boxes(
    truth: Sequence[tuple[int | None, BBox | None]],
    pred: Sequence[tuple[int | None, BBox | None]],
    threshold: float = IOU_MATCH,
) -> dict[int, int]:
    """Greedy one-to-one matching by IoU on the same page: ``{truth index: pred index}``."""
    pairs = []
    for i, (tp, tb) in enumerate(truth):
        for j, (pp, pb) in enumerate(pred):
            if tp is None or tp != pp or tb is None or pb is None:
                continue
            v = iou(tb, pb)
            if v >= threshold:
                pairs.append((v, i, j))
    return greedy_match(pairs)


class Counts(BaseModel):
    """True positives against the sizes of the truth and predicted multisets."""

    model_config = ConfigDict(frozen=True)

    tp: int = 0
    n_truth: int = 0
    n_pred: int = 0

    def add(self, other: Counts) -> Counts:
        return Counts(tp=self.tp + other.tp, n_truth=self.n_truth + other.n_truth, n_pred=self.n_pred + other.n_pred)

    @property
    def precision(self) -> float | None:
        return self.tp / self.n_pred if self.n_pred else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.n_truth if self.n_truth else None

    @property
    def f1(self) -> float | None:
        if not self.n_truth and not self.n_pred:
            return None
        return 2 * self.tp / (self.n_truth + self.n_pred)


def total_counts(counts: Iterable[Counts]) -> Counts:
    """Micro-average: the counts add up."""
    out = Counts()
    for c in counts:
        out = out.add(c)
    return out


def multiset_counts(truth: Iterable[str], pred: Iterable[str]) -> Counts:
    """Overlap of two multisets of texts, compared by ``text_key``; empty texts are dropped."""
    t = Counter(k for k in map(text_key, truth) if k)
    p = Counter(k for k in map(text_key, pred) if k)
    return Counts(tp=sum((t & p).values()), n_truth=sum(t.values()), n_pred=sum(p.values()))


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None
