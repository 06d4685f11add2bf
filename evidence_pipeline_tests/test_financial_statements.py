"""Financial statements: the name a caption prints, the kind a table is, and the statements a
query names, in search."""

from pathlib import Path

import pytest

from evidence_pipeline.financial_statements import statement_kind, statement_name, statement_title
from evidence_pipeline.retrieval.named_rows import promote_named_rows
from evidence_pipeline.retrieval.named_statements import MEASURED, NamedStatements
from evidence_pipeline.tables import table_html
from evidence_pipeline.vocabulary import keyed_words as words


@pytest.mark.parametrize(
    "caption, name",
    [
        ("3M Company and Subsidiaries Consolidated Statement of Cash Flow s", "statement cash flow"),  # a split letter is no word
        ("CONSOLIDATED BALANCE SHEETS", "balance sheet"),
        ("Consolidated Statements of Income Years ended December 31", "statement income"),  # the period is not its name
        ("CONDENSED STATEMENTS OF INCOME AND COMPREHENSIVE INCOME", "statement income comprehensive"),
        ("CONSOLIDATED STATEMENTS OF OPERATIONS", "statement operations"),
        ("TABLE 11: SELECTED INCOME STATEMENT DATA", ""),
        ("Table 1: Pump flow rate limits", ""),  # no statement
        ("Statement of", ""),
    ],
)
def test_statement_name(caption, name):
    assert statement_name(caption) == frozenset(words(name))


def _statement(caption: str | None, label: str = "Purchases of property, plant and equipment (PP&E)", section_path=()) -> dict:
    """A stored table's payload, as search reads it."""
    text = table_html([["(Millions)", "2018"]], [[label, "(1,577)"]], caption=caption)
    return {"parent_text": text, "caption": caption, "section_path": list(section_path), "unit_kind": "table"}


def test_a_query_names_the_statement_whose_every_word_it_holds():
    flows = _statement("3M Company and Subsidiaries Consolidated Statement of Cash Flows (Millions)")
    query = NamedStatements("What is the FY2018 capital expenditure? Rely on the details shown in the cash flow statement.")
    assert query.strength(flows) == 3
    assert query.strength(_statement("Consolidated Statements of Cash Flows Analysis")) == 0  # a word it does not hold
    assert query.strength(_statement(None)) == 0  # no caption, no heading
    assert query.strength({**flows, "unit_kind": "section"}) == 0
    assert NamedStatements("What was the capital expenditure in 2018?").strength(flows) == 0  # no stored kind
    # a statement whose title the parser read as a heading
    assert query.strength(_statement(None, section_path=["Financial Statements", "Consolidated Statements of Cash Flows"])) == 3
    # a heading is a statement's title only where it titles a primary statement
    assert statement_title(None, ["Item 8. Financial Statements and Supplementary Data"]) is None
    assert statement_title(None, ["Consolidated Condensed Balance Sheets"]) == "Consolidated Condensed Balance Sheets"
    assert statement_title("Table 3: Debt", ["Consolidated Condensed Balance Sheets"]) == "Table 3: Debt"


def test_a_query_names_a_statement_by_another_of_its_names():
    income = NamedStatements("Calculate it from the line items shown in the statement of income.")
    assert income.strength(_statement("CONSOLIDATED STATEMENTS OF OPERATIONS (in millions)")) == 2
    assert income.strength(_statement("Consolidated Statements of Earnings")) == 2
    assert income.strength(_statement("Consolidated Statements of Income")) == 2
    # comprehensive income is another statement; a balance sheet is not the statement of income
    assert income.strength(_statement("Consolidated Statements of Comprehensive Income")) == 0
    assert income.strength(_statement("Consolidated Balance Sheets")) == 0
    both = NamedStatements("Use the P&L statement and the statement of financial position.")
    assert both.strength(_statement("CONSOLIDATED STATEMENTS OF OPERATIONS")) == 2
    assert both.strength(_statement("Consolidated Balance Sheets")) == 2
    assert both.strength(_statement("Consolidated Statements of Cash Flows")) == 0


