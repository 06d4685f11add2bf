"""Routing queries to documents through the cards of real documents."""

import time
from pathlib import Path

import pytest

from evidence_pipeline.cards import build_card
from evidence_pipeline.evaluation.routing_eval import evaluate, load_questions, scaled
from evidence_pipeline.retrieval.named_documents import RoutingIndex, resolve
from evidence_pipeline.retrieval.query import query_periods
from evidence_pipeline_tests.test_cards import first_pages  # noqa: F401  (one parse cache for both modules)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tenq_cards(corpora, first_pages):
    return [build_card(first_pages(p)) for p in sorted((corpora / "sec-10q-dev" / "pdfs").glob("*.pdf"))]


@pytest.fixture(scope="module")
def sop_cards(sample_corpus, first_pages):
    return [build_card(first_pages(p)) for p in sorted(sample_corpus.glob("*.pdf"))]


@pytest.fixture(scope="module")
def index(tenq_cards, sop_cards):
    return RoutingIndex([*tenq_cards, *sop_cards])


def top(index, query):
    resolved = index.resolve(query)
    assert resolved, f"nothing resolved for {query!r}"
    return resolved[0][0]


def test_organisation_and_date(index):
    assert top(index, "Apple's gross margin for the three months ended June 25, 2022") == "2022 Q3 AAPL"
    assert top(index, "Microsoft revenue for the quarter ended December 2022") == "2023 Q1 MSFT"
    assert top(index, "NVIDIA first quarter of fiscal 2024 revenue") == "2023 Q1 NVDA"


def test_ticker_resolves_to_that_issuer_only(index):
    resolved = dict(index.resolve("AAPL net sales by category"))
    assert set(resolved) == {"2022 Q3 AAPL", "2023 Q1 AAPL"}
    # a ticker counts only when printed in capitals
    assert index.resolve("aapl net sales") == []


def test_organisation_and_period_beat_either_alone(index):
    both = dict(index.resolve("Intel Q3 2022 inventories"))
    org_only = dict(index.resolve("Intel inventories"))
    period_only = dict(index.resolve("inventories in Q3 2022"))
    assert max(both, key=both.get) == "2022 Q3 INTC"
    assert both["2022 Q3 INTC"] > org_only["2022 Q3 INTC"] == org_only["2023 Q1 INTC"]
    assert both["2022 Q3 INTC"] > max(period_only.values())
    # the other quarter of the same issuer still resolves; other issuers do not
    assert set(both) == {"2022 Q3 INTC", "2023 Q1 INTC"}


def test_identifier_is_exact(index):
    assert index.resolve("What does SOP-QA-070 require?")[0] == ("SOP-QA-070", 1.0)
    assert top(index, "SOP-QA-007 endotoxin limit") == "SOP-QA-007"
    assert "SOP-QA-070" not in dict(index.resolve("SOP-QA-007 endotoxin limit"))


def test_title_part(index):
    assert top(index, "light intensity in the visual inspection of filled vials") == "SOP-QA-070"


def test_near_twin_titles(sop_cards):
    """Two documents that differ by one title word (cards of a real SOP, retitled as twins)."""
    base = next(c for c in sop_cards if c.doc_id == "SOP-MFG-231")
    twins = [
        base.model_copy(update={"doc_id": f"TWIN-{n}", "title": f"Column Chromatography Elution, Line {n}", "identifiers": []})
        for n in (1, 3)
    ]
    index = RoutingIndex([*sop_cards, *twins])
    for n, other in ((1, 3), (3, 1)):
        resolved = dict(index.resolve(f"maximum load under the Column Chromatography Elution, Line {n} procedure"))
        assert resolved[f"TWIN-{n}"] > resolved.get(f"TWIN-{other}", 0)
    shared = dict(index.resolve("Column Chromatography Elution maximum load"))
    assert shared["TWIN-1"] == shared["TWIN-3"]  # neither line named: no preference
    # Both lines' numbers in the query, one of them as the title prints it ("Line 1"), the other
    # elsewhere ("Buffer 3"): every word of both titles is held, the pair "line 1" of one only.
    for n, other in ((1, 3), (3, 1)):
        resolved = dict(index.resolve(f"maximum load of Buffer {other} under the Column Chromatography Elution, Line {n} procedure"))
        assert resolved[f"TWIN-{n}"] >= 2 * resolved[f"TWIN-{other}"] > 0  # the twin is not routed beside it


