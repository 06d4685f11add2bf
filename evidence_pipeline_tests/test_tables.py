"""Table rendering: markup in cells is text, never markup, in the parent's HTML."""

from evidence_pipeline.records import Table, TableCell
from evidence_pipeline.tables import table_html
from evidence_pipeline.units import build_units
from evidence_pipeline_tests.docs import lnp_doc

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
    import re

    assert set(re.findall(r"</?([a-z]+)", html)) <= {"table", "caption", "thead", "tbody", "tr", "th", "td"}
    # Row sentences (what is embedded) keep the text as written.
    assert any("<script>alert(1)</script>" in s for s in unit.row_sentences)


def test_markup_in_header_and_caption_is_escaped():
    html = table_html([["<b>Item</b>", "<b>Item</b>", "Max & Min"]], [["a", "b", "c"]], caption="Limits <script>x</script>")
    assert '<th colspan="2">&lt;b&gt;Item&lt;/b&gt;</th><th>Max &amp; Min</th>' in html
    assert "<caption>Limits &lt;script&gt;x&lt;/script&gt;</caption>" in html
