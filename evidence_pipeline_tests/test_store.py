"""The same behaviour checks against both backends: Qdrant Edge and qdrant-client (local mode)."""

import random
import shutil
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evidence_pipeline.errors import StoreError
from evidence_pipeline.payload import DocumentStamp, PointPayload
from evidence_pipeline.records import DocumentCard
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.sparse import SparseEncoder
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import INGEST_RECORDS, Point, point_id
from evidence_pipeline.store.edge import EdgeStore
from evidence_pipeline.store.server import ServerStore

pytestmark = [
    pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant"),
    pytest.mark.filterwarnings("ignore:Failed to obtain server version"),  # open_store test: no server
]

DIM = 8
ENC = SparseEncoder()
REPO = Path(__file__).resolve().parents[1]


def _unit(vec):
    norm = sum(x * x for x in vec) ** 0.5
    return [x / norm for x in vec]


def _random_dense(rng):
    return _unit([rng.uniform(-1, 1) for _ in range(DIM)])


def make_points(doc_id, parents, *, seed=0, dense=None, content_hash="h1", unit_kind="table"):
    """parents: {parent_id: [child text, ...]} -> one point per child (random dense unless given)."""
    rng = random.Random(f"{doc_id}-{seed}")
    points = []
    for parent_id, children in parents.items():
        for i, text in enumerate(children):
            child_id = f"{parent_id}/c{i}"
            points.append(
                Point(
                    id=point_id(doc_id, child_id, parent_id),
                    dense=dense(text) if dense else _random_dense(rng),
                    sparse=ENC.encode_document(text),
                    payload=PointPayload(
                        **DocumentStamp.for_card(DocumentCard(doc_id=doc_id, title=f"Title of {doc_id}"), content_hash, "1").model_dump(),
                        parent_id=parent_id,
                        unit_id=parent_id,
                        child_id=child_id,
                        parent_text=" ".join(children),
                        pages=[1, 2],
                        section_path=["1 Scope"],
                        caption=None,
                        unit_kind=unit_kind,
                        child_kind="row" if unit_kind == "table" else "sentence",
                        text=text,
                    ).model_dump(),
                )
            )
    return points


@pytest.fixture(params=["edge", "server"])
def backend(request, tmp_path):
    """A function that opens the store at one fixed place (call again to reopen)."""
    opened = []

    def open_():
        if request.param == "edge":
            store = EdgeStore(StoreSettings(path=str(tmp_path / "edge")))
        else:
            store = ServerStore(StoreSettings(collection="test"), path=str(tmp_path / "local"))
        opened.append(store)
        return store

    open_.kind = request.param
    yield open_
    for store in opened:
        store.close()


def test_create_and_reopen(backend):
    store = backend()
    assert store.count() == 0 and store.document_hashes() == {}
    store.ensure_collection(DIM)
    assert store.dim == DIM
    store.replace_document("a", make_points("a", {"a/p1": ["one", "two"], "a/p2": ["three"]}))
    store.close()

    store = backend()
    assert store.dim == DIM
    store.ensure_collection(DIM)  # reopening with the same dimension is a no-op
    assert store.count() == 3 and store.count("a") == 3
    assert store.document_hashes() == {"a": "h1"}
    with pytest.raises(StoreError, match="16"):
        store.ensure_collection(16)


def test_replace_document_is_idempotent_and_drops_stale_points(backend):
    store = backend()
    store.ensure_collection(DIM)
    v1 = make_points("a", {"a/p1": ["r1", "r2", "r3"], "a/p2": ["r4", "r5", "r6"]})
    other = make_points("b", {"b/p1": ["x", "y"]})
    store.replace_document("b", other)

    assert store.replace_document("a", v1).model_dump() == {"upserted": 6, "deleted": 0}
    ids = store.point_ids("a")
    assert ids == {p.id for p in v1}
    assert store.replace_document("a", v1).model_dump() == {"upserted": 6, "deleted": 0}
    assert store.point_ids("a") == ids and store.count("a") == 6

    # New version: p2 is gone, p3 is new, p1 keeps its children.
    v2 = make_points("a", {"a/p1": ["r1", "r2", "r3"], "a/p3": ["n1"]}, content_hash="h2")
    assert store.replace_document("a", v2).model_dump() == {"upserted": 4, "deleted": 3}
    assert store.point_ids("a") == {p.id for p in v2}
    assert store.count() == 4 + 2
    assert store.point_ids("b") == {p.id for p in other}
    assert store.document_hashes() == {"a": "h2", "b": "h1"}

    with pytest.raises(ValueError, match="doc_id"):
        store.replace_document("b", v2)


