"""Rows a query names: labels read from the parent's own table, and the promotion in search."""

from pathlib import Path

import pytest

from evidence_pipeline.retrieval.named_rows import (
    label_acronyms,
    label_phrase,
    named_row_strength,
    promote_named_rows,
    short_name,
)
from evidence_pipeline.retrieval.query import QueryWords, from_question
from evidence_pipeline.tables import common_size, row_labels, table_html

STATEMENT = table_html(
    [["", "Three Months Ended"], ["", "Oct 1, 2022"]],
    [
        ["Research and development", "4,302"],
        ["Marketing, general and administrative", "1,744"],
        ["Total operating expenses", "6,710"],
        ["Advertising services (5) 7,612", "9,548"],
        ["Net sales", "110,812"],
        ["R&D <capitalised>", "12"],
    ],
    caption="Consolidated Statements of Income",
)


def test_row_labels_reads_back_the_rendered_rows():
    assert row_labels(STATEMENT) == (
        "Research and development",
        "Marketing, general and administrative",
        "Total operating expenses",
        "Advertising services (5) 7,612",
        "Net sales",
        "R&D <capitalised>",
    )
    assert row_labels("Plain prose, no table.") == ()


@pytest.mark.parametrize(
    "label, phrase, content",
    [
        ("Total operating expenses", ("operati", "expense"), 2),  # "Total" qualifies, it does not name
        ("Advertising services (5) 7,612", ("adverti", "service"), 2),  # marker and a stray figure cut
        ("Operating activities $7,313", ("operati", "activit"), 2),
        ("North America 880", ("north", "america"), 2),
        ("Level 2 (2):", ("level", "2"), 1),  # a digit after a word is part of the name
        ("Level 2 securities", ("level", "2", "securit"), 2),
        ("Inventories", ("invento",), 1),  # plural as BM25 strips it, long words to their key
        ("Net income", ("income",), 1),  # a leading "Net" qualifies too: "income" names it
        ("Net cash from operations", ("cash", "from", "operati"), 2),
        ("Income, net", ("income", "net"), 1),  # only where it opens the label
        ("Net sales", (), 0),  # one short content word names nothing on its own
        ("pH", (), 0),
        ("R&D", (), 0),  # letters of an abbreviation are no words (its table is named by acronym only where it spells a label)
        ("Total", (), 0),
        ("operations", (), 0),  # one word in lower case: the wrapped tail of a label, not its name
        ("giroctocogene fitelparvovec", ("girocto", "fitelpa"), 2),  # two words name it though uncased
        ("Operations", ("operati",), 1),
        ("Number of Study Sites", ("study", "site"), 2),  # asked as "how many study sites"
        ("Number of participants", ("partici",), 1),
        ("Number of", (), 0),
        ("Total number of patients", ("patient",), 1),
        ("Number", ("number",), 1),
    ],
)
def test_label_phrase(label, phrase, content):
    assert label_phrase(label) == (phrase, content)


def test_the_longest_label_the_query_holds_word_for_word():
    held = QueryWords("What were Intel's marketing, general and administrative expenses for the three months ended October 1, 2022?")
    assert named_row_strength(STATEMENT, held) == 3
    # "general and administrative" alone is part of the label, not the label: no row named
    assert named_row_strength(STATEMENT, QueryWords("general and administrative costs")) == 0
    assert named_row_strength(STATEMENT, QueryWords("Amazon advertising services net sales")) == 2
    assert named_row_strength(STATEMENT, QueryWords("total operating expenses")) == 2
    assert named_row_strength("no table here", held) == 0


def test_a_label_is_named_by_another_form_of_its_long_words():
    """Microsoft's cash-flow statement prints "Net cash from operations"; a query asks for "net
    cash from operating activities". Words of seven letters or more match on their first seven."""
    cash_flows = table_html([["", "2022"]], [["Net cash from operations", "23,198"], ["Net cash used in financing", "(13,269)"]])
    assert named_row_strength(cash_flows, QueryWords("What did Microsoft report as its net cash from operating activities?")) == 2
    assert named_row_strength(cash_flows, QueryWords("Microsoft's net cash from operators")) == 0  # "operato" is another key
    assert named_row_strength(cash_flows, QueryWords("cash from the operations")) == 0  # not word for word


