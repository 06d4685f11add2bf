"""Table rendering: header paths, row sentences, HTML (markup in cells is text, never markup)."""

import re

from evidence_pipeline.records import Table, TableCell
from evidence_pipeline.tables import carry_down, column_paths, row_sentence, split_marker, table_html
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
        "<table><caption>Table 1: T&amp;C</caption><thead><tr><th>A</th><th colspan=\"2\">B</th></tr></thead>"
        "<tbody><tr><td>x&lt;y</td><td>1</td><td>2</td></tr></tbody></table>"
    )


MARKUP = ["<script>alert(1)</script>", "R&D <b>bold</b>", 'say "hi" & \'bye\'']


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
    assert "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>" in html
    assert "<td>R&amp;D &lt;b&gt;bold&lt;/b&gt;</td>" in html
    assert "<td>say &quot;hi&quot; &amp; &#x27;bye&#x27;</td>" in html
    assert "<td>&lt;i&gt;Row&lt;/i&gt; &amp; co</td>" in html
    # The only tags are the table's own.
    assert set(re.findall(r"</?([a-z]+)", html)) <= {"table", "caption", "thead", "tbody", "tr", "th", "td"}
    # Row sentences (what is embedded) keep the text as written.
    assert any("<script>alert(1)</script>" in s for s in unit.row_sentences)


def test_markup_in_header_and_caption_is_escaped():
    html = table_html([["<b>Item</b>", "<b>Item</b>", "Max & Min"]], [["a", "b", "c"]], caption="Limits <script>x</script>")
    assert '<th colspan="2">&lt;b&gt;Item&lt;/b&gt;</th><th>Max &amp; Min</th>' in html
    assert "<caption>Limits &lt;script&gt;x&lt;/script&gt;</caption>" in html
