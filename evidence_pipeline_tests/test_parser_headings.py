"""Real filings read cleanly: boilerplate is not a section, statement titles are captions,
a statement's section is its Part/Item, and a body that starts high on the page is not
taken for its running header. Pinned on page ranges of the shared 10-Qs."""

from __future__ import annotations

import pytest

from evidence_pipeline.parser.headings import not_a_heading
from evidence_pipeline.parser.text_lines import BARE_STRUCTURAL_RE, STRUCTURAL_RE, capital_structural, structural_kind
from evidence_pipeline.units import build_units
from evidence_pipeline_tests.conftest import CORPORA

TENQ = CORPORA / "sec-10q-dev" / "pdfs"
BOILERPLATE = ("united states", "securities and exchange commission", "table of contents", "(in millions", "(unaudited)")

pytestmark = pytest.mark.skipif(not TENQ.is_dir(), reason="shared corpora not present")


@pytest.fixture(scope="module")
def parsed():
    from evidence_pipeline.parser import DoclingParser

    parser = DoclingParser()
    ranges = {"2023 Q1 AAPL": (1, 8), "2023 Q1 NVDA": (1, 7), "2023 Q1 MSFT": (3, 8)}
    return {name: parser.parse(TENQ / f"{name}.pdf", pages=pages) for name, pages in ranges.items()}


def test_rules_on_plain_lines():
    for line in ("(In millions) (Unaudited)", "(in millions, except per share data)", "OR", "☐ TRANSITION REPORT PURSUANT TO SECTION 13"):
        assert not_a_heading(line), line
    # a table's period head left above it is no section (3M, Amcor, Microsoft)
    for line in (
        "Years ended December 31",
        "Three Months Ended September 30, Designated as Cash Flow Hedging Instruments",
        "Year Ended",
        "Three Months Ending",
    ):
        assert not_a_heading(line), line
    for line in ("Year Ended December 31, 2022 Compared to Year Ended December 31, 2021", "Fiscal Year Highlights", "Quarterly Results"):
        assert not not_a_heading(line), line
    for line in ("Item 1. Financial Statements", "CONDENSED CONSOLIDATED BALANCE SHEETS (Unaudited)", "4.2 Acceptance limits"):
        assert not not_a_heading(line), line
    assert STRUCTURAL_RE.match("PART I — FINANCIAL INFORMATION") and STRUCTURAL_RE.match("ITEM 1A. RISK FACTORS")
    assert STRUCTURAL_RE.match("Note 2 – Revenue") and not STRUCTURAL_RE.match("Notes to Condensed Consolidated Financial Statements")


def test_one_structural_pattern_names_the_kind_and_its_capitals():
    """Every rule that reads a Part, Item or Note heading reads it through one pattern."""
    assert [
        structural_kind(t)
        for t in ("PART II — OTHER INFORMATION", "Item 1A. Risk Factors", "Chapter 3", "Article IV", "NOTE 6 — INVENTORIES")
    ] == [
        "part",
        "item",
        "chapter",
        "article",
        "note",
    ]
    assert structural_kind("Notes to Condensed Consolidated Financial Statements") is None
    assert structural_kind("Itemized deductions") is None
    assert capital_structural("NOTE 6 — INVENTORIES") and capital_structural("ITEM 2.") and capital_structural("PART II")
    # the kind in capitals, its number as printed: "NOTE 6a" and "Note 6 —" are not set in capitals
    assert not capital_structural("Note 6 — Inventories") and not capital_structural("NOTE 6a") and not capital_structural("PART ii")
    assert (
        BARE_STRUCTURAL_RE.match("Item 2.")
        and BARE_STRUCTURAL_RE.match("PART II")
        and not BARE_STRUCTURAL_RE.match("Item 2. Management's Discussion")
    )


@pytest.mark.parametrize("name", ["2023 Q1 AAPL", "2023 Q1 NVDA"])
def test_boilerplate_is_never_a_section(parsed, name):
    units = build_units(parsed[name])
    assert units
    for unit in units:
        for part in unit.section_path:
            low = part.lower()
            assert not any(low.startswith(b) for b in BOILERPLATE), (unit.unit_id, unit.section_path)
            assert not not_a_heading(part), (unit.unit_id, unit.section_path)