def test_a_numbered_label_is_not_named_by_its_word_alone():
    """Apple's fair-value table heads its rows "Level 1 (1):", "Level 2 (2):": "inventory levels"
    names the balance sheet's "Inventories", not those."""
    fair_value = table_html([["", "June 25, 2022"]], [["Level 1 (1):", ""], ["Money market funds", "$2,929"], ["Level 2 (2):", ""]])
    balance_sheet = table_html([["", "June 25, 2022"]], [["Inventories", "5,433"], ["Total current assets", "112,292"]])
    held = QueryWords("How did Apple's inventory levels in the Q3 2022 report reflect on their supply chain efficiency?")
    assert named_row_strength(fair_value, held) == 0
    assert named_row_strength(balance_sheet, held) == 1
    assert named_row_strength(fair_value, QueryWords("Apple's Level 2 assets, June 2022")) == 1


def test_the_wrapped_tail_of_a_label_is_not_named_by_its_word():
    """Pfizer's cash-flow analysis wraps a label onto a second line that reads as a row of its
    own ("operations"); "Pfizer's operations" names no row of it, while a statement's own
    "Operations" row is named (the query names a period)."""
    analysis = table_html([["", "2021"]], [["Net cash provided by continuing", ""], ["operations", "$32,922"]])
    statement = table_html([["", "2021"]], [["Operations", "$32,922"]])
    held = QueryWords("How much cash did Pfizer's operations provide in 2021?")
    assert named_row_strength(analysis, held) == 0
    assert named_row_strength(statement, held) == 1


def test_a_query_names_a_net_row_without_saying_net():
    statement = table_html([["", "Q1 2023"]], [["Net revenue", "$11,715"], ["Gross margin", "4,008"]])
    # named, half a word less closely than as printed (``NET_DROPPED``)
    assert named_row_strength(statement, QueryWords("What was Intel's revenue in Q1 2023?")) == 0.5
    assert named_row_strength(statement, QueryWords("Intel's net revenue, Q1 2023")) == 1
    # a word the label holds elsewhere does not name it: "Revenue, net" needs "revenue net"
    inverted = table_html([["", "Q1 2023"]], [["Revenue, net of returns", "$11,715"]])
    assert named_row_strength(inverted, QueryWords("What was Intel's revenue in Q1 2023?")) == 0


def test_the_table_that_prints_the_row_as_asked_comes_before_its_net_amount():
    """Intel's 10-Q: the cash-flow statement's "Additions to property, plant and equipment" and
    the non-GAAP table's "Net additions to property, plant and equipment" (net of partner
    contributions, another figure); the query asks for the additions."""
    non_gaap = table_html(
        [["", "Q1 2023"]], [["Net additions to property, plant and equipment", "(6,015)"], ["Adjusted free cash flow", "(6,346)"]]
    )
    statement = table_html(
        [["", "Q1 2023"]],
        [["Additions to property, plant and equipment", "(7,413)"], ["Net cash used for investing activities", "(7,148)"]],
    )
    query = "How much did Intel spend on additions to property, plant and equipment in the quarter ended April 1, 2023?"
    held = QueryWords(query)
    assert 0 < named_row_strength(non_gaap, held) < named_row_strength(statement, held) == 4
    prose = "Capital expenditures rose as we invested in new fabs."
    assert promote_named_rows([prose, non_gaap, statement], query, str) == [statement, non_gaap, prose]
    # asked for the net amount, the non-GAAP table names it word for word
    assert named_row_strength(non_gaap, QueryWords("Intel's net additions to property, plant and equipment")) == 4


@pytest.mark.parametrize(
    "label, acronyms",
    [
        ("Research and development", {"R&D"}),
        ("Selling, general and administrative", {"SG&A"}),
        ("Property, plant and equipment (2)", {"PP&E"}),
        ("Earnings per share", {"EPS"}),
        ("Cost of revenue", {"COR", "CR"}),
        ("Total operating expenses", {"OE"}),
        ("Inventories", set()),  # one word is no acronym
    ],
)
def test_label_acronyms(label, acronyms):
    assert label_acronyms(label) == acronyms


def test_a_query_names_a_row_by_its_acronym():
    query = QueryWords("What was Intel's R&D expenditure in Q1 2023?")
    assert query.acronyms == {"R&D"}
    assert named_row_strength(STATEMENT, query) == 2  # "Research and development"
    assert named_row_strength(STATEMENT, QueryWords("What was Intel's MG&A in Q1 2023?")) == 3
    # an acronym no label spells names nothing; lower case is a word, not an acronym
    assert named_row_strength(STATEMENT, QueryWords("What did INTC spend on M&A?")) == 0
    assert QueryWords("r&d spending").acronyms == frozenset()