def test_delete_document(backend):
    store = backend()
    store.ensure_collection(DIM)
    store.replace_document("a", make_points("a", {"a/p1": ["r1", "r2"]}))
    store.replace_document("b", make_points("b", {"b/p1": ["x"]}))
    assert store.delete_document("a") == 2
    assert store.count("a") == 0 and store.point_ids("a") == set()
    assert store.count() == 1 and store.document_hashes() == {"b": "h1"}
    assert store.delete_document("a") == 0


def _shared_parents(doc_id, n_parents, n_children):
    # Every child mentions the query words, so siblings crowd the top of the fused list.
    return {
        f"{doc_id}/p{p}": [f"batch release limit check {doc_id} parent {p} row {c}" for c in range(n_children)] for p in range(n_parents)
    }


def test_hybrid_search_returns_k_distinct_parents_with_their_best_child(backend):
    store = backend()
    store.ensure_collection(DIM)
    for doc in ("a", "b", "c"):
        store.replace_document(doc, make_points(doc, _shared_parents(doc, 4, 12)))
    # One child first in both lists (its words and its dense vector are the query's):
    # its parent must come first, matched by that child and not by a sibling.
    rng = random.Random(7)
    query_dense = _random_dense(rng)
    special = make_points(
        "d",
        {"d/p0": ["unrelated text", "gamma irradiation dose 25 kGy", "more unrelated"]},
        dense=lambda text: query_dense if "gamma" in text else _random_dense(rng),
    )
    store.replace_document("d", special)

    query = "gamma irradiation dose 25 kGy batch release limit"
    # prefetch_limit 8 < 12 siblings per parent: Edge must deepen to reach 6 parents
    hits = store.hybrid_search(query_dense, ENC.encode_query(query), 6, prefetch_limit=8)
    parents = [h.payload["parent_id"] for h in hits]
    assert len(hits) == 6 and len(set(parents)) == 6
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].payload["parent_id"] == "d/p0"
    assert hits[0].payload["text"] == "gamma irradiation dose 25 kGy"
    assert hits[0].id == point_id("d", "d/p0/c1", "d/p0")
    # the whole payload comes back as written
    assert hits[0].payload["pages"] == [1, 2] and hits[0].payload["caption"] is None

    dense_hits = store.dense_search(_random_dense(rng), 5)
    assert len({h.payload["parent_id"] for h in dense_hits}) == 5


def test_hybrid_search_reaches_k_parents_when_siblings_fill_both_prefetches(backend):
    # Children of a parent have nearly the same dense vector, and only p0's children
    # hold the query word: the first 2 x 8 fused candidates all belong to p0.
    store = backend()
    store.ensure_collection(DIM)
    rng = random.Random(5)
    centers = {f"a/p{p}": _random_dense(rng) for p in range(5)}
    parents = {pid: [f"{'alpha ' if pid == 'a/p0' else ''}row {c} of {pid}" for c in range(12)] for pid in centers}
    points = make_points("a", parents)
    points = [p.model_copy(update={"dense": _unit([x + rng.gauss(0, 0.01) for x in centers[p.payload["parent_id"]]])}) for p in points]
    store.replace_document("a", points)
    hits = store.hybrid_search(centers["a/p0"], ENC.encode_query("alpha"), 3, prefetch_limit=8)
    parents_found = [h.payload["parent_id"] for h in hits]
    assert len(set(parents_found)) == 3 and parents_found[0] == "a/p0"