@pytest.mark.parametrize(
    ("name", "statements"),
    [
        ("2023 Q1 AAPL", ["STATEMENTS OF OPERATIONS", "STATEMENTS OF COMPREHENSIVE INCOME", "BALANCE SHEETS", "STATEMENTS OF CASH FLOWS"]),
        ("2023 Q1 NVDA", ["STATEMENTS OF INCOME", "STATEMENTS OF COMPREHENSIVE INCOME", "BALANCE SHEETS", "STATEMENTS OF CASH FLOWS"]),
    ],
)
def test_statement_titles_are_captions_under_part_and_item(parsed, name, statements):
    tables = [u for u in build_units(parsed[name]) if u.kind == "table"]
    for title in statements:
        found = [u for u in tables if u.caption and title in u.caption.upper()]
        assert len(found) == 1, (title, [u.caption for u in tables])
        unit = found[0]
        assert len(unit.section_path) == 2, unit.section_path
        part, item = unit.section_path
        assert part.upper().startswith("PART I") and item.upper().startswith("ITEM 1"), unit.section_path
        assert len(unit.rows) >= 10


def test_unit_lines_are_table_notes(parsed):
    # NVDA prints "(In millions) (Unaudited)" under each statement title: a note of the table, not a heading.
    units = [u for u in build_units(parsed["2023 Q1 NVDA"]) if u.kind == "table" and u.caption and "BALANCE SHEETS" in u.caption]
    assert units and any("in millions" in f.lower() for f in units[0].footnotes), units[0].footnotes
    assert not any(b.label == "section_header" and not_a_heading(b.text) for b in parsed["2023 Q1 NVDA"].blocks)


def test_running_header_is_furniture_and_the_body_below_it_is_not(parsed):
    # MSFT's pages open 8 pt from the top: "PART I" / "Item 1" repeat on every page (furniture);
    # the statement title right under them is body text, though it sits in the top band.
    doc = parsed["2023 Q1 MSFT"]
    furniture = {b.text for b in doc.blocks if b.label in ("page_header", "page_footer")}
    assert {"PART I", "Item 1"} <= furniture
    titles = [b for b in doc.blocks if "COMPREHENSIVE INCOME STATEMENTS" in b.text.upper()]
    assert titles and all(b.label not in ("page_header", "page_footer") for b in titles)


def test_a_running_head_of_two_lines_is_furniture_line_by_line():
    """NVIDIA's notes pages open with "NVIDIA CORPORATION AND SUBSIDIARIES" and, under it,
    "NOTES TO CONDENSED CONSOLIDATED FINANCIAL STATEMENTS (Continued) (Unaudited)", both read as
    headings. Once the first line is a running head, the second is at the page's edge and runs
    there too; it had opened a section on every notes page (and titled two tables)."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / "2022 Q3 NVDA.pdf", pages=(20, 50))
    heads = [b for b in doc.blocks if b.text.startswith("NOTES TO CONDENSED CONSOLIDATED FINANCIAL STATEMENTS (Continued)")]
    assert len({b.page for b in heads}) >= 3
    assert all(b.label == "page_header" for b in heads), [(b.page, b.label) for b in heads]
    assert not any("(Continued)" in (t.caption or "") for t in doc.tables)
    paths = {h for u in build_units(doc) for h in u.section_path}
    assert not any("(Continued)" in h for h in paths)


def test_a_wrapped_item_heading_is_one_heading_and_opens_its_section():
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / "2022 Q3 AAPL.pdf", pages=(16, 18))
    items = [b for b in doc.blocks if b.text.startswith("Item 2.")]
    assert items and items[0].label == "section_header", [(b.label, b.text) for b in items]
    assert "Results of Operations" in items[0].text
    after = [u for u in build_units(doc) if 17 in u.pages and u.kind == "section" and items[0].text in u.section_path]
    assert after, [u.section_path for u in build_units(doc)]


def test_amounts_and_row_labels_are_not_headings():
    # chart labels of an infographic page and a row label that kept its currency sign
    for line in (
        "(300) Q1 2023 NEX Operating Income (Loss)",
        "2,722 Q1 2022 CCG Operating Income",
        "$5.9 billion returned",
        "75 Q3 2022 NEX Operating Income",
        "Total liabilities measured and recorded at fair value $",
    ):
        assert not_a_heading(line), line
    for line in ("2023 Outlook", "10 Records", "4.2 Acceptance limits", "Note 4 — Leases"):
        assert not not_a_heading(line), line


def test_a_line_of_dates_only_is_no_heading():
    # a balance sheet's column heads left above it (Intel), a dividends table's dates (Microsoft)
    for line in ("Apr 1, 2023 Dec 31, 2022", "September 20, 2022", "Sept. 30, 2022", "June 30, 2023", "May 2023"):
        assert not_a_heading(line), line
    for line in ("June 2023 Results", "Marketing 2023", "December 31, 2022 Compared to 2021", "Fiscal 2023"):
        assert not not_a_heading(line), line


def test_an_initialism_is_no_numbering_marker():
    """Docling's heading-level stage had read "U.S." as the marker of a section lettered "U."."""
    import docling.models.stages.heading_hierarchy.heading_hierarchy_model as hierarchy

    from evidence_pipeline.parser.docling_patches import initialisms_are_not_numbering

    initialisms_are_not_numbering()
    initialisms_are_not_numbering()  # a second call changes nothing
    assert hierarchy._parse_marker("U.S. Cell Phone Litigation") is None
    assert hierarchy._parse_marker("e.g. Line Clearance") is None
    assert hierarchy._parse_marker("A. Scope").family == "alpha_u"
    assert hierarchy._parse_marker("4.2 Acceptance limits").family == "dotted"