def test_a_short_name_counts_where_the_query_writes_it_as_printed():
    by_category = table_html([["", "June 25, 2022"]], [["iPhone (1)", "$40,665"], ["Mac (1)", "7,382"], ["Services (3)", "19,604"]])
    assert [short_name(label) for label in ("Mac (1)", "AWS", "EMEA", "Net", "Other", "pH", "iPad", "U.S.", "2022", "Services")] == [
        "Mac",
        "AWS",
        "EMEA",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    ]
    assert named_row_strength(by_category, QueryWords("AAPL Mac net sales, quarter ended June 2022")) == 1
    # in lower case, or opening the query, the word is a fragment of something else
    assert named_row_strength(by_category, QueryWords("AAPL mac net sales, quarter ended June 2022")) == 0
    assert named_row_strength(by_category, QueryWords("Mac users in Europe")) == 0
    # a longer label the query holds still comes first
    assert named_row_strength(by_category, QueryWords("Apple Services revenue, Mac excluded")) == 1
    segments = table_html([["", "Q1 2023"]], [["AWS", "21,354"], ["North America", "76,881"]])
    assert named_row_strength(segments, QueryWords("Amazon AWS segment net sales in Q1 2023")) == 1
    assert named_row_strength(segments, QueryWords("Amazon North America segment net sales")) == 2


COMMON_SIZE = table_html(
    [["", "April 30, 2023", "May 1, 2022"]],
    [["Revenue", "100.0 %", "100.0 %"], ["Cost of revenue", "35.4", "34.5"], ["Gross profit", "64.6", "65.5"]],
)


def test_common_size_tables_are_read_from_their_first_row():
    assert common_size(COMMON_SIZE)
    # amounts beside the percentages: a statement with a percent column, not a common-size view
    assert not common_size(table_html([], [["Net revenue", "$11,715", "100.0 %"], ["Gross margin", "3,995", "34.1"]]))
    assert not common_size(STATEMENT)
    assert not common_size("prose only")


def test_a_common_size_table_is_not_promoted_past_the_statement():
    statement = table_html([["", "April 30, 2023"]], [["Revenue", "7,192"], ["Cost of revenue", "2,544"], ["Gross profit", "4,648"]])
    hits = _hits([COMMON_SIZE, "prose", statement])
    promoted = promote_named_rows(
        hits, "What gross profit did NVIDIA report for the three months ended April 30, 2023?", lambda h: h["parent_text"]
    )
    assert [h["id"] for h in promoted] == [2, 0, 1]


def test_a_korean_label_is_held_with_its_particle():
    cycle = table_html([["변수", "설정값"]], [["멸균 온도", "134"], ["챔버 압력", "2.1"]], caption="표 2: 다공성 부하 멸균 사이클 변수")
    placement = table_html([["부하 유형", "지표 수"]], [["다공성 부하", "12"]], caption="표 3: 생물학적 지표 배치 위치")
    query = QueryWords("다공성 부하 사이클의 멸균 온도는 몇 도인가?")
    assert named_row_strength(cycle, query) == 2  # "온도는" holds "온도"
    assert named_row_strength(placement, query) == 2
    # both tables name a row: the order the search gave between them stays
    hits = _hits([cycle, placement])
    assert promote_named_rows(hits, "다공성 부하 사이클의 멸균 온도는 몇 도인가?", lambda h: h["parent_text"]) == hits
    # a longer tail is another word, not a particle
    assert named_row_strength(cycle, QueryWords("멸균 온도계에서 읽는다")) == 0


def _hits(texts):
    return [{"id": n, "parent_text": t} for n, t in enumerate(texts)]


def test_promotion_moves_the_named_table_past_the_prose_and_keeps_the_rest_in_order():
    prose = "Marketing, general and administrative expenses increased $86 million."
    hits = _hits([prose, "other prose", STATEMENT, "more prose"])
    query = "Intel marketing, general and administrative expenses, Q3 2022"
    promoted = promote_named_rows(hits, query, lambda h: h["parent_text"])
    assert [h["id"] for h in promoted] == [2, 0, 1, 3]
    # no row named: the order is the order given
    assert promote_named_rows(hits, "why did spending rise", lambda h: h["parent_text"]) == hits
    # only the first `depth` parents may move
    assert promote_named_rows(hits, query, lambda h: h["parent_text"], depth=2) == hits


def test_how_many_names_the_number_of_row():
    """A protocol's synopsis prints "Number of Study Sites: 6+"; the question asks "how many"."""
    synopsis = table_html([], [["Study Title", "Day-case surgery"], ["Number of Study Sites", "6+"]])
    hits = _hits(["prose about the sites", "more prose", synopsis])
    promoted = promote_named_rows(hits, "How many study sites are planned for NCT06152666?", lambda h: h["parent_text"])
    assert [h["id"] for h in promoted] == [2, 0, 1]


