"""Store operations for the Dagster layer: vector statistics, point export, copying Edge -> server."""

import math

import pytest

from evidence_pipeline.cli import main
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store.base import SparseVector
from evidence_pipeline.store.copy import copy_store
from evidence_pipeline.store.edge import EdgeStore
from evidence_pipeline.store.server import ServerStore
from evidence_pipeline_tests.test_store import DIM, ENC, backend, make_points  # noqa: F401  (fixture)

pytestmark = [
    pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant"),
    pytest.mark.filterwarnings("ignore:Failed to obtain server version"),
]


def test_vector_stats_count_vectors_and_parent_fields(backend):
    store = backend()
    store.ensure_collection(DIM)
    points = make_points("a", {"a/p1": ["one", "two"], "a/p2": ["three"]})
    # One point with no BM25 terms and no parent text.
    damaged = points[2].model_copy(
        update={"sparse": SparseVector(indices=[], values=[]), "payload": {**points[2].payload, "parent_text": ""}}
    )
    store.replace_document("a", [*points[:2], damaged])
    store.replace_document("b", make_points("b", {"b/p1": ["x"]}))
    stats = store.vector_stats("a")
    assert stats.model_dump() == {"points": 3, "dense": 3, "sparse": 2, "parent_id": 3, "parent_text": 2}
    assert store.vector_stats("missing").points == 0


def _set(payload: dict) -> dict:
    return {k: v for k, v in payload.items() if v is not None}


def test_iter_points_returns_vectors_and_payloads(backend):
    store = backend()
    store.ensure_collection(DIM)
    points = make_points("a", {"a/p1": ["flow rate", "pressure"]})
    store.replace_document("a", points)
    back = {p.id: p for p in store.iter_points("a")}
    assert set(back) == {p.id for p in points}
    for p in points:
        got = back[p.id]
        # A None-valued field may come back absent (readers use .get()).
        assert _set(got.payload) == _set(p.payload)
        assert got.sparse.indices == p.sparse.indices
        assert all(math.isclose(x, y, abs_tol=1e-6) for x, y in zip(got.dense, p.dense))


def _edge_with_two_documents(path) -> EdgeStore:
    edge = EdgeStore(StoreSettings(path=str(path)))
    edge.ensure_collection(DIM)
    edge.replace_document("a", make_points("a", {"a/p1": ["Aqueous Phase 1 max 1.8"], "a/p2": ["lipid"]}))
    edge.replace_document("b", make_points("b", {"b/p1": ["endotoxin limit"]}, content_hash="h2"))
    return edge


def test_copy_edge_store_to_a_server_collection(tmp_path):
    with (
        _edge_with_two_documents(tmp_path / "edge") as edge,
        ServerStore(StoreSettings(collection="evidence"), location=":memory:") as server,
    ):
        result = copy_store(edge, server)
        assert (result.documents, result.points) == (2, 3)
        assert server.count() == 3 and server.document_hashes() == {"a": "h1", "b": "h2"}
        assert server.vector_stats("a").model_dump() == edge.vector_stats("a").model_dump()
        # Each document keeps the time it was ingested at, not the time of the copy.
        times = [d.ingested_at for d in edge.documents()]
        assert None not in times and [d.ingested_at for d in server.documents()] == times
        # The copy searches like the original.
        [query] = make_points("q", {"q": ["endotoxin limit"]})
        assert server.hybrid_search(query.dense, ENC.encode_query("endotoxin limit"), 1)[0].payload["doc_id"] == "b"
        # Copying again leaves the target as it is.
        copy_store(edge, server)
        assert server.count() == 3


def test_cli_copy_store_reports_what_it_copied(tmp_path, monkeypatch, capsys):
    _edge_with_two_documents(tmp_path / "edge").close()
    target = ServerStore(StoreSettings(collection="evidence"), path=str(tmp_path / "local"))
    target.close()
    # The CLI opens a server by URL; point it at qdrant-client's local mode instead.
    import evidence_pipeline.store as store_pkg

    real = store_pkg.make_store
    monkeypatch.setattr(
        store_pkg,
        "make_store",
        lambda s: ServerStore(s, path=str(tmp_path / "local")) if s.url else real(s),
    )
    assert main(["copy-store", "--to-url", "http://qdrant:6333", "--from-path", str(tmp_path / "edge")]) == 0
    assert "copied 2 documents, 3 points" in capsys.readouterr().out
    with ServerStore(StoreSettings(collection="evidence"), path=str(tmp_path / "local")) as server:
        assert server.count() == 3