def test_query_naming_nothing_resolves_nothing(index):
    for query in (
        "What is the maximum flow rate of Aqueous Phase 1 in mL/min?",
        "What does the Company disclose about its revenue?",
        "all of the tables on page 3",
    ):
        assert index.resolve(query) == []


def test_query_periods():
    (q,) = query_periods("Q3 2023")
    assert (q.year, q.quarter, q.fiscal) == (2023, 3, False)
    (q,) = query_periods("fiscal 2022")
    assert (q.year, q.quarter, q.fiscal) == (2022, None, True)
    (q,) = query_periods("three months ended April 1, 2023")
    assert q.end.isoformat() == "2023-04-01"
    (q,) = query_periods("for the quarter ended July 2023")
    assert q.month_only and (q.end.year, q.end.month) == (2023, 7)
    (q,) = query_periods("in the first quarter of 2023")
    assert (q.year, q.quarter) == (2023, 1)
    assert query_periods("Q22023 revenue")[0].quarter == 2
    (q,) = query_periods("excess inventory purchase obligations as of October 30, 2022")
    assert q.end.isoformat() == "2022-10-30" and not q.weak  # a balance-sheet date
    (q,) = query_periods("cash at 1 July 2023")
    assert q.end.isoformat() == "2023-07-01"
    (q,) = query_periods("debt as of 2022")
    assert q.end is None and q.weak  # a year alone stays a weak hint


def test_a_period_alone_routes_to_no_document(tenq_cards):
    """Two issuers' filings for one quarter: a query naming only the quarter ranks them but routes
    to neither; with the issuer named, it routes."""
    from evidence_pipeline.retrieval import DEFAULT_ROUTING, routed_documents

    index = RoutingIndex(tenq_cards)
    query = "What drove the change in inventories in Q3 2022?"
    assert {"2022 Q3 AAPL", "2022 Q3 INTC"} <= {doc for doc, _ in index.resolve(query)}
    assert routed_documents(query, index, DEFAULT_ROUTING) == []
    assert routed_documents("What drove the change in Intel's inventories in Q3 2022?", index, DEFAULT_ROUTING) == ["2022 Q3 INTC"]


def test_a_balance_sheet_date_picks_the_quarter_that_ends_on_it(tenq_cards):
    from evidence_pipeline.retrieval import DEFAULT_ROUTING, routed_documents

    index = RoutingIndex(tenq_cards)
    assert routed_documents("NVDA accounts receivable as of April 30, 2023", index, DEFAULT_ROUTING) == ["2023 Q1 NVDA"]
    assert routed_documents("NVDA accounts receivable as of October 30, 2022", index, DEFAULT_ROUTING) == ["2022 Q3 NVDA"]


def test_question_set_and_speed(tenq_cards):
    questions = load_questions(ROOT / "data" / "questions" / "sec-10q.jsonl")
    figures = evaluate(tenq_cards, questions)
    assert figures.coverage == 1.0
    assert figures.top1 >= 0.85
    big = scaled(tenq_cards, 1000)
    index = RoutingIndex(big)
    start = time.perf_counter()
    for q, _ in questions:
        index.resolve(q)
    per_query_ms = 1000 * (time.perf_counter() - start) / len(questions)
    assert per_query_ms < 10  # about 0.3 ms measured; loose for a shared machine
    assert resolve("Apple Q3 2022", tenq_cards)[0][0] == "2022 Q3 AAPL"


def test_lookups_that_name_a_period_as_the_filing_prints_it(tenq_cards):
    """The figure lookups name their company in varied forms (legal name, short name, ticker)
    and their period as the filing prints it ("three months ended", "as of", "Q2 fiscal 2023")."""
    figures = evaluate(tenq_cards, load_questions(ROOT / "data" / "questions" / "sec-10q-lookup.jsonl"))
    assert figures.coverage == 1.0 and figures.top1 >= 0.95
    # what search does with them (the default routing's thresholds): their own filing, alone
    assert figures.routed_own >= 0.95 and figures.routed_elsewhere == 0.0
    assert figures.routed_own + figures.routed_among <= 1.0


def test_routed_kinds_count_a_scaled_copy_as_its_original():
    from evidence_pipeline.evaluation.routing_eval import _routed_kind

    assert _routed_kind([], "a") == "none"
    assert _routed_kind(["a", "a#3"], "a") == "own"
    assert _routed_kind(["a", "b"], "a") == "among"
    assert _routed_kind(["b#1"], "a") == "elsewhere"


