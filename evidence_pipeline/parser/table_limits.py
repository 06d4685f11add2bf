"""Bounds on table size in a parsed document: over-long cells and over-wide tables are cut, with a warning.

Why cut rather than fail: the rest of the document is good, and a table's first columns and the
start of a long cell still answer questions. Why cut at all: every later stage renders each table
whole (HTML, row sentences, token counts): a cell of megabytes stalls splitting and puts a parent
as large into the store, and a table of thousands of columns makes row sentences no embedding
model reads.
"""

from __future__ import annotations

from evidence_pipeline.records import ParsedDoc, Table

TRUNCATION_MARK = " …"


def limit_tables(doc: ParsedDoc, max_cell_chars: int, max_cols: int) -> ParsedDoc:
    """``doc`` with every cell at most ``max_cell_chars`` long and every table at most ``max_cols``
    wide (the first columns kept); one warning per table that was cut."""
    tables, warnings = [], []
    for table in doc.tables:
        limited, notes = _limit_table(table, max_cell_chars, max_cols)
        tables.append(limited)
        if notes:
            where = f"table {table.id}" + (f" ({table.caption[:60]})" if table.caption else "")
            warnings.append(f"{where}: {'; '.join(notes)}")
    if not warnings:
        return doc
    return doc.model_copy(update={"tables": tables, "warnings": [*doc.warnings, *warnings]})


def _limit_table(table: Table, max_cell_chars: int, max_cols: int) -> tuple[Table, list[str]]:
    notes: list[str] = []
    cells = table.cells
    n_cols = table.n_cols
    if n_cols > max_cols:
        cells = [
            c if c.col + c.col_span <= max_cols else c.model_copy(update={"col_span": max_cols - c.col}) for c in cells if c.col < max_cols
        ]
        notes.append(f"{n_cols} columns, only the first {max_cols} kept")
        n_cols = max_cols
    long = [c for c in cells if len(c.text) > max_cell_chars]
    if long:
        longest = max(len(c.text) for c in long)
        cut = max(max_cell_chars - len(TRUNCATION_MARK), 0)
        cells = [
            c.model_copy(update={"text": c.text[:cut].rstrip() + TRUNCATION_MARK}) if len(c.text) > max_cell_chars else c for c in cells
        ]
        notes.append(f"{len(long)} cell(s) cut to {max_cell_chars} characters (longest {longest:,})")
    if not notes:
        return table, notes
    return table.model_copy(update={"cells": cells, "n_cols": n_cols}), notes