def test_the_statement_the_instructions_name_comes_first():
    """3M's capital expenditure "shown in the cash flow statement": the statement prints it as
    "Purchases of property, plant and equipment", a row the question does not name, while a
    derivatives table's "Amount" row is named by "amount"."""
    query = (
        "What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response to the "
        "question by relying on the details shown in the cash flow statement."
    )
    derivatives = table_html([], [["Amount", "64"]], caption="Derivative instruments")
    flows = _statement("Consolidated Statement of Cash Flows")
    hits = [
        {"id": 0, "parent_text": "prose", "unit_kind": "section"},
        {"id": 1, **flows},
        {"id": 2, "parent_text": derivatives, "caption": "Derivative instruments", "unit_kind": "table"},
    ]
    named = NamedStatements(query).strength
    assert [h["id"] for h in promote_named_rows(hits, query, lambda h: h["parent_text"], statement=named)] == [1, 2, 0]
    assert [h["id"] for h in promote_named_rows(hits, query, lambda h: h["parent_text"])] == [2, 0, 1]  # rows alone


@pytest.mark.parametrize(
    "caption, kind",
    [
        ("CONSOLIDATED STATEMENTS OF OPERATIONS (in millions, except per share data)", "income statement"),
        ("Consolidated Statement of Earnings", "income statement"),
        ("Consolidated Statement of Profit or Loss", "income statement"),
        ("CONDENSED CONSOLIDATED BALANCE SHEETS", "balance sheet"),
        ("Consolidated Statements of Financial Position", "balance sheet"),
        ("3M Company and Subsidiaries Consolidated Statement of Cash Flow s", "cash flow statement"),
        ("3M Company and Subsidiaries Consolidated Balance Shee t", "balance sheet"),  # a letter set apart joins back
        ("3M Company and Subsidiaries Consolidated Statement of Incom e", "income statement"),
        ("Consolidated Statement of Comprehensive Incom e Years ended December 31", None),
        ("CONSOLIDATED STATEMENTS OF COMPREHENSIVE INCOME (in millions)", None),  # not a primary statement here
        ("CONSOLIDATED STATEMENTS OF STOCKHOLDERS' EQUITY", None),
        ("INCOME STATEMENTS", "income statement"),  # titled "... statements"
        ("CASH FLOWS STATEMENTS", "cash flow statement"),
        ("COMPREHENSIVE INCOME STATEMENTS", None),
        ("Condensed Consolidated Income Statement", "income statement"),
        ("TABLE 11: CS SELECTED INCOME STATEMENT DATA", None),  # the name must close the title
        ("Note 10 - Balance Sheet Components", None),
        ("Amounts Offset in the Consolidated Condensed Balance Sheets", None),  # about a statement
        ("ANALYSIS OF THE CONDENSED CONSOLIDATED STATEMENTS OF CASH FLOWS", None),
        ("Consolidated Statements of Cash Flows for the years ended December 31, 2018", "cash flow statement"),
        ("Notes to the Financial Statements: Consolidated Statements of Cash Flows", "cash flow statement"),  # the statement it titles
        ("PFIZER INC. AND SUBSIDIARY COMPANIES CONDENSED CONSOLIDATED STATEMENTS OF INCOME", "income statement"),
        ("Table 1: Pump flow rate limits", None),
        (None, None),
    ],
)
def test_statement_kind(caption, kind):
    assert statement_kind(caption) == kind


def test_a_real_letter_spaced_caption_still_names_its_statement(corpora):
    """3M_2018_10K pp. 56-58 print their captions letter-spaced: the parser reads "Statement of
    Incom e" and "Balance Shee t", and each table still says which statement it is."""
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.units import build_units

    pdf = corpora / "financebench-dev" / "pdfs" / "3M_2018_10K.pdf"
    if not pdf.is_file():
        pytest.skip("shared corpora not present")
    tables = {u.pages[0]: u for u in build_units(DoclingParser().parse(pdf, pages=(56, 58))) if u.kind == "table"}
    assert {page: u.statement for page, u in tables.items()} == {56: "income statement", 57: None, 58: "balance sheet"}
    assert "Incom e" in tables[56].caption and "Shee t" in tables[58].caption, [u.caption for u in tables.values()]


