"""Layouts real documents use that the rule parser once read wrong, each pinned on a generated
PDF (``tools/samples/layout_cases``) and, where the shared corpora hold the case, a real one."""

from pathlib import Path

import pytest

from evidence_pipeline.pipeline import document_card
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.splitting import split_units
from evidence_pipeline.units import build_units
from evidence_pipeline_tests.conftest import CORPORA

PROTOCOLS = CORPORA / "clinical-protocols" / "pdfs"
FILINGS = CORPORA / "sec-10q-dev" / "pdfs"


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, Path]:
    from evidence_pipeline.tools.samples.layout_cases import write_layout_cases

    return write_layout_cases(tmp_path_factory.mktemp("layout_cases"))


def _units(doc: ParsedDoc):
    card = document_card(doc)
    return build_units(doc.model_copy(update={"title": card.title}))


def _tables(doc: ParsedDoc):
    return [u for u in _units(doc) if u.kind == "table"]


def test_layout_cases_are_deterministic(tmp_path):
    from evidence_pipeline.tools.samples.layout_cases import write_layout_cases

    a = write_layout_cases(tmp_path / "a")
    b = write_layout_cases(tmp_path / "b")
    assert all(a[name].read_bytes() == b[name].read_bytes() for name in a)


def test_key_value_table_has_no_header_and_reads_field_value(cases, parse_cached):
    from evidence_pipeline.tools.samples.layout_cases import FIELDS

    (unit,) = _tables(parse_cached(cases["key_value"]))
    assert unit.header == []
    assert unit.row_sentences == [f"{k}: {v}" for k, v in FIELDS]


def test_schedule_labels_stay_in_their_column_and_markers_resolve(cases, parse_cached):
    from evidence_pipeline.tools.samples.layout_cases import ACTIVITIES, NOTES, VISITS

    (unit,) = _tables(parse_cached(cases["schedule"]))
    assert unit.header == [["Study Day", *VISITS]]
    for row, (label, _, marked) in zip(unit.rows, ACTIVITIES):
        assert row[1:] == ["X" if i in marked else "" for i in range(len(VISITS))], row
        assert row[0].rstrip("ᵃᵇᶜ") == label
    assert len(unit.footnotes) == len(NOTES)
    vital = next(s for s in unit.row_sentences if s.startswith("Vital Signs"))
    assert vital.startswith(f"Vital Signs (note: {NOTES['a']}) | Baseline: X")
    assert split_units([unit], 3000) == [unit]


def test_title_page_lines_are_kept_whole(cases, parse_cached):
    from evidence_pipeline.tools.samples.layout_cases import COVER, TITLE_LINES

    doc = parse_cached(cases["title_page"])
    assert document_card(doc).title == " ".join(TITLE_LINES)
    bodies = [b for u in _units(doc) if u.kind == "section" for b in u.body]
    for k, v in COVER:
        assert f"{k}: {v}" in bodies
    statement = next(b for b in bodies if b.startswith("The information in this protocol"))
    assert statement.endswith("ethics committee.")
    paths = {tuple(u.section_path) for u in _units(doc)}
    assert ("1. Background",) in paths and ("2. Objectives",) in paths


def test_centred_tables_stay_in_their_section(cases, parse_cached):
    doc = parse_cached(cases["centred_table"])
    units = _units(doc)
    assert all(u.section_path == ["1 Reactor limits"] for u in units if u.kind == "table")
    cleaning = [u for u in units if u.section_path == ["2 Cleaning"]]
    assert [b for u in cleaning for b in u.body] == ["Clean the vessel with hot water after every batch."]


def test_two_column_band_reads_left_column_first(sample_corpus, parse_cached):
    """SOP-QC-415: full-width sections around a two-column band on page 1."""
    units = _units(parse_cached(sample_corpus / "SOP-QC-415.pdf"))
    by_section = {tuple(u.section_path): " ".join(u.body) for u in units if u.kind == "section"}
    assert "low point of transfer tubing" in by_section[("3 Background",)]
    assert "low point" not in by_section[("6 Acceptance criteria",)]
    assert "A failing result requires recleaning" in by_section[("6 Acceptance criteria",)]
    assert "A failing result" not in by_section[("4 Swab technique",)]


needs_protocols = pytest.mark.skipif(not PROTOCOLS.is_dir(), reason="shared corpora not present")


