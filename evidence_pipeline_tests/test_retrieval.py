import pytest

from evidence_pipeline.records import SearchHit
from evidence_pipeline.retrieval import context_texts, pack, render_context, to_hit
from evidence_pipeline.store.base import StoredHit
from evidence_pipeline.units import approx_tokens, build_units
from evidence_pipeline_tests.docs import lnp_doc
from evidence_pipeline_tests.test_store import backend  # noqa: F401  (fixture)


def _hits():
    units = build_units(lnp_doc())
    hits = []
    for n, unit in enumerate(units):
        hits.append(
            SearchHit(
                parent_id=unit.parent_id,
                unit_id=unit.unit_id,
                score=1.0 / (n + 1),
                doc_id=unit.doc_id,
                doc_title=unit.doc_title,
                pages=unit.pages,
                section_path=unit.section_path,
                caption=unit.caption,
                unit_kind=unit.kind,
                matched_text="x",
                parent_text=unit.text,
            )
        )
    return hits


def test_shared_document_and_section_header_rendered_once():
    table, sec_a, sec_b = _hits()
    twin = sec_a.model_copy(update={"parent_id": "other", "parent_text": sec_a.parent_text + "\nmore"})
    texts = context_texts([sec_a, twin, table])
    assert texts[0] == sec_a.parent_text
    assert not texts[1].startswith("Document:") and texts[1].endswith("more")
    assert texts[2] == table.parent_text  # another section: its header stays
    assert render_context([sec_a, twin]).count("Document: SOP-8812") == 1


def test_pack_keeps_rank_order_within_budget():
    hits = _hits()
    sizes = [approx_tokens(t) for t in context_texts(hits)]
    assert pack(hits, sizes[0] + sizes[1], approx_tokens) == hits[:2]
    assert pack(hits, 1, approx_tokens) == hits[:1]
    assert pack(hits, 10**6, approx_tokens) == hits


def test_to_hit_maps_payload():
    payload = {
        "parent_id": "p",
        "unit_id": "p-s1",
        "child_id": "p-s1-c0",
        "doc_id": "d",
        "doc_title": "T",
        "pages": [3],
        "section_path": ["1 A"],
        "caption": "Table 1: x",
        "unit_kind": "table",
        "child_kind": "row",
        "text": "row",
        "parent_text": "parent",
        "content_hash": "h",
        "pipeline_version": "v",
        "doc_type": None,
        "organisation": None,
        "names": [],
        "tickers": [],
        "period_end": None,
        "period_months": None,
        "fiscal_year": None,
        "fiscal_quarter": None,
        "identifiers": [],
    }
    hit = to_hit(StoredHit(id="i", score=0.5, payload=payload))
    assert (hit.parent_id, hit.unit_id, hit.pages, hit.matched_text, hit.parent_text) == ("p", "p-s1", [3], "row", "parent")


def test_weighted_rrf_lifts_parents_in_both_rankings():
    from evidence_pipeline.retrieval import weighted_rrf

    def h(parent):
        return StoredHit(id=parent, score=0.0, payload={"parent_id": parent})

    merged = weighted_rrf([([h("a"), h("b"), h("c")], 1.0), ([h("c")], 1.0)], k=3)
    assert [m.payload["parent_id"] for m in merged] == ["c", "a", "b"]
    assert merged[0].score == 1 / 63 + 1 / 61
    # a weight lifts its list: c first in a list of weight 2 beats a first in a list of weight 1
    assert [m.payload["parent_id"] for m in weighted_rrf([([h("a")], 1.0), ([h("c")], 2.0)], k=2)] == ["c", "a"]


def test_bm25s_own_first_parents_are_candidates_for_a_named_row_only():
    from evidence_pipeline.retrieval import with_lexical
    from evidence_pipeline.retrieval.named_rows import NAMED_ROW_DEPTH, promote_named_rows
    from evidence_pipeline.tables import table_html

    def h(parent, text="Research and development spending rose with headcount."):
        return StoredHit(id=parent, score=0.0, payload={"parent_id": parent, "parent_text": text})

    statement = table_html([["", "Q1 2023"]], [["Revenue", "$7,192"], ["Research and development", "1,875"]])
    fused = [h(f"prose-{n}") for n in range(NAMED_ROW_DEPTH)]  # the statement ranks below these
    query = "How much did NVIDIA allocate to research and development in Q1 2023?"
    text = lambda hit: hit.payload["parent_text"]  # noqa: E731

    found = with_lexical(fused, [h("prose-3"), h("statement", statement), h("other")])
    assert [x.payload["parent_id"] for x in found[NAMED_ROW_DEPTH:]] == ["statement", "other"]  # no repeats, BM25's order
    first = promote_named_rows(found, query, text, depth=len(found))[:5]
    assert first[0].payload["parent_id"] == "statement"
    # BM25's other parents are no candidates for anything else: they follow every fused parent
    unnamed = promote_named_rows(with_lexical(fused, [h("other")]), query, text, depth=NAMED_ROW_DEPTH + 1)
    assert [x.payload["parent_id"] for x in unnamed] == [*(f"prose-{n}" for n in range(NAMED_ROW_DEPTH)), "other"]
    # without BM25's list the statement is not there to move up
    assert "statement" not in [x.payload["parent_id"] for x in promote_named_rows(fused, query, text)]


