"""Document routing in search, on real parsed documents: the first pages of three 10-Qs
(two quarters of one issuer and another issuer), embedded for real into an Edge store."""

import numpy as np
import pytest

from evidence_pipeline.children import unit_children
from evidence_pipeline.pipeline import PipelineOptions, card_of, document_points, evidence_units, prepare, sparse_vectors
from evidence_pipeline_tests.test_cards import first_pages  # noqa: F401  (one parse cache for the card tests)

FILINGS = ("2022 Q3 AAPL", "2023 Q1 AAPL", "2022 Q3 MSFT")


@pytest.fixture(scope="module")
def filings(corpora, first_pages):
    return [first_pages(corpora / "sec-10q-dev" / "pdfs" / f"{stem}.pdf") for stem in FILINGS]


@pytest.fixture(scope="module")
def store(filings, tmp_path_factory):
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.pipeline import ingest_parsed
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store.edge import EdgeStore

    store = EdgeStore(StoreSettings(path=str(tmp_path_factory.mktemp("routing") / "store")))
    embedder = Embedder()
    for doc in filings:
        ingest_parsed(doc, store, embedder, token_counter(None))
    yield store, embedder
    store.close()


def test_every_payload_carries_the_card(filings):
    from evidence_pipeline.embedding import token_counter

    doc = filings[1]
    units, children = prepare(doc, token_counter(None), PipelineOptions())
    card = card_of(units)
    assert card is not None and card.organisation and card.tickers == ["AAPL"]
    assert card.period_end == "2022-12-31" and (card.fiscal_year, card.fiscal_quarter) == (2023, 1)
    points = document_points(doc, units, children, np.zeros((len(children), 4)), sparse_vectors(children), "v1")
    for point in points:
        p = point.payload
        assert (p["doc_title"], p["organisation"], p["tickers"]) == (card.title, card.organisation, card.tickers)
        assert (p["period_end"], p["fiscal_year"], p["fiscal_quarter"]) == ("2022-12-31", 2023, 1)
    assert [p.payload["unit_kind"] for p in points].count("card") == 1


def test_the_card_is_the_first_unit_and_names_the_filing(filings):
    from evidence_pipeline.embedding import token_counter

    units = evidence_units(filings[0], PipelineOptions(), token_counter(None))
    card = units[0]
    assert card.kind == "card" and card.card is not None
    assert f"Organisation: {card.card.organisation}" in card.text and "Tickers: AAPL" in card.text
    assert all(u.doc_title == card.card.title for u in units)  # every unit under the clean title
    [child] = unit_children(card)
    assert child.kind == "card" and "issued by" in child.text


def test_stored_cards_are_the_built_cards(store, filings):
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.retrieval import stored_cards

    built = {
        c.doc_id: c.model_copy(update={"dates": []})
        for d in filings
        for c in [card_of(evidence_units(d, PipelineOptions(), token_counter(None)))]
    }
    assert {c.doc_id: c for c in stored_cards(store[0])} == built


@pytest.mark.parametrize(
    "query, doc_id",
    [
        ("What were Apple's total net sales for the three months ended December 31, 2022?", "2023 Q1 AAPL"),
        ("Apple net sales in Q3 2022", "2022 Q3 AAPL"),
        ("Microsoft total revenue for the quarter", "2022 Q3 MSFT"),
    ],
)
def test_the_named_document_ranks_first(store, query, doc_id):
    from evidence_pipeline.retrieval import search_store

    hits = search_store(*store, query, k=8)
    docs = [h.doc_id for h in hits]
    # the routed document's parents all come before any other document's
    assert docs[0] == doc_id and docs == sorted(docs, key=lambda d: d != doc_id)


def test_a_query_that_names_no_document_is_not_routed(store):
    from evidence_pipeline.retrieval import Routing, search_store

    query = "total net sales and operating income"
    routed = search_store(*store, query, k=8)
    plain = search_store(*store, query, k=8, routing=Routing(mode="off"))
    assert [h.parent_id for h in routed] == [h.parent_id for h in plain]


def test_the_card_answers_who_issued_a_filing(store):
    from evidence_pipeline.retrieval import search_store

    hits = search_store(*store, "Which company issued the Form 10-Q for the quarterly period ended December 31, 2022?", k=5)
    cards = [h for h in hits if h.unit_kind == "card"]
    assert cards and cards[0].doc_id == "2023 Q1 AAPL"
    assert "Organisation: Apple Inc." in cards[0].parent_text


def test_a_statement_comes_back_whole_with_its_later_rows(filings, store):
    """The income statement (page 4, 24 rows) fits the default parent budget: a question about
    its last rows gets the whole table, from its first row to the asked one."""
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.pipeline import document_units
    from evidence_pipeline.retrieval import search_store

    counter = token_counter(None)
    statement = [u for u in document_units(filings[0], PipelineOptions(), counter) if u.kind == "table" and u.pages == [4]]
    assert len(statement) == 1 and statement[0].n_pieces == 1
    assert len(document_units(filings[0], PipelineOptions(max_parent_tokens=700), counter)) > len(
        document_units(filings[0], PipelineOptions(), counter)
    )  # the old budget split it
    first_row, last_row = statement[0].rows[0][0], statement[0].rows[-1][0]
    hits = search_store(*store, "Apple diluted shares used in computing earnings per share, three months ended June 25, 2022", k=3)
    table = next(h for h in hits if h.unit_kind == "table")
    assert table.pages == [4] and first_row in table.parent_text and last_row in table.parent_text


def test_a_measure_right_after_the_issuers_name_asks_for_its_statement(store, monkeypatch):
    """ "Apple revenue", "AAPL revenue": no possessive, no row named (the statement prints "Total
    net sales"). The names the card gives the routed filing make the measure the company's, so
    the income statement comes first; without them "Apple" could name a part, and it does not."""
    from evidence_pipeline.records import DocumentCard
    from evidence_pipeline.retrieval import search_store

    queries = ("Apple revenue for the quarter ended June 25, 2022", "AAPL revenue in Q3 2022")
    for query in queries:
        first = search_store(*store, query, k=3)[0]
        assert (first.doc_id, first.statement) == ("2022 Q3 AAPL", "income statement"), query
    monkeypatch.setattr(DocumentCard, "known_as", property(lambda card: []))
    for query in queries:
        assert search_store(*store, query, k=3)[0].statement != "income statement", query
