"""Which parsed tables the unit builder does not keep as tables: a table of contents
(``units.is_contents_table``) or a bulleted list read as a grid (``units.bulleted_list_items``),
one line per table, so a change to those rules can be checked against every table of a corpus.

    python -m evidence_pipeline.evaluation.parser_quality.table_rules DIR_OR_PDF ... [--cache DIR]

Each line: the rule, the file, the table's page, its first row. The rules: ``contents`` (dot
leaders or the word "contents"), ``index`` (a grid of entries and page numbers that only the
document's page count tells from a table, ``units._page_index``), ``list``. The last line counts
each rule. ``--cache`` reads parses kept by ``evidence-pipeline eval --cache`` (the same key: file
bytes, parser and pipeline version) instead of parsing again.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator

from evidence_pipeline.evaluation.parser_quality.listing import listed_corpus
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.units import bulleted_list_items, is_contents_table


def table_rules(doc: ParsedDoc) -> Iterator[tuple[str, int | None, list[str]]]:
    """(rule, page, first row) for each table of ``doc`` that ``build_units`` reads as something
    other than a table."""
    for table in doc.tables:
        first = next((row for row in table.grid() if any(c.strip() for c in row)), [])
        if is_contents_table(table, table.caption):
            yield "contents", table.page, first
        elif is_contents_table(table, table.caption, n_pages=doc.n_pages):
            yield "index", table.page, first
        elif bulleted_list_items(table):
            yield "list", table.page, first


def main(argv: list[str] | None = None) -> int:
    paths, parses = listed_corpus("evidence_pipeline.evaluation.parser_quality.table_rules", __doc__, argv)
    counts: Counter[str] = Counter()
    for path, doc in parses:
        for rule, page, first in table_rules(doc):
            counts[rule] += 1
            print(f"{rule:8s} {path.name}  p{page}  {' | '.join(c for c in first if c.strip())[:100]}")
    print(" ".join(f"{rule} {counts[rule]}" for rule in ("contents", "index", "list")) + f" in {len(paths)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