@pytest.fixture(scope="module")
def msft_notes():
    """2022 Q3 MSFT pp. 17-29: its notes, from derivatives to contingencies."""
    from evidence_pipeline.parser import DoclingParser

    return DoclingParser().parse(TENQ / "2022 Q3 MSFT.pdf", pages=(17, 29))


def test_a_heading_that_opens_with_an_initialism_is_a_sibling_of_its_neighbours(msft_notes):
    # Microsoft's Note 14 prints "U.S. Cell Phone Litigation" and "Other Contingencies" alike;
    # the first had outranked the second and taken it in ("NOTE 14 — CONTINGENCIES > U.S. Cell
    # Phone Litigation > Other Contingencies" on the accrued legal liabilities)
    doc = msft_notes
    heads = {b.text: b.level for b in doc.blocks if b.label == "section_header"}
    assert heads["U.S. Cell Phone Litigation"] == heads["Other Contingencies"], heads
    accrued = [u for u in build_units(doc) if "accrued aggregate legal liabilities" in u.text]
    paths = [u.section_path for u in accrued]
    assert paths and all(p[-1] == "Other Contingencies" and "U.S. Cell Phone Litigation" not in p for p in paths), paths


def test_a_period_head_left_above_its_table_opens_no_section(msft_notes):
    """2022 Q3 MSFT pp. 17 and 21 print "Three Months Ended September 30, ..." above a
    derivatives table and an unearned revenue table: it is neither a section nor a caption."""
    line = "Three Months Ended September 30, Designated as Cash Flow Hedging Instruments"
    assert [b.label for b in msft_notes.blocks if b.text == line] == ["paragraph"]
    titles = [b.text for b in msft_notes.blocks if b.label in ("section_header", "caption")]
    assert not any(t.startswith("Three Months Ended") for t in titles), titles
    units = build_units(msft_notes)
    assert not any(h.startswith("Three Months Ended") for u in units for h in u.section_path)
    assert not any((u.caption or "").startswith("Three Months Ended") for u in units)


@pytest.mark.parametrize(
    ("name", "page", "dates"),
    [
        ("2023 Q1 INTC", 8, ["Apr 1, 2023 Dec 31, 2022"]),  # the balance sheet's column heads
        ("2022 Q3 MSFT", 61, ["September 20, 2022", "November 17, 2022", "December 8, 2022"]),  # a dividend's dates
    ],
)
def test_a_line_of_dates_only_is_no_section_on_a_real_page(name, page, dates):
    """2023 Q1 INTC p. 8 sets its balance sheet's dates apart from the table; 2022 Q3 MSFT p. 61
    its dividend's dates apart from the row: each line stays a paragraph, heading no unit."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / f"{name}.pdf", pages=(page, page))
    assert [b.label for b in doc.blocks if b.text in dates] == ["paragraph"] * len(dates)
    units = build_units(doc)
    assert units and not any(h in dates for u in units for h in u.section_path), [u.section_path for u in units]
    assert doc.title not in dates, doc.title


def test_a_chart_label_that_opens_with_figures_is_no_heading():
    """2022 Q3 INTC pp. 29-31 label each segment's charts "17 Q3 2022 DCAI Operating Income": no
    section; the segment's table on p. 31 stays under "Network & Edge"."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / "2022 Q3 INTC.pdf", pages=(29, 31))
    labels = {b.text: b.label for b in doc.blocks if b.text.endswith(" Operating Income")}
    assert labels["17 Q3 2022 DCAI Operating Income"] == labels["75 Q3 2022 NEX Operating Income"] == "paragraph", labels
    tables = {u.pages[0]: u.section_path for u in build_units(doc) if u.kind == "table"}
    assert tables[31] == ["Network & Edge"], tables
    assert not any(h.endswith("Operating Income") for path in tables.values() for h in path), tables