def test_the_kinds_a_query_names():
    assert NamedStatements("Use the P&L statement and the statement of financial position.").kinds == ("income statement", "balance sheet")
    assert NamedStatements("shown in the statement of income").kinds == ("income statement",)
    assert NamedStatements("What was the operating income in 2017?").named == ()
    assert NamedStatements("What were the restructuring charges in 2017?").kinds == ()
    # no statement named; the measure it asks is the cash flow statement's (``STATEMENT_MEASURES``)
    cash = NamedStatements("What is the cash flow from operations?")
    assert (cash.named, cash.measured, cash.kinds) == ((), ("cash flow statement",), ("cash flow statement",))


@pytest.mark.parametrize(
    "query, measured",
    [
        ("In Intel's Q3 2022 report, compare the capital expenditure data with future investment plans.", ("cash flow statement",)),
        ("How did Amazon's operational expenditures stack up against its earnings in Q1 2023?", ("income statement",)),
        ("In the first quarter of 2023, what was Amazon's R&D expenditure?", ("income statement",)),
        ("What do the inventory levels in Microsoft's Q3 2022 report suggest?", ("balance sheet",)),
        ("What was the total revenue and the operating cash flow in FY2019?", ("income statement", "cash flow statement")),
        # a measure a name qualifies is a part's: a segment's, a product's, a line's
        ("What operating income did AAPL's Europe segment report in Q1 fiscal 2023?", ()),
        ("What was Apple's Services gross margin in Q3 fiscal 2022?", ()),
        ("How much short-term unearned revenue did Microsoft report?", ()),
        ("How much taxes payable did NVIDIA include in accrued and other current liabilities?", ()),
        ("What is the pump flow rate of Aqueous Phase 1?", ()),
    ],
)
def test_the_statements_a_query_asks_a_measure_of(query, measured):
    assert NamedStatements(query).measured == measured


INTEL = ["INTEL CORPORATION", "INTEL", "INTC"]
MGM = ["MGM Resorts International", "MGM Resorts", "MGM"]


@pytest.mark.parametrize(
    "query, names, measured",
    [
        # a measure right after a name of the document is the company's whole, as after a possessive
        ("Intel revenue in Q1 2023", INTEL, ("income statement",)),
        ("INTC net income for the quarter", INTEL, ("income statement",)),
        ("Intel Corporation operating cash flow", INTEL, ("cash flow statement",)),
        ("MGM Resorts International revenue in 2022", MGM, ("income statement",)),
        # without the document's names, a word before the measure may name a part
        ("Intel revenue in Q1 2023", [], ()),
        # a word of a name alone is not the name; a part after the name is still a part
        ("international revenue of MGM", MGM, ()),
        ("Intel data center revenue", INTEL, ()),
    ],
)
def test_a_measure_after_a_name_of_the_document(query, names, measured):
    assert NamedStatements(query, names=names).measured == measured


def test_without_measures_keeps_the_statements_named():
    asked = NamedStatements("What was the capital expenditure? Use the statement of income.")
    bare = asked.without_measures()
    assert (bare.named, bare.measured, bare.kinds) == (("income statement",), (), ("income statement",))
    assert asked.kinds == ("income statement", "cash flow statement")  # the original is unchanged


def test_a_statement_named_comes_before_one_asked_a_measure_of():
    flows = {**_statement("Consolidated Statements of Cash Flows"), "statement": "cash flow statement"}
    income = {**_statement("Consolidated Statements of Operations"), "statement": "income statement"}
    asked = NamedStatements("What was the capital expenditure and the net income in 2018? Use the statement of income.")
    assert (asked.named, asked.measured) == (("income statement",), ("cash flow statement",))
    assert asked.strength(income) == 2 and asked.strength(flows) == MEASURED == 1
    assert asked.strength({**flows, "unit_kind": "section"}) == 0
    assert NamedStatements("What was the capital expenditure in 2018?").strength({**income, "statement": "income statement"}) == 0