def test_the_next_quarter_of_the_same_issuer_is_not_routed_beside_the_named_one(tenq_cards):
    from evidence_pipeline.retrieval import DEFAULT_ROUTING, routed_documents

    index = RoutingIndex(tenq_cards)
    query = "What did Microsoft report as its net cash from operating activities in the Q3 2022 10-Q?"
    resolved = dict(index.resolve(query))
    assert resolved["2022 Q3 MSFT"] > resolved["2023 Q1 MSFT"] > 0  # the quarter after still ranks
    assert routed_documents(query, index, DEFAULT_ROUTING) == ["2022 Q3 MSFT"]


def _filing(doc_id, organisation, names, doc_type, period_end, months, fiscal_year, tickers=()):
    from evidence_pipeline.records import DocumentCard

    return DocumentCard(
        doc_id=doc_id,
        title=f"{organisation} Form {doc_type}",
        doc_type=doc_type,
        organisation=organisation,
        names=list(names),
        tickers=list(tickers),
        period_end=period_end,
        period_months=months,
        fiscal_year=fiscal_year,
    )


def test_a_short_name_is_named_as_printed_and_a_form_without_its_hyphen():
    # "3M" is two characters: too short to look up among the query's lowercased words (where
    # "us" or "it" would name documents by chance); it is matched as printed, like a ticker.
    cards = [
        _filing("mmm", "3M COMPANY", ["3M"], "10-K", "2018-12-31", 12, 2018),
        _filing("ge", "GENERAL ELECTRIC COMPANY", ["GE"], "10-K", "2018-12-31", 12, 2018),
        _filing("pfe-k", "PFIZER INC.", ["PFIZER"], "10-K", "2021-12-31", 12, 2021, ["PFE"]),
        _filing("pfe-q", "PFIZER INC.", ["PFIZER"], "10-Q", "2023-07-02", 3, 2023, ["PFE"]),
    ]
    index = RoutingIndex(cards)
    assert top(index, "What is the FY2018 capital expenditure amount for 3M?") == "mmm"
    assert top(index, "GE revenue in 2018") == "ge"
    lower = dict(index.resolve("ge revenue in 2018"))  # in lower case it is no name: the year alone
    assert lower["ge"] == lower["mmm"]
    # "10K" names the form "10-K" as "10-K" does; "10-K" names no ticker "K"
    assert index.resolve("companies acquired by Pfizer mentioned in this 10K report")[0][0] == "pfe-k"
    resolved = dict(index.resolve("companies acquired by Pfizer in this 10-K"))
    assert resolved["pfe-k"] > resolved["pfe-q"]
    both = dict(index.resolve("companies acquired by Pfizer"))
    assert both["pfe-k"] == both["pfe-q"]


def _dated_filing(doc_id, organisation, names, period_end, fiscal_year):
    from datetime import date

    from evidence_pipeline.records import DocumentCard

    day = date.fromisoformat(period_end)
    return DocumentCard(
        doc_id=doc_id,
        title=f"{organisation} Form 10-K for the fiscal year ended {day:%B} {day.day}, {day.year}",
        doc_type="10-K",
        organisation=organisation,
        names=list(names),
        period_end=period_end,
        period_months=12,
        fiscal_year=fiscal_year,
    )


def test_a_date_names_a_period_not_a_title():
    """A filing's title ends in the date of its period: those words name no document by its
    title, so a query that names a date alone routes nowhere (``test_a_period_alone...``)."""
    from evidence_pipeline.retrieval import DEFAULT_ROUTING, routed_documents

    cards = [
        _dated_filing("bby", "BEST BUY CO., INC.", ["BEST BUY"], "2023-01-28", 2023),
        _dated_filing("ulta", "ULTA BEAUTY, INC.", ["ULTA BEAUTY"], "2023-01-28", 2022),
        _dated_filing("amzn", "AMAZON.COM, INC.", ["AMAZON.COM"], "2017-12-31", 2017),
        _dated_filing("ko", "THE COCA-COLA COMPANY", ["COCA-COLA"], "2017-12-31", 2017),
    ]
    index = RoutingIndex(cards)
    for query in ("Net income — 52 Weeks Ended January 28, 2023 (Unaudited)?", "Year ended December 31, 2017: what is Home Care?"):
        assert routed_documents(query, index, DEFAULT_ROUTING) == [], query
    assert routed_documents("Best Buy's net income for the year ended January 28, 2023", index, DEFAULT_ROUTING) == ["bby"]