@needs_protocols
def test_real_schedule_of_events(parse_cached):
    """NCT06151600 p. 26: rulings drawn cell by cell, raised note letters, notes on p. 27."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06151600_Prot_000.pdf", pages=(26, 27))
    (unit,) = _tables(doc)
    assert unit.header[0][1:] == ["Screening", "Baseline", "Month 12", "Month 24"]
    family = next(r for r in unit.rows if r[0] == "Family History")
    assert family == ["Family History", "", "X", "", ""]
    assert not any(r[1] == r[0] for r in unit.rows)
    sentences = unit.row_sentences
    assert any(s.startswith("Vital Signs (note: Temperature, pulse, blood pressure") for s in sentences)
    assert any(s.startswith("PedsQL (note: Subjects 2 to 18 years)") for s in sentences)


@needs_protocols
def test_real_schedule_whose_marks_sit_flush_left_in_ruled_cells():
    """NCT06152900 p. 19: every cell ruled, its column rules drawn cell by cell and stopping
    short of the double rule under each row, each "x" set flush left. Joined across the row
    rules, the column rules part the columns (not the white gaps between flush-left marks): a
    single mark is its own cell, not a span across the visits, and the visits head their own
    columns."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06152900_Prot_SAP_000.pdf", pages=(19, 19))
    (unit,) = _tables(doc)
    assert unit.header == [["", "Screening", "Tx 1", "Tx 2", "Tx 3", "Tx 4", "Tx 5", "Tx 6", "Tx 7", "Tx 8", "FU 30 day", "FU 90 days"]]
    assert unit.rows[0] == ["Informed Consent", "x"] + [""] * 10
    assert "Informed Consent | Screening: x" in unit.row_sentences
    assert "Photography (pre- and - post treatment) | Tx 1: x; FU 30 day: x; FU 90 days: x" in unit.row_sentences


@needs_protocols
def test_real_sparse_schedule_carried_onto_the_next_page():
    """NCT06152666 pp. 16-17: a schedule of events opened at the foot of p. 16 and carried on
    over p. 17, every cell ruled, one "X" per row. Its rules draw it whole, so it is a table
    however sparse its marks, and its rows on p. 17 go on under the head on p. 16."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06152666_Prot_000.pdf", pages=(15, 17))
    (unit,) = [u for u in _tables(doc) if u.header and u.header[0][0] == "TIME POINT"]
    assert unit.pages == [16, 17]
    assert [r[0] for r in unit.rows][:3] == ["Hospital identification", "Consent clinical leads", "Candidate interviewee identification"]
    assert "Interviewee expression of interest | 3: X" in unit.row_sentences
    assert "Dissemination | 10 (6 MONTHS): X" in unit.row_sentences
    assert not any(b.label == "section_header" and b.text.startswith("Consent clinical") for b in doc.blocks)


@needs_protocols
def test_real_labels_centred_beside_wrapped_definitions():
    """NCT06152900 p. 22, "TABLE 2": a label centred on each cell ("Definite", "Probably
    Related") beside a definition that wraps, so no line holds a label and its definition side
    by side. Each label stays in its column, not read into the definition's text."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06152900_Prot_SAP_000.pdf", pages=(22, 22))
    (unit,) = _tables(doc)
    assert [r[0] for r in unit.rows] == ["Definite", "Probably Related", "Possibly Related", "Not Likely Related", "Unrelated"]
    assert "Definite: Definite relationship exists between the device/procedure and an adverse event" in unit.row_sentences
    assert unit.caption and unit.caption.upper().startswith("TABLE 2: RELATIONSHIP BETWEEN ADVERSE EVENTS")


@needs_protocols
def test_real_key_value_table_and_cover_page(parse_cached):
    from evidence_pipeline.parser import DoclingParser

    parser = DoclingParser()
    doc = parser.parse(PROTOCOLS / "NCT06151600_Prot_000.pdf", pages=(6, 6))
    unit = next(u for u in _tables(doc) if u.rows and u.rows[0][0] == "Study Title")
    assert unit.header == []
    assert "Sponsor: Elpida Therapeutics SPC" in unit.row_sentences

    cover = parser.parse(PROTOCOLS / "NCT06149832_Prot_000.pdf", pages=(1, 2))
    units = _units(cover)
    bodies = [b for u in units for b in u.body]
    assert "Principal Investigator: Gao Lei" in bodies
    assert any(b.startswith("Research Institution: Second Affiliated Hospital") and "(formerly" in b for b in bodies)
    assert not any(u.section_path and u.section_path[-1].startswith("Principal Investigator (PI)") for u in units)


@needs_protocols
def test_real_fields_in_bold_have_no_header_row():
    """NCT06152666 p. 3: a summary of fields whose labels are all bold, the first value (the
    title) bold too. The first row is a field, not a header over the others."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06152666_Prot_000.pdf", pages=(3, 3))
    unit = next(u for u in _tables(doc) if any(r[0] == "Number of Study Sites" for r in u.rows))
    assert unit.header == []
    assert unit.rows[0][0] == "Title of Study"
    assert "Number of Study Sites: 6+" in unit.row_sentences
    assert "Study Period: May 2023 – February 2024" in unit.row_sentences


@needs_protocols
def test_real_ruled_table_under_a_figure_caption():
    """NCT06152900 p. 11: "FIGURE 1: SYSTEM SPECIFICATIONS" over a ruled grid of settings. A
    figure caption does not make a grid with text in every cell a picture."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06152900_Prot_SAP_000.pdf", pages=(11, 11))
    (unit,) = [u for u in _tables(doc) if any(r[0] == "Pulse Repetition Rate" for r in u.rows)]
    assert unit.header == []
    assert [r[0] for r in unit.rows] == [
        "Frequency",
        "Output power",
        "Number of Electrodes",
        "Simulation",
        "Pulse Repetition Rate",
        "Pulse Width",
        "Handpieces/Delivery System",
    ]
    assert "Pulse Repetition Rate: Up to 200Hz" in unit.row_sentences
    assert not any(b.label == "section_header" and "Pulse Repetition Rate" in b.text for b in doc.blocks)