@pytest.fixture(scope="module")
def statements_store(corpora, tmp_path_factory):
    """Pages 37-41 of Amazon's 10-K for 2017: its five statements, one a page."""
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.pipeline import ingest_parsed
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store.edge import EdgeStore

    pdf = Path(corpora) / "financebench-dev" / "pdfs" / "AMAZON_2017_10K.pdf"
    if not pdf.is_file():
        pytest.skip("shared corpora not present")
    store = EdgeStore(StoreSettings(path=str(tmp_path_factory.mktemp("statements") / "store")))
    embedder = Embedder()
    ingest_parsed(DoclingParser().parse(pdf, pages=(37, 41)), store, embedder, token_counter(None))
    yield store, embedder
    store.close()


REVENUE = (
    "What is Amazon's year-over-year change in revenue from FY2016 to FY2017 (in units of percents and round "
    "to one decimal place)? Calculate what was asked by utilizing the line items clearly shown in the statement of income."
)


def test_every_point_of_a_statement_says_which_it_is(statements_store):
    from evidence_pipeline.sparse import SparseEncoder

    store, _ = statements_store
    sparse = SparseEncoder().encode_query("net income")
    hits = store.sparse_search(sparse, 10, unit_kind="table", statements=["income statement"])
    assert {h.payload["caption"] for h in hits} == {"CONSOLIDATED STATEMENTS OF OPERATIONS (in millions, except per share data)"}
    tables = {h.payload["caption"].split(" (")[0]: h.payload["statement"] for h in store.sparse_search(sparse, 10, unit_kind="table")}
    assert tables == {
        "CONSOLIDATED STATEMENTS OF CASH FLOWS": "cash flow statement",
        "CONSOLIDATED STATEMENTS OF OPERATIONS": "income statement",
        "CONSOLIDATED STATEMENTS OF COMPREHENSIVE INCOME": None,
        "CONSOLIDATED BALANCE SHEETS": "balance sheet",
        "CONSOLIDATED STATEMENTS OF STOCKHOLDERS' EQUITY": None,
    }


def test_search_returns_the_statement_the_query_names(statements_store, monkeypatch):
    """The question names no row of the statement ("revenue"; it prints "Total net sales"), only
    the statement, by another of its names."""
    import evidence_pipeline.retrieval as retrieval
    import evidence_pipeline.retrieval.route as route

    hits = retrieval.search_store(*statements_store, REVENUE, k=3)
    assert hits[0].caption.startswith("CONSOLIDATED STATEMENTS OF OPERATIONS") and hits[0].statement == "income statement"
    monkeypatch.setattr(route, "NamedStatements", lambda query, **kw: NamedStatements(""))
    plain = retrieval.search_store(*statements_store, REVENUE, k=3)
    assert not plain[0].caption.startswith("CONSOLIDATED STATEMENTS OF OPERATIONS")


CAPEX = "What was Amazon's capital expenditure in 2017?"


def test_search_returns_the_statement_a_measure_is_asked_of(statements_store, monkeypatch):
    """No row is named "capital expenditure" (the statement prints "Purchases of property and
    equipment"); the measure is the cash flow statement's, within the documents the query is
    about (routed by "Amazon's", or the caller's), and no statement's over every document."""
    import evidence_pipeline.financial_statements as financial_statements
    import evidence_pipeline.retrieval as retrieval

    def ranking(query, **kw):
        return [(h.parent_id, h.statement) for h in retrieval.search_store(*statements_store, query, k=5, **kw)]

    unrouted = "What was the capital expenditure in 2017?"
    asked = {q: ranking(q) for q in (CAPEX, unrouted)}
    given = ranking(unrouted, doc_ids=["AMAZON_2017_10K"])
    assert asked[CAPEX][0][1] == given[0][1] == "cash flow statement"
    monkeypatch.setattr(financial_statements, "STATEMENT_MEASURES", {})
    assert ranking(CAPEX)[0][1] != "cash flow statement"
    assert ranking(unrouted) == asked[unrouted]  # over every document a measure moves nothing
