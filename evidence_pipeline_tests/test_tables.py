"""Table rendering: header paths, row sentences, HTML (markup in cells is text, never markup), Markdown."""

import html as _html
import re

from evidence_pipeline.embedding import TokenCounter
from evidence_pipeline.records import Table, TableCell
from evidence_pipeline.tables import carry_down, column_paths, markdown_tables, row_sentence, split_marker, table_html, text_row
from evidence_pipeline.units import build_units
from evidence_pipeline_tests.docs import lnp_doc


def test_column_paths_name_vertical_spans_once():
    header = [["Stream", "Flow", "Flow"], ["Stream", "Min", "Max"]]
    assert column_paths(header, 3) == ["Stream", "Flow / Min", "Flow / Max"]


def test_row_sentence_skips_empty_cells_and_joins_row_headers():
    paths = ["Group", "Item", "Value", "Unit"]
    assert row_sentence(["Buffers", "PBS", "7.4", ""], paths, 2) == "Buffers / PBS | Value: 7.4"


def test_carry_down_fills_spanning_row_headers():
    rows = [["Buffers", "PBS", "7.4"], ["", "Tris", "8.0"], ["", "", ""]]
    assert carry_down(rows, 1) == [["Buffers", "PBS", "7.4"], ["Buffers", "Tris", "8.0"], ["", "", ""]]


def test_split_marker():
    assert split_marker("2.4*") == ("2.4", "*")
    assert split_marker("5 ᵃ") == ("5", "ᵃ")
    assert split_marker("USP <85>") == ("USP <85>", None)


def test_table_html_colspans_and_escaping():
    html = table_html([["A", "B", "B"]], [["x<y", "1", "2"]], caption="Table 1: T&C")
    assert html == (
        '<table><caption>Table 1: T&C</caption><thead><tr><th>A</th><th colspan="2">B</th></tr></thead>'
        "<tbody><tr><td>x&lt;y</td><td>1</td><td>2</td></tr></tbody></table>"
    )


MARKUP = ["<script>alert(1)</script>", "R&D <b>bold</b>", "say \"hi\" & 'bye'"]


def _doc_with_markup_cells():
    doc = lnp_doc()
    [table] = doc.tables
    cells = list(table.cells)
    body = [c for c in cells if c.row >= table.header_rows and c.col >= 1][: len(MARKUP)]
    for cell, text in zip(body, MARKUP):
        cells[cells.index(cell)] = cell.model_copy(update={"text": text})
    cells.append(TableCell(row=table.n_rows, col=0, text="<i>Row</i> & co", row_header=True))
    table = Table(**{**table.model_dump(), "cells": [c.model_dump() for c in cells], "n_rows": table.n_rows + 1})
    return doc.model_copy(update={"tables": [table]})


