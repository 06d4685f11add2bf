"""Synthetic children for store benchmarks: the store's cost depends on counts and sizes,
not on meaning, so random unit vectors stand in for embeddings, or, given real embeddings,
mixes of two of them with a little noise (``vectors``): an HNSW graph is only worth
measuring on vectors clustered like embeddings (uniform high-dimensional points are its
known worst case: its recall and build time there say nothing of a real store). Texts are drawn from
the words of real children (by their frequency there), so BM25 vectors have realistic
lengths and a realistic spread of common and rare terms."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np

from evidence_pipeline.payload import DocumentStamp, PointPayload
from evidence_pipeline.records import DocumentCard, document_head
from evidence_pipeline.sparse import SparseEncoder
from evidence_pipeline.store.base import Point, point_id

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-/.]*[A-Za-z0-9]|\d+(?:\.\d+)?")
_UNITS = ("mL/min", "mg", "°C", "bar", "%", "h", "min", "µm", "kg")


class TextSampler:
    def __init__(self, real_texts: Sequence[str], seed: int = 0):
        counts = Counter(w for t in real_texts for w in _WORD.findall(t))
        if not counts:
            counts = Counter({"sample": 1, "text": 1})
        self.words = list(counts)
        freq = np.array([counts[w] for w in self.words], dtype=np.float64)
        self.p = freq / freq.sum()
        self.rng = np.random.default_rng(seed)

    def text(self, lo: int = 8, hi: int = 40) -> str:
        n = int(self.rng.integers(lo, hi))
        words = list(self.rng.choice(self.words, size=n, p=self.p))
        # A measured value in most sentences, as in table rows.
        if self.rng.random() < 0.7:
            words.append(f"{self.rng.uniform(0, 500):.1f} {self.rng.choice(_UNITS)}")
        return " ".join(words) + "."


def _vectors(rng: np.random.Generator, m: int, dim: int, real: np.ndarray | None) -> np.ndarray:
    """``m`` unit vectors: random, or each a real vector plus half another plus noise."""
    if real is None or not len(real):
        vecs = rng.standard_normal((m, dim)).astype(np.float32)
    else:
        a, b = rng.integers(0, len(real), m), rng.integers(0, len(real), m)
        vecs = (real[a] + 0.5 * real[b] + rng.normal(0, 0.02, (m, real.shape[1]))).astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def synthetic_documents(
    n_children: int,
    sampler: TextSampler,
    *,
    dim: int = 384,
    children_per_parent: int = 10,
    parents_per_doc: int = 10,
    seed: int = 0,
    vectors: np.ndarray | None = None,
) -> Iterator[tuple[str, list[Point]]]:
    """``(doc_id, points)`` per document until ``n_children`` points, laid out as the
    pipeline lays them out (every payload key, parent text repeated in each child)."""
    rng = np.random.default_rng(seed)
    encoder = SparseEncoder()
    per_doc = children_per_parent * parents_per_doc
    made, d = 0, 0
    while made < n_children:
        doc_id = f"bench-{d:05d}"
        m = min(per_doc, n_children - made)
        vecs = _vectors(rng, m, dim, vectors)
        points: list[Point] = []
        card = DocumentCard(doc_id=doc_id, title=f"{doc_id}: Synthetic SOP", doc_type="SOP", identifiers=[doc_id])
        stamp = DocumentStamp.for_card(card, "synthetic", "bench")
        for start in range(0, m, children_per_parent):
            unit_id = f"{doc_id}-u{start // children_per_parent}"
            texts = [sampler.text() for _ in range(min(children_per_parent, m - start))]
            parent_text = "\n".join([*document_head(doc_id, stamp.doc_title, []), *texts])
            for i, text in enumerate(texts):
                child_id = f"{unit_id}-c{i}"
                payload = PointPayload(
                    **stamp.model_dump(),
                    parent_id=unit_id,
                    unit_id=unit_id,
                    child_id=child_id,
                    parent_text=parent_text,
                    pages=[1 + start // 40],
                    section_path=["1 Purpose"],
                    caption=None,
                    # each document's first point stands for its card, which search reads to route
                    unit_kind="card" if start == 0 and i == 0 else "section",
                    child_kind="card" if start == 0 and i == 0 else "sentence",
                    text=text,
                )
                # model_construct: the payload was validated just above; the vectors are built right here.
                points.append(
                    Point.model_construct(
                        id=point_id(doc_id, child_id, unit_id),
                        dense=vecs[start + i].tolist(),
                        sparse=encoder.encode_document(text),
                        payload=payload.model_dump(),
                    )
                )
        made += m
        d += 1
        yield doc_id, points