def test_a_more_specific_label_ranks_first_among_named_tables():
    short = table_html([], [["Operating expenses", "1"]])
    hits = _hits(["prose", short, STATEMENT])
    promoted = promote_named_rows(hits, "marketing, general and administrative operating expenses", lambda h: h["parent_text"])
    assert [h["id"] for h in promoted][:2] == [2, 1]


@pytest.mark.parametrize(
    "query, asked",
    [
        (
            "Assume that you are a public equities analyst. Answer the following question by primarily using "
            "information that is shown in the balance sheet: what is the year end FY2018 net PPNE for 3M? Answer in USD billions.",
            "what is the year end FY2018 net PPNE for 3M? Answer in USD billions.",
        ),
        # what follows the question may define what is asked: it stays
        (
            "What is the DPO? DPO is defined as: 365 * (average accounts payable).",
            "What is the DPO? DPO is defined as: 365 * (average accounts payable).",
        ),
        (
            "Per the U.S. filing, what is e.g. the net PPNE?",
            "Per the U.S. filing, what is e.g. the net PPNE?",
        ),  # abbreviations end no sentence
        ("net PPNE of 3M, FY2018", "net PPNE of 3M, FY2018"),  # no question: all of it
    ],
)
def test_from_question(query, asked):
    assert from_question(query) == asked


def test_a_row_the_preamble_names_is_not_asked():
    """ "a public equities analyst" names a pension table's "Public equities" row; the question
    asks for the net PPNE."""
    query = (
        "Assume that you are a public equities analyst. Answer the following question by primarily using "
        "information that is shown in the balance sheet: what is the year end FY2018 net PPNE for 3M?"
    )
    pension = table_html([], [["Public equities", "4,455"]], caption="Fair value of plan assets")
    hits = _hits(["prose", pension, "more prose"])
    assert named_row_strength(pension, QueryWords(query)) == 2  # the whole query holds it
    assert promote_named_rows(hits, query, lambda h: h["parent_text"]) == hits
    # the same words in the question name it
    asked = "What were the public equities of the pension plans?"
    assert [h["id"] for h in promote_named_rows(hits, asked, lambda h: h["parent_text"])] == [1, 0, 2]


@pytest.fixture(scope="module")
def page_units(corpora):
    """The units of a page range of a shared PDF, each range parsed once."""
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.units import build_units

    parser = DoclingParser()
    parsed = {}

    def units(path: str, pages: tuple[int, int]):
        pdf = Path(corpora) / path
        if not pdf.is_file():
            pytest.skip("shared corpora not present")
        if (path, pages) not in parsed:
            parsed[path, pages] = build_units(parser.parse(pdf, pages=pages))
        return parsed[path, pages]

    return units


def _prose_first(units):
    """``units`` as a search may rank them: the prose that discusses an item above its tables."""
    return [u for u in units if u.kind != "table"] + [u for u in units if u.kind == "table"]


def _promoted(hits, query: str) -> list[str]:
    return [u.unit_id for u in promote_named_rows(hits, query, lambda u: u.text)]


def test_a_real_short_label_is_named_as_printed(page_units):
    """2022 Q3 AAPL pp. 17-20: "Mac (1)" is the only row of its net sales table that the query
    names; the table moves past the MD&A prose."""
    hits = _prose_first(page_units("sec-10q-dev/pdfs/2022 Q3 AAPL.pdf", (17, 20)))
    (by_category,) = [u for u in hits if "Mac (1)" in row_labels(u.text)]
    assert _promoted(hits, "AAPL Mac net sales, quarter ended June 2022")[0] == by_category.unit_id
    assert _promoted(hits, "AAPL mac net sales, quarter ended June 2022") == [u.unit_id for u in hits]


def test_a_real_number_of_row_is_named_by_how_many(page_units):
    """NCT06152666 pp. 1-4: the synopsis prints "Number of Study Sites" and "Number of
    participants"; "how many study sites" and "how many participants" move it past the title
    page's prose, while "participants" in other words names no row of it (one word, no capital)."""
    hits = _prose_first(page_units("clinical-protocols/pdfs/NCT06152666_Prot_000.pdf", (1, 4)))
    (synopsis,) = [u for u in hits if "Number of Study Sites" in row_labels(u.text)]
    assert "Number of participants" in row_labels(synopsis.text)
    assert hits[0] is not synopsis
    assert _promoted(hits, "How many study sites are planned for NCT06152666?")[0] == synopsis.unit_id
    assert _promoted(hits, "In the day-case endourology study, how many participants are planned?")[0] == synopsis.unit_id
    assert _promoted(hits, "What will participants be asked in the day-case endourology interviews?")[0] != synopsis.unit_id