def test_exact_identifier_found_by_bm25_when_dense_is_uninformative(backend):
    store = backend()
    store.ensure_collection(DIM)
    texts = {
        "sop070": "Batch release requires QA approval per SOP-QA-070 before shipment.",
        "sop007": "Deviation handling is described in SOP-QA-007 and requires QA review.",
        "usp85": "Endotoxin limit per USP <85> is 0.5 EU/mL for product A.",
        "usp87": "Cytotoxicity per USP <87> is tested on each product lot.",
    }
    for doc, text in texts.items():
        filler = [f"general manufacturing statement number {i} for {doc}" for i in range(10)]
        store.replace_document(doc, make_points(doc, {f"{doc}/p0": [text], f"{doc}/p1": filler}))

    rng = random.Random(3)
    for query, doc in [("SOP-QA-070", "sop070"), ("USP <87>", "usp87"), ("USP <85>", "usp85")]:
        hits = store.hybrid_search(_random_dense(rng), ENC.encode_query(query), 3)
        parents = [h.payload["parent_id"] for h in hits]
        # with RRF the BM25 winner can trail a child that ranks second in both lists, never more
        assert f"{doc}/p0" in parents[:2], (query, parents)


def test_doc_ids_filter(backend):
    store = backend()
    store.ensure_collection(DIM)
    for doc in ("a", "b", "c"):
        store.replace_document(doc, make_points(doc, _shared_parents(doc, 3, 4)))
    rng = random.Random(1)
    q = ENC.encode_query("batch release")
    hits = store.hybrid_search(_random_dense(rng), q, 10, doc_ids=["b", "c"])
    assert {h.payload["doc_id"] for h in hits} == {"b", "c"} and len(hits) == 6
    hits = store.dense_search(_random_dense(rng), 10, doc_ids=["a"])
    assert {h.payload["parent_id"] for h in hits} == {"a/p0", "a/p1", "a/p2"}


def test_sparse_search_keeps_one_kind_of_unit_when_asked(backend):
    store = backend()
    store.ensure_collection(DIM)
    store.replace_document("a", make_points("a", {"a/prose": ["inventory levels reflect demand"]}, unit_kind="section"))
    store.replace_document("a2", make_points("a2", {"a2/sheet": ["Inventories 4,268 3,742"], "a2/cash": ["Inventories (543)"]}))
    store.replace_document("b", make_points("b", {"b/sheet": ["Inventories 2,100"]}))
    q = ENC.encode_query("inventory levels demand")
    assert store.sparse_search(q, 5)[0].payload["parent_id"] == "a/prose"
    tables = store.sparse_search(q, 5, unit_kind="table")
    assert {h.payload["parent_id"] for h in tables} == {"a2/sheet", "a2/cash", "b/sheet"}
    assert {h.payload["parent_id"] for h in store.sparse_search(q, 5, doc_ids=["a", "b"], unit_kind="table")} == {"b/sheet"}
    assert [h.payload["parent_id"] for h in store.sparse_search(q, 5, unit_kind="section")] == ["a/prose"]


def test_search_on_an_empty_or_missing_store(backend):
    store = backend()
    rng = random.Random(0)
    assert store.hybrid_search(_random_dense(rng), ENC.encode_query("x"), 5) == []
    assert store.delete_document("a") == 0 and store.point_ids("a") == set()


def test_open_store_picks_the_backend(tmp_path):
    with open_store(StoreSettings(path=str(tmp_path / "s"))) as store:
        assert isinstance(store, EdgeStore)
    # A URL means the server backend; it is probed on opening, so no server -> one StoreError.
    with pytest.raises(StoreError, match="cannot reach Qdrant at http://127.0.0.1:1 "):
        with open_store(StoreSettings(url="http://127.0.0.1:1")):
            pass


_CHILD = textwrap.dedent(
    """
    import sys
    from evidence_pipeline.errors import StoreError
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store
    try:
        with open_store(StoreSettings(path=sys.argv[1], lock_timeout_s=0.2)) as store:
            print(store.count("a"))
    except StoreError:
        print("locked")
    """
)


def _count_in_subprocess(path):
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_edge_store_is_locked_while_open_and_reopens_in_another_process(tmp_path):
    path = tmp_path / "edge"
    settings = StoreSettings(path=str(path))
    with open_store(settings) as store:
        store.ensure_collection(DIM)
        store.replace_document("a", make_points("a", {"a/p1": ["r1", "r2", "r3"]}))
        assert _count_in_subprocess(path) == "locked"
    assert _count_in_subprocess(path) == "3"

    # an exception inside the block still closes the store
    with pytest.raises(RuntimeError):
        with open_store(settings) as store:
            store.delete_document("a")
            raise RuntimeError("boom")
    assert _count_in_subprocess(path) == "0"


