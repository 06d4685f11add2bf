"""Document cards of real documents: 10-Q covers, an earnings release, clinical protocols, SOPs."""

import hashlib
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from evidence_pipeline.cards import CARD_PAGES, DocumentCard, build_card, find_dates, parse_date, short_names
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline_tests.run_shared import made_once

_PARSED: dict[Path, ParsedDoc] = {}
_PARSER: list = []


@pytest.fixture(scope="session")
def first_pages(tmp_path_factory):
    """Parse the first ``CARD_PAGES`` pages of a file once per test run, whichever worker asks
    first (``run_shared.made_once``): all a card reads. Shared with test_routing, which imports
    this fixture."""

    def parse(path: Path):
        if path not in _PARSED:
            name = "first-pages-" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
            with made_once(tmp_path_factory, name) as (folder, made):
                if not made:
                    if not _PARSER:
                        from evidence_pipeline.parser import DoclingParser

                        _PARSER.append(DoclingParser())
                    doc = _PARSER[0].parse(path, pages=(1, CARD_PAGES))
                    (folder / "doc.json").write_text(doc.model_dump_json())
                _PARSED[path] = ParsedDoc.model_validate_json((folder / "doc.json").read_text())
        return _PARSED[path]

    return parse


@pytest.fixture(scope="module")
def tenq(corpora, first_pages):
    def card(stem: str) -> DocumentCard:
        return build_card(first_pages(corpora / "sec-10q-dev" / "pdfs" / f"{stem}.pdf"))

    return card


def test_10q_cover_with_exact_name_label(tenq):
    card = tenq("2022 Q3 AAPL")
    assert card.doc_type == "10-Q"
    assert card.organisation == "Apple Inc."
    assert "Apple" in card.names
    assert card.tickers == ["AAPL"]
    assert card.period_end == "2022-06-25" and card.period_months == 3
    # "Nine Months Ended" columns: the third quarter of the fiscal year that ends in September
    assert (card.fiscal_year, card.fiscal_quarter) == (2022, 3)
    assert card.title == "Apple Inc. Form 10-Q for the quarterly period ended June 25, 2022"
    assert "001-36743" in card.identifiers  # Commission File Number


def test_10q_cover_without_exact_name_label(tenq):
    # Microsoft's cover has no "(Exact name of registrant...)" line: the name follows the file number
    card = tenq("2023 Q1 MSFT")
    assert card.organisation == "MICROSOFT CORPORATION"
    assert "MICROSOFT" in card.names
    assert card.tickers == ["MSFT"]
    assert card.period_end == "2022-12-31"
    assert (card.fiscal_year, card.fiscal_quarter) == (2023, 2)  # "Six Months Ended December 31"


def test_10q_ticker_in_a_merged_cell(tenq):
    card = tenq("2022 Q3 INTC")  # "Common stock, $0.001 par value INTC" is one cell
    assert card.organisation == "INTEL CORPORATION"
    assert card.tickers == ["INTC"]
    assert card.period_end == "2022-10-01"


def test_earnings_release(corpora, first_pages):
    card = build_card(first_pages(corpora / "financebench-dev" / "pdfs" / "ULTABEAUTY_2023Q4_EARNINGS.pdf"))
    assert card.doc_type == "earnings release"
    assert card.title.startswith("Ulta Beauty Announces Fourth Quarter Fiscal 2022 Results")
    assert card.organisation == "Ulta Beauty, Inc." and "Ulta Beauty" in card.names
    assert card.tickers == ["ULTA"]  # "(NASDAQ: ULTA)"
    # the release names its own quarter; the year-ago quarter is mentioned more often
    assert (card.fiscal_year, card.fiscal_quarter) == (2022, 4)
    assert card.period_end == "2023-01-28"


def test_protocol_title_over_three_lines(corpora, first_pages):
    card = build_card(first_pages(corpora / "clinical-protocols" / "pdfs" / "NCT06158269_Prot_000.pdf"))
    assert card.title.startswith("Phase II clinical study of daratumumab combined with bortezomib, lenalidomide")
    assert card.title.endswith("with newly diagnosed double-hit multiple myeloma (MM)")
    assert card.doc_type == "protocol"
    assert "NCT06158269" in card.identifiers


def test_protocol_title_double_spaced_stops_at_fields(corpora, first_pages):
    card = build_card(first_pages(corpora / "clinical-protocols" / "pdfs" / "NCT06149832_Prot_000.pdf"))
    assert card.title == ("Treatment of Oral Chronic Graft-versus-host Disease With Human Umbilical Cord Mesenchymal Stem Cell Dressing")
    assert card.dates[0] == "2023-09-13"