@needs_protocols
def test_real_text_table_rows_are_the_bands_between_its_rules():
    """NCT06151600 p. 18: procedures, risks and mitigations, each cell wrapped over many lines,
    a rule between rows. A row is a band between rules, not a line of text."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06151600_Prot_000.pdf", pages=(18, 18))
    (unit,) = _tables(doc)
    assert unit.header == [["Procedures and Risks", "Description", "Risk", "Mitigation measures"]]
    assert [r[0].split()[0] for r in unit.rows] == ["Neurology", "CMT", "Electrophysiology", "Magnetic"]
    mri = unit.rows[-1]
    assert "Hearing protection for risk of hearing damage" in mri[3]
    assert mri[1].startswith("MRI scan of the thigh and calf muscle") and mri[1].endswith("MRI scan of the brain.")


@needs_protocols
def test_real_sentence_carried_over_a_page_is_no_header():
    """NCT06152900 p. 7: the synopsis goes on from p. 6, its first line the end of the
    exclusion criteria under an empty label cell. A sentence is no column head: the fields
    under it read "Participant Duration: 7 months", not "<the criteria>: 7 months"."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06152900_Prot_SAP_000.pdf", pages=(7, 7))
    (unit,) = [u for u in _tables(doc) if any(r[0] == "Participant Duration:" for r in u.rows)]
    assert unit.header == []
    assert "Participant Duration: 7 months" in unit.row_sentences
    assert unit.rows[0][1].startswith("11. Subjects unwilling or unable")


@needs_protocols
def test_real_running_title_that_changes_its_wording_is_furniture_and_the_synopsis_goes_on():
    """NCT06152900: a running title printed on pp. 2-7 only (later pages print another wording)
    and "Protocol Number: AFL19006" at the foot of the same pages. In a parse longer than three
    times their stretch they are still page furniture, so nothing sits between the synopsis on
    p. 6 and its end on p. 7: one evidence unit, the carried-over criteria under their label."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06152900_Prot_SAP_000.pdf", pages=(4, 16))
    title = "Electronic Stimulation for Strength and Muscle Toning"
    running = [b for b in doc.blocks if b.text == title]
    assert running and all(b.label == "page_header" for b in running), [(b.page, b.label) for b in running]
    (unit,) = [u for u in _tables(doc) if any(r[0] == "Participant Duration:" for r in u.rows)]
    assert unit.pages == [6, 7]
    assert "Number of Sites Enrolling Participants: Up to 6 sites" in unit.row_sentences
    assert "Participant Duration: 7 months" in unit.row_sentences
    carried = [s for s in unit.row_sentences if "11. Subjects unwilling or unable" in s]
    assert carried and carried[0].startswith("Exclusion Criteria: 11.")


@needs_protocols
def test_real_table_with_a_title_of_its_own_on_the_next_page_is_a_new_table():
    """NCT06151600 pp. 5-6: the list of abbreviations fills p. 5 and the synopsis, titled
    "CLINICAL PROTOCOL SYNOPSIS", opens p. 6 with as many columns. A part under a title of its
    own opens a table; it does not continue the one before."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06151600_Prot_000.pdf", pages=(5, 6))
    tables = {u.caption: u for u in _tables(doc)}
    assert tables["LIST OF ABBREVIATIONS AND ACRONYMS"].pages == [5]
    synopsis = tables["CLINICAL PROTOCOL SYNOPSIS"]
    assert synopsis.pages == [6] and synopsis.rows[0][0] == "Study Title"
    assert not any(r[0] == "ADL" for r in synopsis.rows)


