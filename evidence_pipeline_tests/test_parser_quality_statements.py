"""The statements listing names every table the index records as a primary financial statement,
and the files that lack one, so a change to captions, headings or statement names can be read
against a whole corpus."""

from __future__ import annotations

import shutil

import pytest

from evidence_pipeline.evaluation.parser_quality.statements import main, statement_tables
from evidence_pipeline.records import Table, TableCell, TextBlock
from evidence_pipeline_tests.docs import lnp_doc


def _statement(table_id: str, caption: str | None, page: int, order: int) -> Table:
    rows = [["", "2023"], ["Total net sales", "117,154"], ["Total operating expenses", "14,316"]]
    cells = [TableCell(row=r, col=c, text=t) for r, row in enumerate(rows) for c, t in enumerate(row) if t]
    return Table(id=table_id, order=order, n_rows=len(rows), n_cols=2, cells=cells, page=page, caption=caption)


def test_each_statement_is_listed_with_its_kind_and_title():
    doc = lnp_doc()
    heading = TextBlock(id="h-bs", label="section_header", text="Consolidated Condensed Balance Sheets", page=3, level=1, order=21)
    tables = [
        _statement("ops", "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)", 2, 20),
        _statement("bs", None, 3, 22),  # its title read as a heading
        _statement("oci", "Consolidated Statements of Comprehensive Income", 3, 23),  # no primary statement
    ]
    doc = doc.model_copy(update={"tables": [*doc.tables, *tables], "blocks": [*doc.blocks, heading], "n_pages": 3})
    assert list(statement_tables(doc)) == [
        ("income statement", 2, "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)"),
        ("balance sheet", 3, "Consolidated Condensed Balance Sheets"),
    ]


def test_a_corpus_without_statements_lists_none(sample_corpus, tmp_path, capsys):
    for pdf in sorted(sample_corpus.glob("*.pdf"))[:2]:
        shutil.copy(pdf, tmp_path / pdf.name)
    assert main([str(tmp_path)]) == 0
    assert (
        capsys.readouterr().out.splitlines()[-1] == "income statement 0, balance sheet 0, cash flow statement 0; all three in 0 of 2 files"
    )


def test_a_real_filing_lists_its_three_statements(corpora, tmp_path, capsys):
    pdf = corpora / "sec-10q-dev" / "pdfs" / "2022 Q3 MSFT.pdf"
    if not pdf.is_file():
        pytest.skip("shared corpora not present")
    from evidence_pipeline.parser import DoclingParser

    listed = list(statement_tables(DoclingParser().parse(pdf, pages=(3, 6))))
    # titled "INCOME STATEMENTS", "BALANCE SHEETS", "CASH FLOWS STATEMENTS"; not "COMPREHENSIVE INCOME STATEMENTS"
    assert [(kind, page) for kind, page, _ in listed] == [("income statement", 3), ("balance sheet", 5), ("cash flow statement", 6)]