def test_table_of_contents_entries_are_not_headings():
    for line in (
        "3 STUDY ELIGIBILITY, ENROLLMENT AND CONSENTING ............................ 10",
        "12 ETHICAL CONSIDERATIONS (AND INFORMED CONSENT) . . . . . . . . . . 25",
        "Appendix 1. Question guide ..............................",
        "2 Objectives…………… iv",
    ):
        assert not_a_heading(line), line
    for line in ("4.2 Acceptance limits...", "1.3 Concise Summary of Project"):
        assert not not_a_heading(line), line


@pytest.mark.skipif(not (CORPORA / "clinical-protocols" / "pdfs").is_dir(), reason="shared corpora not present")
def test_a_protocols_contents_pages_open_no_sections():
    """NCT06151600 pp. 3-4: set in the headings' own type, its contents lines with dot leaders
    had opened a section each, so the synopsis after them sat under "13 REFERENCES ...... 28"."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(CORPORA / "clinical-protocols" / "pdfs" / "NCT06151600_Prot_000.pdf", pages=(3, 6))
    heads = [b.text for b in doc.blocks if b.label == "section_header"]
    assert heads and not any("....." in h for h in heads), heads
    synopsis = [u for u in build_units(doc) if u.kind == "table" and u.caption == "CLINICAL PROTOCOL SYNOPSIS"]
    assert synopsis and not any("....." in s for s in synopsis[0].section_path), synopsis[0].section_path if synopsis else None


def test_an_item_label_beside_its_title_is_one_heading_that_ends_the_notes():
    # Amazon prints "Item 2." in a left column and the title beside it; "Item N." repeats
    # with other numbers on many pages. Notes come first in the file, yet an Item outranks them.
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / "2023 Q1 AMZN.pdf", pages=(19, 22))
    heads = [b.text for b in doc.blocks if b.label == "section_header"]
    item = next(h for h in heads if h.startswith("Item 2."))
    assert "Management's Discussion" in item.replace("’", "'"), heads
    assert not any(b.text.strip() == "Item 2." for b in doc.blocks), "the bare label stays a block of its own"
    units = build_units(doc)
    mdna = [u for u in units if 22 in u.pages and u.kind == "section"]
    assert mdna and all(u.section_path[0] == item for u in mdna), [u.section_path for u in mdna]
    assert any(u.section_path[:1] == ["Note 8 — SEGMENT INFORMATION"] for u in units if 19 in u.pages)


def test_a_mixed_case_statement_title_with_its_unit_note_in_the_table_is_the_caption():
    # Intel sets statement titles in mixed case and prints "(In Millions ...; Unaudited)" in the
    # table's top-left cell: the title is the caption, and the sections it followed are closed.
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / "2023 Q1 INTC.pdf", pages=(5, 7))
    tables = [u for u in build_units(doc) if u.kind == "table"]
    income = [u for u in tables if u.caption == "Consolidated Condensed Statements of Income"]
    assert len(income) == 1, [(u.caption, u.section_path) for u in tables]
    assert income[0].caption_source == "direct" and len(income[0].rows) >= 15
    before = {b.text for b in doc.blocks if b.label == "section_header" and b.page == 5}
    assert before and not set(income[0].section_path) & before, (income[0].section_path, before)


def test_a_statement_with_one_ruling_keeps_labels_apart_and_its_period_heads():
    # NVIDIA's income statement draws one vertical ruling (a shaded column's edge): the white gap
    # between row labels and values is still a column edge, and the period heads printed a
    # little further above the first row are the table's header, not loose lines.
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / "2023 Q1 NVDA.pdf", pages=(3, 3))
    (table,) = [u for u in build_units(doc) if u.kind == "table"]
    rows = {r[0]: r[1:] for r in table.rows}
    assert rows["Research and development"] == ["1,875", "1,618"], table.rows[:6]
    header = " ".join(" ".join(r) for r in table.header)
    assert "April 30, 2023" in header and "May 1, 2022" in header, table.header
    assert any("Research and development" in s and "April 30, 2023" in s and "1,875" in s for s in table.row_sentences), (
        table.row_sentences[:6]
    )


def test_an_item_heading_that_did_not_wrap_keeps_the_statement_title_under_it_apart():
    # Microsoft sets "ITEM 1. FINANCIAL STATEMENTS" and "INCOME STATEMENTS" on two centred lines of
    # one style; the first had room for the next word, so the second is the statement's title.
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / "2023 Q1 MSFT.pdf", pages=(3, 4))
    heads = [b.text for b in doc.blocks if b.label == "section_header"]
    assert "ITEM 1. FINANCIAL STATEMENTS" in heads, heads
    tables = [u for u in build_units(doc) if u.kind == "table"]
    income = [u for u in tables if u.caption == "INCOME STATEMENTS"]
    assert len(income) == 1 and len(income[0].rows) >= 20, [(u.caption, u.section_path) for u in tables]
    assert income[0].section_path[-1] == "ITEM 1. FINANCIAL STATEMENTS"


@pytest.mark.parametrize(
    ("name", "page", "label", "first", "second"),
    [
        # "Three Months Ended" centred over "April 30, / 2023" and "May 1, / 2022" (one lone ruling)
        (
            "2023 Q1 NVDA",
            3,
            "Research and development",
            "Three Months Ended / April 30, 2023: 1,875",
            "Three Months Ended / May 1, 2022: 1,618",
        ),
        # "Three Months Ended" and "March 31," both centred over "2022" and "2023"
        (
            "2023 Q1 AMZN",
            4,
            "Technology and content",
            "Three Months Ended March 31, / 2022: 14,842",
            "Three Months Ended March 31, / 2023: 20,450",
        ),
    ],
)
def test_a_period_head_centred_over_two_columns_heads_both(name, page, label, first, second):
    # The group head was folded into the first column's head ("Three Months Ended April 30,
    # 2023" | "May 1, 2022"), or split between them ("Three Months Ended 2022" | "March 31, 2023").
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / f"{name}.pdf", pages=(page, page))
    (table,) = [u for u in build_units(doc) if u.kind == "table"]
    sentence = next(s for s in table.row_sentences if s.startswith(label + " |"))
    assert sentence == f"{label} | {first}; {second}", table.row_sentences[:4]


def test_notes_of_a_filing_without_items_nest_in_its_own_outline():
    # Intel prints no Part or Item headings in its body, only in the cross-reference index on its
    # last page, and sets its notes larger than "Management's Discussion and Analysis". The
    # index outlines nothing, and the notes take one level below a heading printed above every
    # note (``_printed_above_notes``), so MD&A ends the last note instead of nesting in it (it
    # had read "Note 11 : Derivative Financial Instruments > Management's Discussion and
    # Analysis > ..." on every MD&A child). ``_notes_under_their_heading`` is not reached here.
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / "2023 Q1 INTC.pdf")
    paths = [u.section_path for u in build_units(doc)]
    mdna = [p for p in paths if "Management's Discussion and Analysis" in p]
    assert mdna and all(p[0] == "Management's Discussion and Analysis" for p in mdna), mdna[:3]
    noted = [p for p in paths if any(h.startswith("Note 11 :") for h in p)]
    assert noted and not any("Management's Discussion and Analysis" in p for p in noted)
    assert all(
        p[p.index(next(h for h in p if h.startswith("Note 11 :"))) - 1] == "Notes to Consolidated Condensed Financial Statements"
        for p in noted
    )
    # the notes keep one level: Note 4 (set a size smaller on its page) is no child of Note 3
    assert not any(h.startswith("Note 3 :") for p in paths if any(x.startswith("Note 4 :") for x in p) for h in p)


def _head(key: int, text: str, level: int):
    from evidence_pipeline.parser.docling_items import Entry

    return Entry(key, None, 1, None, label="section_header", text=text, level=level)  # type: ignore[arg-type]


def _line(key: int, text: str, label: str = "paragraph"):
    from evidence_pipeline.parser.docling_items import Entry

    return Entry(key, None, 1, None, label=label, text=text, level=1 if label == "section_header" else None)  # type: ignore[arg-type]


def test_an_item_set_in_body_type_is_a_heading_unless_a_contents_line():
    from evidence_pipeline.parser.headings import structural_lines

    entries = [
        _line(0, "Item 7. Management's Discussion and Analysis"),  # contents: the heading follows
        _line(1, "Item 8. Financial Statements and Supplementary Data"),  # contents: the body line follows
        _line(2, "Item 1. Item 1A. Item 1B."),  # a row of a contents grid read as text
        _line(3, "Item 7. Management's Discussion and Analysis", "section_header"),
        _line(4, "Item 7A. Quantitative and Qualitative Disclosures About Market Risk."),
        _line(5, "Item 8. Financial Statements and Supplementary Data."),
        _line(6, "Item 9. is incorporated by reference to the proxy statement that we file with the commission."),
    ]
    structural_lines(entries)
    assert [e.label for e in entries] == [
        "paragraph",
        "paragraph",
        "paragraph",
        "section_header",
        "section_header",
        "section_header",
        "paragraph",
    ]


def test_real_items_in_body_type_open_their_sections():
    """3M's 10-K sets its Items in body type ("Item 8. Financial Statements and Supplementary
    Data." on p. 52): its statements and notes had sat in the MD&A's last section,
    "FINANCIAL INSTRUMENTS"."""
    from evidence_pipeline.parser import DoclingParser

    filing = CORPORA / "financebench-dev" / "pdfs" / "3M_2018_10K.pdf"
    if not filing.is_file():
        pytest.skip("shared corpora not present")
    doc = DoclingParser().parse(filing, pages=(50, 57))
    paths = [u.section_path for u in build_units(doc) if 56 in u.pages]
    assert paths and all("Item 8. Financial Statements and Supplementary Data." in p for p in paths), paths


def test_an_index_of_parts_at_the_back_outlines_nothing():
    from evidence_pipeline.parser.headings import structural_levels

    def outline():
        return [
            _head(0, "Financial Statements", 4),
            _head(1, "Notes to Financial Statements", 5),
            _head(2, "Note 1 : Basis of Presentation", 3),
            _head(3, "Inventories", 7),
            _head(4, "Note 2 : Borrowings", 3),
            _head(5, "Management's Discussion and Analysis", 4),
            _head(6, "Liquidity", 6),
            _head(7, "Other Key Information", 4),
            _head(8, "Part I - Financial Information", 1),
            _head(9, "Item 1. Financial Statements", 2),
        ]

    heads = outline()
    assert structural_levels(heads) == 0
    levels = {e.text.split(" :")[0]: e.level for e in heads}
    assert levels["Note 1"] == levels["Note 2"] == 6 and levels["Inventories"] > 6
    assert levels["Management's Discussion and Analysis"] == 4 < levels["Notes to Financial Statements"]
    # printed in the body, the same Parts and Items outline the document
    body = [_head(0, "Part I - Financial Information", 1), _head(1, "Item 1. Financial Statements", 2), *outline()[1:8]]
    assert structural_levels(body) == 3
    assert [e.level for e in body[:4]] == [1, 2, 3 + 5, 3]


@pytest.mark.parametrize(
    ("line", "opens"),
    [
        ("NOTE 6 — INVENTORIES", True),
        ("Note 9 : Borrowings", True),
        ("NOTE 9. Supplemental Cash Flow Information", True),
        ("The components of inventories were as follows:", True),
        ("Following are the details of the purchase price allocated to the intangible assets acquired:", True),
        ("Current assets:", False),  # a row label alone on its line
        ("Cash paid for amounts included in the measurement of lease liabilities:", False),
        ("Notes payable", False),
        ("Note: amounts in millions", False),
    ],
)
def test_lines_that_open_what_follows_a_table(line, opens):
    from evidence_pipeline.parser.table_finder import opens_next

    assert opens_next(line) is opens


def test_a_note_heading_in_body_type_ends_the_table_above_and_heads_the_next():
    # Microsoft sets "NOTE 6 — INVENTORIES" in the body's own type, right under a derivatives
    # table, then "The components of inventories were as follows:" and the inventory table with
    # its own column heads. Both lines were taken for row labels: the two tables were one, under
    # the derivatives' section, and the note was no heading.
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / "2022 Q3 MSFT.pdf", pages=(16, 18))
    heads = [b.text for b in doc.blocks if b.label == "section_header"]
    assert {"NOTE 6 — INVENTORIES", "NOTE 7 — BUSINESS COMBINATIONS", "NOTE 8 — GOODWILL"} <= set(heads), heads
    tables = [u for u in build_units(doc) if u.kind == "table"]
    (inventories,) = [u for u in tables if any(s.startswith("Raw materials |") for s in u.row_sentences)]
    assert inventories.section_path[-1] == "NOTE 6 — INVENTORIES"
    labels = [s.split(" |")[0] for s in inventories.row_sentences]
    assert labels == ["Raw materials", "Work in process", "Finished goods", "Total"], labels
    assert inventories.row_sentences[-1] == "Total | September 30, / 2022: $4,268; June 30, / 2022: $3,742"
    for table in tables:  # no table takes in a note heading or a lead-in sentence as a row
        assert not any(s.startswith(("NOTE ", "The components", "Following are")) for s in table.row_sentences), table.row_sentences


def test_a_sentence_ending_with_the_next_items_bullet_is_no_heading(corpora):
    # 3M's highlights print each bullet's glyph at the end of the line before it: "Operating income
    # margins were / 30.2 percent, down 0.8 percentage points. ·" — that last line was a heading,
    # and the section of everything after it in Part II.
    from evidence_pipeline.parser import DoclingParser

    path = corpora / "financebench-dev" / "pdfs" / "3M_2018_10K.pdf"
    if not path.is_file():
        pytest.skip("financebench corpus not present")
    doc = DoclingParser().parse(path, pages=(21, 21))
    (line,) = [b for b in doc.blocks if b.text.startswith("30.2 percent, down 0.8 percentage points.")]
    assert line.label == "paragraph"
    heads = [b.text for b in doc.blocks if b.label == "section_header"]
    assert heads and not any(h.rstrip().endswith("·") for h in heads), heads


def _entry(key, label, text, l, t, r, b):
    from evidence_pipeline.parser.docling_items import Entry
    from evidence_pipeline.records import BBox

    return Entry(key, None, 1, BBox(l=l, t=t, r=r, b=b), label=label, text=text, level=1 if label == "section_header" else None)  # type: ignore[arg-type]


def test_a_field_label_with_its_value_beside_it_is_one_paragraph():
    from evidence_pipeline.parser.headings import join_field_labels

    value = _entry(1.0, "paragraph", "A Prospective Natural History Study of CMT4J", 198, 154, 510, 177)
    label = _entry(2.0, "section_header", "Title:", 95, 160, 121, 168)
    run_in = _entry(3.0, "section_header", "Objectives:", 90, 300, 140, 308)
    run_in_text = _entry(4.0, "paragraph", "To assess the course of the disease.", 143, 300, 400, 308)
    above = _entry(5.0, "section_header", "Exclusion criteria:", 90, 400, 180, 408)
    below = _entry(6.0, "paragraph", "1. Prior gene therapy.", 90, 412, 300, 420)
    appendix = _entry(7.0, "section_header", "APPENDIX 1:", 90, 500, 150, 508)
    appendix_title = _entry(8.0, "section_header", "SCHEDULE OF EVENTS", 200, 500, 320, 508)
    entries = [value, label, run_in, run_in_text, above, below, appendix, appendix_title]
    join_field_labels(entries)
    assert entries == [value, run_in, run_in_text, above, below, appendix, appendix_title]
    assert (value.label, value.text, value.key) == ("paragraph", "Title: A Prospective Natural History Study of CMT4J", 1.0)
    # a run-in heading (its text right after it), a heading over its text and a numbered
    # label beside its title ("APPENDIX 1:", the first part of a heading) stay headings
    assert run_in.label == above.label == appendix.label == appendix_title.label == "section_header"


@pytest.mark.skipif(not (CORPORA / "clinical-protocols" / "pdfs").is_dir(), reason="shared protocols not present")
def test_real_title_page_fields_are_no_sections():
    """NCT06151600 p. 2: "Title:" and "Protocol No:" beside their values had headed the
    document's first sections ("Title: > TABLE OF CONTENTS:")."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(CORPORA / "clinical-protocols" / "pdfs" / "NCT06151600_Prot_000.pdf", pages=(2, 3))
    assert not any(b.label == "section_header" and b.text.strip() in ("Title:", "Protocol No:") for b in doc.blocks)
    texts = [b.text for b in doc.blocks if b.label == "paragraph"]
    assert "Protocol No: TBD" in texts
    assert any(t.startswith("Title: A Prospective Natural History") for t in texts)
    assert not any(u.section_path and u.section_path[0] == "Title:" for u in build_units(doc))