@needs_protocols
def test_real_summary_whose_one_cell_fills_a_page_stays_one_table():
    """NCT06158269 pp. 1-5: the protocol summary, a ruled table of two columns whose
    eligibility cell fills p. 3 alone, its label cell empty there. The ruled but empty label
    column keeps p. 3 a part of the table, its numbered lines one cell (a row of one cell that
    opens its page is a table's carried-over row), so the summary is one unit from p. 1 to
    p. 5 and the exclusion criteria on p. 3 read whole under their field."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(PROTOCOLS / "NCT06158269_Prot_000.pdf", pages=(1, 5))
    (unit,) = _tables(doc)
    assert unit.pages == [1, 2, 3, 4, 5]
    assert unit.rows[0][0] == "Study topic" and unit.rows[-1][0] == "Statistical analysis"
    (carried,) = [s for s in unit.row_sentences if "primary plasma cell leukemia" in s]
    assert carried.startswith("Inclusion exclusion criteria: stimulating factor (GM-CSF)")
    assert "Exclusion criteria: 1. Patients who are definitely diagnosed" in carried
    assert "QT interval (QTc) of > 470 msec after baseline correction" in carried
    assert not any(b.label == "section_header" and b.text == "Exclusion criteria:" for b in doc.blocks)


@needs_protocols
def test_real_table_of_contents_is_left_out_as_table_and_as_lines():
    """NCT06151600 pp. 3-4: the contents print as a two-column grid on p. 3 ("4.3" | "Procedures
    ..... 15", the page number after the leader in one cell) and as lines of text on p. 4. Every
    heading of the protocol is in them, so they matched questions as well as the sections do
    (a contents line ranked third for "How many sites are participating in NCT06151600?")."""
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.text import CONTENTS_ENTRY_RE

    doc = DoclingParser().parse(PROTOCOLS / "NCT06151600_Prot_000.pdf", pages=(3, 4))
    assert sum(bool(CONTENTS_ENTRY_RE.search(b.text)) for b in doc.blocks) >= 10
    assert any(CONTENTS_ENTRY_RE.search(c.text) for t in doc.tables for c in t.cells)
    units = _units(doc)
    assert not any(CONTENTS_ENTRY_RE.search(u.retrieval_text) for u in units), [
        u.unit_id for u in units if CONTENTS_ENTRY_RE.search(u.retrieval_text)
    ]
    assert not any(u.kind == "table" and 3 in u.pages for u in units)


@pytest.mark.skipif(not FILINGS.is_dir(), reason="shared corpora not present")
def test_real_index_of_statements_is_left_out():
    """Amazon's 10-Q p. 2: the index of its statements is a grid of titles and pages, with no
    dot leaders and no "Contents" above it ("Consolidated Statements of Cash Flows | 3"). It had
    been an evidence unit of its own that matched every question naming a statement."""
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.units import is_contents_table

    doc = DoclingParser().parse(FILINGS / "2022 Q3 AMZN.pdf", pages=(2, 8))
    [index] = [t for t in doc.tables if t.page == 2]
    assert index.grid()[0] == ["Consolidated Statements of Cash Flows", "3"]
    assert is_contents_table(index, n_pages=doc.n_pages)
    tables = _tables(doc)
    assert not any(2 in u.pages for u in tables)
    assert {3, 4, 5, 6} <= {p for u in tables for p in u.pages}


@pytest.mark.skipif(not FILINGS.is_dir(), reason="shared corpora not present")
def test_real_bulleted_list_read_as_a_grid_is_read_as_a_list():
    """Intel's 10-Q p. 3: stretches of its forward-looking statements' bulleted list come out of
    the parser as two-column grids (the bullets, the items). They are list items of the
    section, not tables whose rows are named "•"."""
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.units import bulleted_list_items

    doc = DoclingParser().parse(FILINGS / "2023 Q1 INTC.pdf", pages=(3, 3))
    listed = [t for t in doc.tables if bulleted_list_items(t)]
    assert listed and all(t.grid()[0][0] == "•" for t in listed)
    units = _units(doc)
    assert not any(u.kind == "table" and "•" in u.text for u in units)
    sections = " ".join(u.text for u in units if u.kind == "section")
    assert "future technology trends;" in sections