def test_a_real_common_size_table_is_not_promoted_past_the_statement(page_units):
    """2023 Q1 NVDA p. 27 prints the income statement's rows as percentages of revenue (p. 3
    prints the amounts): ranked first, it stays behind the statement that the query names."""
    percents = page_units("sec-10q-dev/pdfs/2023 Q1 NVDA.pdf", (27, 27))
    (income,) = [u for u in page_units("sec-10q-dev/pdfs/2023 Q1 NVDA.pdf", (3, 3)) if u.kind == "table"]
    (common,) = [u for u in percents if u.kind == "table"]
    assert common_size(common.text) and "Gross profit" in row_labels(common.text)
    hits = [common, *(u for u in percents if u.kind != "table"), income]
    query = "What gross profit did NVIDIA report for the three months ended April 30, 2023?"
    assert _promoted(hits, query)[:2] == [income.unit_id, common.unit_id]


@pytest.fixture(scope="module")
def mdna_store(corpora, tmp_path_factory):
    """Pages 40-42 of a real 10-Q: one MD&A table per operating expense line (research and
    development, sales and marketing, general and administrative), each with the same
    column heads and the same explanatory sentences around it."""
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.pipeline import ingest_parsed
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store.edge import EdgeStore

    pdf = Path(corpora) / "sec-10q-dev" / "pdfs" / "2023 Q1 MSFT.pdf"
    store = EdgeStore(StoreSettings(path=str(tmp_path_factory.mktemp("mdna") / "store")))
    embedder = Embedder()
    ingest_parsed(DoclingParser().parse(pdf, pages=(40, 42)), store, embedder, token_counter(None))
    yield store, embedder
    store.close()


QUERY = "What were Microsoft's general and administrative expenses for the three months ended December 31, 2022?"


def test_search_returns_the_table_of_the_named_row_first(mdna_store, monkeypatch):
    import evidence_pipeline.retrieval as retrieval
    import evidence_pipeline.retrieval.fuse as fuse

    hits = retrieval.search_store(*mdna_store, QUERY, k=5)
    assert hits[0].unit_kind == "table" and "2,337" in hits[0].parent_text  # the G&A table's figure
    # without the promotion a same-shaped expense table of the section comes first
    monkeypatch.setattr(fuse, "promote_named_rows", lambda hits, *args, **kwargs: list(hits))
    plain = retrieval.search_store(*mdna_store, QUERY, k=5)
    assert "2,337" not in plain[0].parent_text


def test_the_first_results_do_not_depend_on_k(mdna_store):
    from evidence_pipeline.retrieval import search_store

    ids = [h.parent_id for h in search_store(*mdna_store, QUERY, k=10)]
    assert [h.parent_id for h in search_store(*mdna_store, QUERY, k=3)] == ids[:3]


def test_a_label_of_one_word_is_named_in_a_dated_query_or_with_a_capital():
    """A protocol's tables have rows "Number of Subjects", "Blood", "Glucose": the running words
    of a question hold them by chance. A query that asks for a row's figure names a period ("in
    2022", "Q1 2023") or prints the row's name with a capital, as the row does (first word
    included); a label of two content words needs neither."""
    disposition = table_html(["", "Arm A"], [["Number of Subjects", "24"], ["Blood", "2 mL"]])
    assert named_row_strength(disposition, QueryWords("How often do subjects in the extension need a CT scan?")) == 0
    assert named_row_strength(disposition, QueryWords("How much blood is drawn at screening?")) == 0
    assert named_row_strength(disposition, QueryWords("Number of Subjects in Arm A?")) == 1
    assert named_row_strength(disposition, QueryWords("Blood — Arm A?")) == 1  # the first word counts
    assert named_row_strength(disposition, QueryWords("How many subjects were in Arm A in 2021?")) == 1
    assert named_row_strength(disposition, QueryWords("how many subjects are planned?")) == 1  # "Number of"
    totals = table_html(["", "Arm A"], [["Total number of patients", "48"]])  # named "patients" as "Number of patients" is
    assert named_row_strength(totals, QueryWords("how many patients are planned?")) == 1
    assert named_row_strength(totals, QueryWords("what do patients receive?")) == 0
    assets = table_html(["", "2022"], [["Other assets", "5,200"], ["Accrued interest payable", "310"]])
    assert named_row_strength(assets, QueryWords("What were Other assets at year end?")) == 1
    assert named_row_strength(assets, QueryWords("what were other assets at year end?")) == 0
    assert named_row_strength(assets, QueryWords("what were other assets in 2022?")) == 1
    assert named_row_strength(assets, QueryWords("what was the accrued interest payable at year end?")) == 3
