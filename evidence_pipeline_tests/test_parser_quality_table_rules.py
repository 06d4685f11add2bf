"""The table-rules listing names every parsed table the unit builder does not keep as a table,
and by which rule, so a change to those rules can be read against a whole corpus."""

from __future__ import annotations

import shutil

from evidence_pipeline.evaluation.parser_quality.table_rules import main, table_rules
from evidence_pipeline.records import Table, TableCell
from evidence_pipeline_tests.docs import lnp_doc


def _grid(table_id: str, rows: list[list[str]], page: int) -> Table:
    cells = [TableCell(row=r, col=c, text=t) for r, row in enumerate(rows) for c, t in enumerate(row) if t]
    return Table(id=table_id, order=0, n_rows=len(rows), n_cols=max(map(len, rows)), cells=cells, page=page)


def test_each_table_taken_by_a_rule_is_named_with_its_rule():
    doc = lnp_doc()
    leaders = _grid("toc", [["1 Purpose ..........", "1"], ["2 Scope ..........", "1"], ["3 Procedure ..........", "2"]], 1)
    index = _grid("index", [["Statements of Operations", "2"], ["Balance Sheets", "3"], ["Notes", "4"]], 1)
    listed = _grid("list", [["•", "limited fulfillment infrastructure;"], ["•", "lower levels of credit card usage;"]], 2)
    doc = doc.model_copy(update={"tables": [leaders, index, listed, *doc.tables], "n_pages": 4})
    assert list(table_rules(doc)) == [
        ("contents", 1, ["1 Purpose ..........", "1"]),
        ("index", 1, ["Statements of Operations", "2"]),
        ("list", 2, ["•", "limited fulfillment infrastructure;"]),
    ]
    # past the document's last page, the same grid is a table of figures
    assert [rule for rule, _, _ in table_rules(doc.model_copy(update={"n_pages": 3}))] == ["contents", "list"]


def test_a_corpus_whose_tables_are_all_tables_lists_none(sample_corpus, tmp_path, capsys):
    for pdf in sorted(sample_corpus.glob("*.pdf"))[:2]:
        shutil.copy(pdf, tmp_path / pdf.name)
    assert main([str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "contents 0 index 0 list 0 in 2 files"