def test_weighted_rrf_gives_ties_to_the_earlier_list():
    from evidence_pipeline.retrieval import weighted_rrf

    def h(parent):
        return StoredHit(id=parent, score=0.0, payload={"parent_id": parent})

    # b and a are first in one list and second in the other: equal scores, the first list's first wins.
    for first, second in (("b", "a"), ("a", "b")):
        merged = weighted_rrf([([h(first), h(second)], 1.0), ([h(second), h(first)], 1.0)], k=2)
        assert [m.payload["parent_id"] for m in merged] == [first, second]
        assert merged[0].score == merged[1].score


def _tied_points(order):
    """Two parents with equal RRF scores: one first by dense, the other first by BM25."""
    from evidence_pipeline_tests.test_store import DIM, make_points

    near = [1.0] + [0.0] * (DIM - 1)
    far = [2**-0.5, 2**-0.5] + [0.0] * (DIM - 2)
    texts = {"d/b-dense": ["flow limits"], "d/a-sparse": ["flow rate limits"]}
    vectors = {"flow limits": near, "flow rate limits": far}
    points = make_points("d", {p: texts[p] for p in order}, dense=lambda t: vectors[t])
    return points, near


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant")
@pytest.mark.parametrize("order", [("d/b-dense", "d/a-sparse"), ("d/a-sparse", "d/b-dense")])
def test_store_ties_come_back_in_parent_id_order(backend, order):
    from evidence_pipeline.sparse import SparseEncoder

    points, query = _tied_points(order)
    store = backend()
    store.ensure_collection(len(query))
    store.replace_document("d", points)
    sparse = SparseEncoder().encode_query("flow rate")
    for _ in range(3):
        hits = store.hybrid_search(query, sparse, 2)
        assert [h.payload["parent_id"] for h in hits] == ["d/a-sparse", "d/b-dense"]
        assert hits[0].score == hits[1].score
        assert [h.payload["parent_id"] for h in store.hybrid_search(query, sparse, 1)] == ["d/a-sparse"]


@pytest.mark.parametrize(
    "query, k, budget, message",
    [
        ("", None, None, "the query is empty"),
        ("  \t", None, None, "the query is empty"),
        ("flow", 0, None, "k must be at least 1, not 0"),
        ("flow", -1, None, "k must be at least 1, not -1"),
        ("flow", None, 0, "the token budget must be at least 1, not 0"),
    ],
)
def test_search_api_rejects_bad_input(query, k, budget, message, tmp_path):
    import evidence_pipeline
    from evidence_pipeline.settings import StoreSettings

    with pytest.raises(ValueError, match=message):
        evidence_pipeline.search(query, k, token_budget=budget, store_settings=StoreSettings(path=str(tmp_path / "none")))
    assert not (tmp_path / "none").exists()


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    """Three copies of the hand-made SOP under three ids, embedded for real: a dozen parents."""
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.pipeline import ingest_parsed
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store

    settings = StoreSettings(path=str(tmp_path_factory.mktemp("small") / "store"))
    with open_store(settings) as store:
        for n in range(3):
            doc = lnp_doc(extra_rows=3).model_copy(update={"doc_id": f"SOP-88{n}0", "content_hash": f"{n}" * 64})
            ingest_parsed(doc, store, Embedder(), token_counter(None))
    return settings


def _parents(settings) -> set[str]:
    from evidence_pipeline.store import open_store

    with open_store(settings) as store:
        return {p.payload["parent_id"] for doc in store.document_hashes() for p in store.iter_points(doc)}


def test_token_budget_is_applied_before_k(small_store):
    from evidence_pipeline.retrieval import DEFAULT_K, search

    parents = _parents(small_store)
    assert len(parents) > DEFAULT_K  # otherwise the default k could not cut the list
    assert len(search("pump flow rate limits", store_settings=small_store)) == DEFAULT_K
    everything = search("pump flow rate limits", token_budget=10**6, store_settings=small_store)
    assert {h.parent_id for h in everything} == parents
    assert len(search("pump flow rate limits", 2, token_budget=10**6, store_settings=small_store)) == 2


def test_budget_note_when_the_first_parent_alone_is_larger(small_store):
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.retrieval import budget_note, context_texts, search

    count = token_counter(None).count
    [hit] = search("pump flow rate limits", token_budget=50, store_settings=small_store)
    size = count(context_texts([hit])[0])
    assert size > 50
    assert budget_note([hit], 50, count) == f"the first result alone is {size} tokens, over the budget of 50"
    assert budget_note([hit], size, count) is None