def test_an_organisation_of_three_words_is_named_by_its_initials():
    cards = [
        _dated_filing("amd", "ADVANCED MICRO DEVICES, INC.", ["ADVANCED MICRO DEVICES"], "2015-12-26", 2015),
        _dated_filing("adbe", "ADOBE SYSTEMS INCORPORATED", ["ADOBE SYSTEMS"], "2015-11-27", 2015),
    ]
    index = RoutingIndex(cards)
    assert top(index, "In AMD's 2015 10-K, what is the Sep. 27 of Net revenue?") == "amd"
    assert "adbe" not in dict(index.resolve("In AMD's 2015 10-K, what is the Sep. 27 of Net revenue?"))
    # as printed only, like a ticker; two words give no initials ("Adobe Systems" is no "AS")
    assert "amd" not in dict(index.resolve("amd revenue"))
    assert index.resolve("AS revenue") == []


def _financebench_cards(corpora, first_pages, more: tuple[str, ...]) -> dict:
    """Cards of the named financebench-more filings and of financebench-dev's Ulta Beauty earnings
    release (which ends its period on the day Best Buy's 10-K does), by file stem; the test skips
    when the corpora are absent."""
    paths = [corpora / "financebench-more" / "pdfs" / f"{name}.pdf" for name in more]
    paths.append(corpora / "financebench-dev" / "pdfs" / "ULTABEAUTY_2023Q4_EARNINGS.pdf")
    if not all(p.is_file() for p in paths):
        pytest.skip("financebench corpora not present")
    return {p.stem: build_card(first_pages(p)) for p in paths}


def test_real_covers_name_a_filer_by_its_initials_and_a_date_alone_routes_nowhere(corpora, first_pages):
    """The covers of two fiscal-2015 10-Ks (Advanced Micro Devices, Adobe Systems) and of a
    10-K and an earnings release that end on January 28, 2023: "AMD" names the first filer,
    and the date its 10-K's title ends in names no document by that title."""
    from evidence_pipeline.retrieval import DEFAULT_ROUTING, routed_documents

    cards = _financebench_cards(corpora, first_pages, ("AMD_2015_10K", "ADOBE_2015_10K", "BESTBUY_2023_10K"))
    index = RoutingIndex(list(cards.values()))
    assert routed_documents("In AMD's 2015 10-K, what is the Sep. 27 of Net revenue?", index, DEFAULT_ROUTING) == ["AMD_2015_10K"]
    assert routed_documents("Net income — 52 Weeks Ended January 28, 2023 (Unaudited)?", index, DEFAULT_ROUTING) == []
    assert routed_documents("Best Buy's net income for the fiscal year ended January 28, 2023", index, DEFAULT_ROUTING) == [
        "BESTBUY_2023_10K"
    ]


def test_a_cover_names_its_registrant_never_its_state_and_a_common_word_names_no_filer(corpora, first_pages):
    """Real covers (four FinanceBench filings): General Mills prints its name on the line of
    "(Exact name of registrant...)"; Coca-Cola's name is a logo, so its labelled fields hold only
    its state of incorporation, which names no filer. Square, Inc. is named by "Square", never by
    "square feet"; and a title made of the form's words alone ("Form 10-K for the fiscal year
    ended ...") is named by no query that holds them."""
    from evidence_pipeline.retrieval import DEFAULT_ROUTING, routed_documents

    cards = _financebench_cards(corpora, first_pages, ("GENERALMILLS_2020_10K", "COCACOLA_2017_10K", "BLOCK_2016_10K"))
    assert cards["GENERALMILLS_2020_10K"].organisation == "GENERAL MILLS, INC."
    assert "Delaware" not in (cards["COCACOLA_2017_10K"].organisation or "")
    index = RoutingIndex(list(cards.values()))

    def routed(query):
        return routed_documents(query, index, DEFAULT_ROUTING)

    assert routed("General Mills's free cash flow in FY2020") == ["GENERALMILLS_2020_10K"]
    assert routed("KCI Cayman Holdings — Delaware?") == []
    assert routed("Total gross square feet at end of the quarter: what is the figure for 1st Quarter?") == []
    assert routed("Square's 2016 10-K: what is Total net revenue?") == ["BLOCK_2016_10K"]
    assert routed("square's total net revenue in 2016") == ["BLOCK_2016_10K"]  # typed all in lower case
    assert routed("In Block's 2016 10-K, what is the Year Ended December 31, 2014 of Amortization of intangible assets?") == []