def test_document_version_on_both_backends(backend):
    store = backend()
    assert store.document_version("a") is None  # nothing created yet
    store.ensure_collection(DIM)
    store.replace_document("a", make_points("a", {"a/p1": ["r1", "r2"], "a/p2": ["r3"]}, content_hash="h1"))
    store.replace_document("b", make_points("b", {"b/p1": ["x"]}, content_hash="h2"))
    assert store.document_version("a") == ("h1", "1") and store.document_version("b") == ("h2", "1")
    assert store.document_version("c") is None
    # One point left from an older version (an interrupted replace): the document has no single version.
    points = make_points("a", {"a/p1": ["r1", "r2"], "a/p2": ["r3"]}, content_hash="h1")
    mixed = [points[0].model_copy(update={"payload": {**points[0].payload, "content_hash": "h0"}}), *points[1:]]
    store.replace_document("a", mixed)
    assert store.document_version("a") == ("", "")
    store.delete_document("a")
    assert store.document_version("a") is None and store.document_version("b") == ("h2", "1")


def test_documents_lists_counts_and_versions(backend):
    store = backend()
    assert store.documents() == []
    store.ensure_collection(DIM)
    store.replace_document("b", make_points("b", {"b/p1": ["x", "y"], "b/p2": ["z"]}, content_hash="hb"))
    store.replace_document("a", make_points("a", {"a/p1": ["one"]}))
    docs = store.documents()
    assert [(d.doc_id, d.doc_title, d.points, d.parents, d.content_hash, d.pipeline_version) for d in docs] == [
        ("a", "Title of a", 1, 1, "h1", "1"),
        ("b", "Title of b", 3, 2, "hb", "1"),
    ]
    from evidence_pipeline.bm25_query import TOKENIZER_VERSION

    assert docs[0].bm25_tokenizer == TOKENIZER_VERSION  # every stamp records the tokenizer
    store.delete_document("b")
    assert [d.doc_id for d in store.documents()] == ["a"]


def test_documents_carry_the_source_and_the_card_period(backend):
    store = backend()
    card = {"source": "/data/10q/2023 Q2 ACME.pdf", "doc_type": "10-Q", "period_end": "2023-06-30", "fiscal_year": 2023}
    points = [p.model_copy(update={"payload": p.payload | card}) for p in make_points("a", {"a/p1": ["x", "y"]})]
    store.replace_document("a", points)
    store.replace_document("b", make_points("b", {"b/p1": ["z"]}))
    a, b = store.documents()
    assert (a.source, a.doc_type, a.period_end, a.fiscal_year) == tuple(card.values())
    assert (b.source, b.doc_type, b.period_end, b.fiscal_year) == (None, None, None, None)


