"""Equal scores in the Edge store rank the same way in every build of the index."""

from __future__ import annotations

from pathlib import Path

from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import Point, SparseVector, point_id

QUERY_DENSE = [1.0, 0.2, 0.0, 0.0]
QUERY_SPARSE = SparseVector(indices=[1, 2], values=[1.0, 1.0])


def _tied_points(doc_id: str) -> list[Point]:
    """Twenty children with two dense and two sparse vectors between them: scores tie in groups."""
    return [
        Point(
            id=point_id(doc_id, f"c{i}", f"{doc_id}-p{i}"),
            dense=[1.0, 0.0, 0.0, 0.0] if i % 2 else [0.0, 1.0, 0.0, 0.0],
            sparse=QUERY_SPARSE if i % 3 else SparseVector(indices=[2], values=[1.0]),
            payload={"parent_id": f"{doc_id}-p{i}", "doc_id": doc_id},
        )
        for i in range(20)
    ]


def _rankings(path: Path) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    with open_store(StoreSettings(path=str(path))) as store:
        store.ensure_collection(4)
        for doc_id in ("d0", "d1", "d2"):
            store.replace_document(doc_id, _tied_points(doc_id))
        hybrid = store.hybrid_search(QUERY_DENSE, QUERY_SPARSE, 10)
        dense = store.dense_search(QUERY_DENSE, 10)
    return [(h.payload["parent_id"], h.score) for h in hybrid], [(h.payload["parent_id"], h.score) for h in dense]


def test_tied_scores_rank_by_point_id_in_every_build(tmp_path):
    first = _rankings(tmp_path / "a")
    for n in range(3):  # without the tie-break, each build of the shard orders ties differently
        assert _rankings(tmp_path / f"b{n}") == first
    hybrid, dense = first
    assert len(hybrid) == len(dense) == 10
    assert len({score for _, score in dense}) < len(dense)  # the case is real: ties are there
    for ranking in first:
        assert [s for _, s in ranking] == sorted((s for _, s in ranking), reverse=True)


def _uniform_points(doc_id: str, n: int) -> list[Point]:
    """``n`` children that all score the same for any query: every one ties with every other."""
    return [
        Point(
            id=point_id(doc_id, f"c{i}", f"{doc_id}-p{i}"),
            dense=[1.0, 0.0, 0.0, 0.0],
            sparse=QUERY_SPARSE,
            payload={"parent_id": f"{doc_id}-p{i}", "doc_id": doc_id},
        )
        for i in range(n)
    ]


def _written_in(path: Path, order: tuple[str, ...], k: int) -> tuple[list[str], list[str]]:
    with open_store(StoreSettings(path=str(path))) as store:
        store.ensure_collection(4)
        for doc_id in order:
            store.replace_document(doc_id, _uniform_points(doc_id, 150))
        hybrid = store.hybrid_search(QUERY_DENSE, QUERY_SPARSE, k)
        dense = store.dense_search(QUERY_DENSE, k)
    return [h.payload["parent_id"] for h in hybrid], [h.payload["parent_id"] for h in dense]


def test_more_ties_than_the_fetch_margin_rank_the_same_whatever_the_write_order(tmp_path):
    # 450 points tied at the cut, far more than a prefetch depth plus its margin: Edge returns a
    # different slice of them for each order the documents were written in.
    orders = [("d0", "d1", "d2"), ("d2", "d1", "d0"), ("d1", "d2", "d0")]
    for k in (2, 5):
        rankings = [_written_in(tmp_path / f"k{k}-{n}", order, k) for n, order in enumerate(orders)]
        assert all(r == rankings[0] for r in rankings[1:])
        hybrid, dense = rankings[0]
        assert len(hybrid) == len(dense) == k