def test_markup_in_cells_is_escaped_in_the_parent_text():
    [unit] = [u for u in build_units(_doc_with_markup_cells()) if u.kind == "table"]
    html = unit.table_html
    assert html in unit.text  # the parent's text carries this HTML
    assert "<script>" not in unit.text and "<b>" not in html and "<i>" not in html
    assert "<td>&lt;script>alert(1)&lt;/script></td>" in html
    assert "<td>R&D &lt;b>bold&lt;/b></td>" in html
    assert "<td>say \"hi\" & 'bye'</td>" in html
    assert "<td>&lt;i>Row&lt;/i> & co</td>" in html
    # Unescaped, every cell reads as written.
    assert {_html.unescape(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", html)} >= {*MARKUP, "<i>Row</i> & co"}
    # The only tags are the table's own.
    assert set(re.findall(r"</?([a-z]+)", html)) <= {"table", "caption", "thead", "tbody", "tr", "th", "td"}
    # Row sentences (what is embedded) keep the text as written.
    assert any("<script>alert(1)</script>" in s for s in unit.row_sentences)


def test_markup_in_header_and_caption_is_escaped():
    html = table_html([["<b>Item</b>", "<b>Item</b>", "Max & Min"]], [["a", "b", "c"]], caption="Limits <script>x</script>")
    assert '<th colspan="2">&lt;b>Item&lt;/b></th><th>Max & Min</th>' in html
    assert "<caption>Limits &lt;script>x&lt;/script></caption>" in html


def test_html_text_escapes_only_what_html_would_misread():
    """A table's HTML keeps the printed words ("R&D", "> 470 msec", "< 6 months", "USP <87>",
    "shareholders' equity"): a search of the parent's text for them finds them. Only an "&"
    that would begin a character reference and a "<" that would open a tag are escaped, and
    unescaping gives the text back."""
    from evidence_pipeline.tables import html_text

    for text in ("R&D", "AT&T", "> 470 msec", "< 6 months", "USP <87>", "shareholders' equity", 'say "hi"'):
        assert html_text(text) == text
    assert html_text("a<b") == "a&lt;b" and html_text("</td>") == "&lt;/td>"
    assert html_text("&amp; &copy 2023 &#169; &notin;") == "&amp;amp; &amp;copy 2023 &amp;#169; &amp;notin;"
    for text in ("R&D <b>x</b> &lt; &copy2023 &#x27; <!-- c --> <?p?>", *MARKUP):
        assert _html.unescape(html_text(text)) == text
        assert not re.search(r"<[A-Za-z/!?]", html_text(text))


def test_key_value_tables_are_told_from_tables_with_a_header_row():
    from evidence_pipeline.tables import is_key_value

    assert is_key_value(
        [["Study Title", "A natural history study of CMT4J"], ["Sponsor", "Elpida Therapeutics"], ["Phase", "Observational"]]
    )
    assert is_key_value([["ADL", "Activities of Daily Living"], ["AE", "adverse event"], ["ALT", "alanine transaminase"]])
    assert is_key_value([["Company Name:", "Lutronic, Inc."], ["Address:", "19 Fortune Drive"], ["", "Billerica, MA"]])
    # a short header over long definitions, words over numbers, labels longer than values
    assert not is_key_value([["Descriptor", "Definition"], ["Unrelated", " ".join(["word"] * 30)], ["Possible", " ".join(["word"] * 25)]])
    assert not is_key_value([["Parameter", "Value"], ["Temperature", "25"], ["Pressure", "1.2"]])
    assert not is_key_value([["Sponsor Statement and Signature Page", "2"], ["Contact Information", "2"], ["Compliance", "4"]])
    assert not is_key_value([["a", "b", "c"], ["d", "e", "f"]])


def test_a_field_and_its_value_read_as_one_phrase():
    assert row_sentence(["Sponsor:", "Elpida Therapeutics"], ["", ""], 1) == "Sponsor: Elpida Therapeutics"
    assert row_sentence(["Sponsor", "Elpida"], ["Field", "Value"], 1) == "Sponsor | Value: Elpida"


def test_superscript_letter_markers_on_row_labels_resolve():
    from evidence_pipeline.tables import footnote_map

    notes = footnote_map(["a Temperature and pulse.", "m Subjects 2 to 18 years", "*Video capture is used."])
    assert notes == {"a": "Temperature and pulse.", "m": "Subjects 2 to 18 years", "*": "Video capture is used."}
    assert split_marker("PedsQLᵐ") == ("PedsQL", "ᵐ")
    assert (
        row_sentence(["Vital Signsᵃ", "X"], ["Visit", "Baseline"], 1, notes) == "Vital Signs (note: Temperature and pulse.) | Baseline: X"
    )


def test_notes_sharing_a_paragraph_split_at_the_expected_markers():
    from evidence_pipeline.table_notes import split_notes, table_marks

    marks = table_marks([["Vital Signsᵃ", "X"], ["Exam ᵇ", ""], ["Grip ᶜ", "X"]])
    assert marks == ["a", "b", "c"]
    text = "a Pulse taken seated, a cuff on the arm. b Heart and lungs c Dominant hand"
    assert split_notes(text, marks) == ["a Pulse taken seated, a cuff on the arm.", "b Heart and lungs", "c Dominant hand"]
    assert split_notes("Pulse taken seated", marks) == []


def test_a_row_of_text_is_no_row_of_heads():
    carried = "11. Subjects unwilling or unable to adhere to all study requirements for treatment and follow-up."
    assert text_row(["", carried])
    assert text_row(["(a)", "the Plan is established voluntarily by the Company, it is discretionary in nature and may be amended"])
    assert not text_row(["", "Three Months Ended September 30, 2022"])
    assert not text_row(["Parameter", "Value"])
    # several heads, one of them a long merged group head: still heads
    merged = "By remaining maturity as of December 31, 2022 Over 3 months but within 6 months"
    assert not text_row(["(Millions)", "3 months or less", merged, "Over 6 months but within 12 months", "Total"])


def test_markdown_tables_read_the_html_as_rows_of_cells():
    table = table_html([["Stream", "Flow (mL/min)", "Flow (mL/min)"], ["Stream", "Min", "Max"]],
                       [["Aqueous <1", "0.2", "R&D"], ["Ethanol\nphase", "", "12"]], caption="Table 1: Flow limits")  # fmt: skip
    text = f"Caption: Table 1: Flow limits\nAbove.\n{table}\n* Note."
    assert markdown_tables(text) == (
        "Caption: Table 1: Flow limits\nAbove.\n"
        "| Stream | Flow (mL/min) |  |\n| Stream | Min | Max |\n|---|---|---|\n"
        "| Aqueous <1 | 0.2 | R&D |\n| Ethanol phase |  | 12 |\n* Note."
    )
    # a caption the text does not name already is kept; text without a table is left alone
    assert markdown_tables(table).startswith("Table 1: Flow limits\n| Stream |")
    assert markdown_tables("Section text, no table.") == "Section text, no table."
    # a part a focused table kept no rows of keeps its header, without the rule under it
    assert markdown_tables(table_html([["A", "B"]], [])) == "| A | B |"


def test_markdown_tables_keep_every_cell_in_fewer_word_pieces():
    [unit] = [u for u in build_units(lnp_doc(40)) if u.kind == "table"]
    md = markdown_tables(unit.text)
    assert "<t" not in md
    for row in unit.rows:
        assert "| " + " | ".join(row) + " |" in md
    count = TokenCounter(None).count
    assert count(md) < 0.75 * count(unit.text)