def now_ms() -> datetime:
    """Now, cut to the milliseconds an ingest record keeps: the start of a time window."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def within(at: str | None, start: datetime, end: datetime) -> bool:
    """``at`` is a UTC ISO 8601 time (``Z``) between ``start`` and ``end``."""
    return at is not None and at.endswith("Z") and start <= datetime.fromisoformat(at) <= end


def test_each_write_records_its_ingest_time_beside_the_points_and_delete_drops_it(backend):
    store = backend()
    store.ensure_collection(DIM)
    start = now_ms()
    store.replace_document("a", make_points("a", {"a/p1": ["one", "two"]}, content_hash="h1"))
    end = datetime.now(UTC)
    store.replace_document("b", make_points("b", {"b/p1": ["x"]}, content_hash="hb"), ingested_at="2026-01-02T03:04:05.678Z")
    a, b = store.documents()
    assert within(a.ingested_at, start, end)
    assert b.ingested_at == "2026-01-02T03:04:05.678Z"  # as given (a copy keeps its source's time)
    assert store.ingest_records()["a"] == (a.ingested_at, "h1")
    assert not any("ingested_at" in p.payload for p in store.iter_points("a"))  # never in the points
    store.close()

    store = backend()  # the records persist
    assert [d.ingested_at for d in store.documents()] == [a.ingested_at, b.ingested_at]
    time.sleep(0.002)
    start = now_ms()
    store.replace_document("a", make_points("a", {"a/p1": ["one", "three"]}, content_hash="h2"))
    a2 = store.documents()[0]
    assert within(a2.ingested_at, start, datetime.now(UTC)) and a2.ingested_at > a.ingested_at
    assert store.ingest_records()["a"].sha256 == "h2"

    assert store.delete_document("a") == 2
    assert set(store.ingest_records()) == {"b"} and [d.doc_id for d in store.documents()] == ["b"]
    store.replace_document("b", [])  # no points left: no document, no record
    assert store.ingest_records() == {} and store.documents() == []


def test_a_store_written_before_the_ingest_records_reads_with_no_time(backend):
    store = backend()
    store.ensure_collection(DIM)
    store.replace_document("a", make_points("a", {"a/p1": ["one"]}))
    store.replace_document("b", make_points("b", {"b/p1": ["x"]}))
    # Take the records away: what a store written by an earlier version holds.
    if backend.kind == "edge":
        store.close()
        shutil.rmtree(Path(store.path) / INGEST_RECORDS)
    else:
        store.client.delete_collection(store.records_collection)
        store.close()
    store = backend()
    assert store.ingest_records() == {}
    assert [(d.doc_id, d.points, d.ingested_at) for d in store.documents()] == [("a", 1, None), ("b", 1, None)]
    assert store.delete_document("a") == 1  # nothing to drop from the records
    start = now_ms()
    store.replace_document("b", make_points("b", {"b/p1": ["y"]}))  # the next write makes them
    [b] = store.documents()
    assert within(b.ingested_at, start, datetime.now(UTC))


def test_a_write_cut_short_before_its_record_shows_no_time_rather_than_the_old_one(backend, monkeypatch):
    store = backend()
    store.ensure_collection(DIM)
    store.replace_document("a", make_points("a", {"a/p1": ["one"]}, content_hash="h1"))
    old = store.ingest_records()["a"]

    def killed(*args):
        raise RuntimeError("killed between the points and the record")

    monkeypatch.setattr(store, "_write_record", killed)
    with pytest.raises(RuntimeError):
        store.replace_document("a", make_points("a", {"a/p1": ["two"]}, content_hash="h2"))
    assert store.ingest_records()["a"] == old  # the record names the previous content
    [a] = store.documents()
    assert (a.content_hash, a.ingested_at) == ("h2", None)


def test_parent_returns_one_full_point_per_unit_of_the_parent(backend):
    points = make_points("a", {"a/t": ["row one", "row two", "row three"], "a/s": ["prose"]})
    # A split table: its pieces share the parent id, each piece is its own unit with its own text.
    pieces = [
        p.model_copy(update={"payload": p.payload | {"unit_id": f"a/t-s{n}", "parent_text": f"piece {n}"}})
        for p, n in zip(points[:3], (1, 0, 1))
    ]
    store = backend()
    store.ensure_collection(DIM)
    store.replace_document("a", [*pieces, points[3]])
    got = store.parent("a/t")
    assert [(h.payload["unit_id"], h.payload["parent_text"], h.score) for h in got] == [
        ("a/t-s0", "piece 0", 0.0),
        ("a/t-s1", "piece 1", 0.0),
    ]
    unit1 = sorted(p.id for p in pieces if p.payload["unit_id"] == "a/t-s1")
    assert got[1].id == unit1[0]  # the same point of a unit on every call
    assert got[0].payload == pieces[1].payload  # the whole payload
    [section] = store.parent("a/s")
    assert section.payload["text"] == "prose"
    assert store.parent("a/none") == []
    store.close()
    assert backend().parent("a/t") == got  # reopened


def test_parent_on_a_missing_store(backend):
    assert backend().parent("anything") == []


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant")
def test_payloads_of_the_points_matching_a_keyword(backend):
    store = backend()
    store.ensure_collection(DIM)
    for doc in ("a", "b"):
        points = make_points(doc, {f"{doc}/p0": ["one", "two"], f"{doc}/p1": ["three"]})
        points[0] = points[0].model_copy(update={"payload": points[0].payload | {"unit_kind": "card"}})
        store.replace_document(doc, points)
    found = store.payloads("unit_kind", "card", ["doc_id", "text"])
    assert sorted(found, key=lambda p: p["doc_id"]) == [{"doc_id": "a", "text": "one"}, {"doc_id": "b", "text": "one"}]
    assert store.payloads("unit_kind", "section", ["doc_id"]) == []
