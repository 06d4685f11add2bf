"""Reference material (abbreviation lists, glossaries, tables of contents, revision histories)
is recognised by its heading or its shape and ranks below evidence unless a query asks what a
term means (a revision history: unless it asks about amendments, revisions or versions)."""

import pytest

from evidence_pipeline.retrieval.reference import asks_history, asks_meaning, is_reference, reference_last, shaped_as_reference
from evidence_pipeline.tables import table_html

ABBREVIATIONS = [
    ["AE", "adverse event"],
    ["ALT", "alanine aminotransferase"],
    ["AST", "aspartate aminotransferase"],
    ["BMI", "body mass index"],
    ["CRF", "case report form"],
    ["HbA1c", "glycosylated haemoglobin"],
    ["ULN", "upper limit of normal"],
]
DOSES = [
    ["ALT > 5 x ULN", "Interrupt dosing"],
    ["ALT 3-5 x ULN", "Reduce to 50 mg"],
    ["Platelets < 50,000", "Interrupt dosing"],
    ["Creatinine clearance < 30 mL/min", "Do not dose"],
    ["Neutrophils < 1,000", "Interrupt dosing"],
    ["Weight loss > 10%", "Reduce to 25 mg"],
]
TOC = "\n".join(
    ["Table of Contents"] + [f"{n}. {title} {'.' * 12} {page}" for n, (title, page) in enumerate([
        ("Introduction", 8), ("Objectives", 10), ("Study design", 11), ("Eligibility", 14), ("Dosing", 17), ("Safety", 22),
    ], 1)]
)  # fmt: skip


def _payload(text, caption=None, section_path=()):
    return {"parent_text": text, "caption": caption, "section_path": list(section_path)}


def test_a_table_of_acronyms_is_reference_by_its_shape_alone():
    glossary = table_html([["Abbreviation", "Term"]], ABBREVIATIONS)
    assert shaped_as_reference(glossary)
    assert is_reference(_payload(glossary, section_path=["5 Appendix"]))
    # the same shape with fewer rows than MIN_ACRONYM_ROWS is a small table, not a list
    assert not shaped_as_reference(table_html([["Abbreviation", "Term"]], ABBREVIATIONS[:3]))


def test_a_dose_table_whose_labels_hold_acronyms_is_evidence():
    doses = table_html([["Finding", "Action"]], DOSES)
    assert not is_reference(_payload(doses, caption="Table 5-1 Dose modifications", section_path=["5 Treatment"]))


def test_a_table_of_contents_is_reference_by_its_lines():
    assert shaped_as_reference(TOC)
    assert not shaped_as_reference("Patients are dosed on Day 1.\nVisits occur every 3 months (± 4 weeks).\n")


@pytest.mark.parametrize(
    "caption, path, expected",
    [
        (None, ["10 Appendices", "10.2 List of Abbreviations"], True),
        ("Glossary of Terms", [], True),
        (None, ["Protocol Amendment 2", "Summary of Changes"], True),
        (None, ["Revision History"], True),
        (None, ["Contents"], True),
        (None, ["6 Study Procedures", "6.3 Contents of the study kit"], False),
        ("Table 3: Schedule of Assessments", ["6 Study Procedures"], False),
    ],
)
def test_headings_that_name_reference_material(caption, path, expected):
    assert is_reference(_payload("any text", caption, path)) is expected


def test_reference_ranks_last_unless_the_query_asks_a_meaning():
    hits = [
        _payload(table_html([["Abbreviation", "Term"]], ABBREVIATIONS)),
        _payload("ALT above 5 x ULN interrupts dosing.", section_path=["5 Dose modification"]),
        _payload(TOC),
        _payload("HbA1c must be below 9.0% at screening.", section_path=["4 Eligibility"]),
    ]
    moved = reference_last(hits, lambda h: h, "What ALT level interrupts dosing?")
    assert moved == [hits[1], hits[3], hits[0], hits[2]]
    assert reference_last(hits, lambda h: h, "What does ULN stand for?") == hits
    assert asks_meaning("How is a serious adverse event defined?")
    assert asks_meaning("According to the 10-Q, what is SEC?")  # a bare term after "what is"
    assert not asks_meaning("What HbA1c excludes a patient?")
    assert not asks_meaning("What is the minimum time required between dose adjustments?")


def test_contents_printed_as_a_table_of_section_numbers_is_reference_a_numbered_list_is_not():
    numbers = ["9.11", "10", "10.1", "10.2", "10.3", "11", "11.1"]
    contents = table_html([["", ""]], [[n, f"Section title {n}"] for n in numbers])
    criteria = table_html([["No.", "Criterion"]], [[str(n), f"Criterion {n}"] for n in range(1, 9)])
    assert shaped_as_reference(contents)
    assert not shaped_as_reference(criteria)


def test_a_table_of_instrument_tags_is_evidence_not_a_list_of_acronyms():
    tags = [["WT-2013", "± 0.1 g"], ["FT-2070", "± 0.5 %"], ["CT-2127", "± 1 µS/cm"], ["PT-2184", "± 0.2 bar"]]
    tags += [["LT-2222", "± 2 mm"], ["TT-2301", "± 0.5 °C"], ["PH-2404", "± 0.05"]]
    assert not shaped_as_reference(table_html([["Instrument", "Tolerance"]], tags))


def test_a_documents_history_keeps_its_place_when_the_query_asks_about_its_amendments():
    history = _payload(
        table_html([["Version", "Date", "Changes"]], [["1.0", "02/03/2021", "First release"], ["2.0", "14/09/2022", "Amendment 1"]]),
        section_path=["Revision History"],
    )
    glossary = _payload(table_html([["Abbreviation", "Term"]], ABBREVIATIONS))
    answer = _payload("Amendment 1 followed the trial steering committee meeting.", section_path=["12 Protocol amendments"])
    hits = [history, glossary, answer]
    # asked about its versions: the history stays where the search ranked it; a glossary still goes last
    assert reference_last(hits, lambda h: h, "When was version 1.0 of the protocol released?") == [history, answer, glossary]
    assert reference_last(hits, lambda h: h, "Which meeting led to the changes in Amendment 1?") == [history, answer, glossary]
    # any other question: both go last, in their order
    assert reference_last(hits, lambda h: h, "What dose is given on Day 1?") == [answer, history, glossary]
    assert asks_history("What did the protocol revision change?")
    assert not asks_history("What changes in HbA1c from baseline are analysed?")
    assert not asks_history("How long does the natural history study follow patients?")