def test_protocol_labelled_number_and_sponsor(corpora, first_pages):
    card = build_card(first_pages(corpora / "clinical-protocols" / "pdfs" / "NCT06152900_Prot_SAP_000.pdf"))
    assert "AFL19006" in card.identifiers  # "Clinical Protocol Number: AFL19006"
    assert card.organisation.startswith("Lutronic")
    assert card.title.startswith("Prospective Clinical Evaluation of the Safety and Efficacy")


def test_scanned_page_without_text(corpora, first_pages):
    # a one-page scan with no text layer: its title is what OCR read, its identifier the file name's
    card = build_card(first_pages(corpora / "clinical-protocols" / "pdfs" / "NCT06155240_Prot_SAP_000.pdf"))
    assert card.title == "APPENDIX D Study Protocol Class Procedures"
    assert card.identifiers == ["NCT06155240"]
    assert card.organisation is None and card.period_end is None


def test_sop_cards_match_the_generator_truth(sample_corpus, first_pages):
    truth_dir = sample_corpus.parent / "truth"
    for pdf in sorted(sample_corpus.glob("*.pdf")):
        truth = json.loads((truth_dir / f"{pdf.stem}.json").read_text())
        card = build_card(first_pages(pdf))
        assert card.doc_type == "SOP"
        assert card.identifiers[0] == truth["doc_id"]
        assert card.title == truth["title_line"]
        assert truth["title"] in card.retrieval_text


def test_card_is_a_frozen_record_and_round_trips(tenq):
    card = tenq("2023 Q1 NVDA")
    with pytest.raises(ValidationError):
        card.title = "x"
    assert DocumentCard.model_validate_json(card.model_dump_json()) == card
    text = card.retrieval_text
    assert "NVDA" in text and "2023-04-30" in text and "fiscal Q1 2024" in text


def test_date_and_name_helpers():
    assert parse_date("For the quarterly period ended July 1, 2023").isoformat() == "2023-07-01"
    assert set(find_dates("Oct-16-2023 and 2024-02-12, 12 March 2021")) == {"2023-10-16", "2024-02-12", "2021-03-12"}
    assert short_names("AMAZON.COM, INC.") == ["AMAZON.COM", "AMAZON"]
    assert short_names("American Express Company") == ["American Express"]


@pytest.mark.parametrize(
    "stem, title_start, codes",
    [
        # an address and a type line above the study title; the protocol code printed as "Protocol: X/Y"
        ("NCT00486889_Prot_000", "A Long-term Study to Evaluate Growth and Development Outcomes", {"AGLU03606"}),
        # the sponsor's line above the title; the codes in the cover's table, a running header
        ("NCT00935012_Prot_000", "OPEN-LABEL SAFETY AND EFFICACY EVALUATION OF FX-1006A", {"B3461026", "Fx1B-303"}),
    ],
)
def test_a_protocol_cover_gives_its_study_title_and_codes(corpora, first_pages, stem, title_start, codes):
    card = build_card(first_pages(corpora / "sponsor-protocols" / "pdfs" / f"{stem}.pdf"))
    assert card.title.startswith(title_start)
    assert codes <= set(card.identifiers)
    assert not any(find_dates(i) for i in card.identifiers)


def test_a_field_value_below_the_title_is_not_taken_for_it(corpora, first_pages):
    # The title first; the investigators' names and affiliations below are longer, and no title.
    card = build_card(first_pages(corpora / "clinical-protocols" / "pdfs" / "NCT06152666_Prot_000.pdf"))
    assert card.title.startswith("Understanding enablers, barriers, and unexpected outcomes")


def test_cover_codes_mix_capitals_and_digits_and_are_no_dates():
    from evidence_pipeline.cards import Line, _cover_codes

    lines = [
        Line("Protocol H8O-MC-GWBQ(e) Safety and Efficacy of Exenatide", 1, "title"),
        Line("STUDY NUMBER: AGAL02603/MSC12868 VERSION DATE: 23-Mar-2018, JAN-2011", 1, "section_header"),
        Line("Version 2.0, COVID-19, ISO 9001, page 12 of 40, HPV-16", 1, "paragraph"),
    ]
    assert _cover_codes(lines) == ["H8O-MC-GWBQ", "AGAL02603", "MSC12868"]
