"""Which tables of a corpus are primary financial statements, as the index records them (the
payload key ``statement``), so a change to the parser's captions and headings or to
``financial_statements.statement_kind`` can be checked against every filing.

    python -m evidence_pipeline.evaluation.parser_quality.statements DIR_OR_PDF ... [--cache DIR]

One line per statement table (kind, file, page, its title: the caption, or the heading it sits
under, ``financial_statements.statement_title``), then one line per file that has some statements but not
all three kinds ("missing"), and a last line counting the tables of each kind and the files with
all three. ``--cache`` reads parses kept by ``evidence-pipeline eval --cache``.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator

from evidence_pipeline.evaluation.parser_quality.listing import listed_corpus
from evidence_pipeline.financial_statements import STATEMENT_KINDS, statement_kind, statement_title
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.units import build_units

KINDS = tuple(names[0] for names in STATEMENT_KINDS)


def statement_tables(doc: ParsedDoc) -> Iterator[tuple[str, int | None, str]]:
    """(kind, first page, title) of each table unit of ``doc`` that is a primary statement; the
    pieces of a split table count once."""
    seen: set[str] = set()
    for unit in build_units(doc):
        if unit.kind != "table" or unit.parent_id in seen:
            continue
        seen.add(unit.parent_id)
        title = statement_title(unit.caption, unit.section_path)
        kind = statement_kind(title)
        if kind:
            yield kind, (unit.pages or [None])[0], title or ""


def main(argv: list[str] | None = None) -> int:
    paths, parses = listed_corpus("evidence_pipeline.evaluation.parser_quality.statements", __doc__, argv)
    counts: Counter[str] = Counter()
    complete = 0
    missing: list[str] = []
    for path, doc in parses:
        found = set()
        for kind, page, title in statement_tables(doc):
            counts[kind] += 1
            found.add(kind)
            print(f"{kind:20s} {path.name}  p{page}  {title[:90]}")
        complete += found == set(KINDS)
        if found and found != set(KINDS):
            missing.append(f"missing  {path.name}: {', '.join(k for k in KINDS if k not in found)}")
    print("\n".join(missing))
    print(", ".join(f"{kind} {counts[kind]}" for kind in KINDS) + f"; all three in {complete} of {len(paths)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
