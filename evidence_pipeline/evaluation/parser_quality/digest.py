"""What a parser change touched: one digest per document of everything the parser returns
(blocks, tables, cells, headings) but its version string and the path it was read from, so
two commits' parses of the same files can be compared line by line.

    python -m evidence_pipeline.evaluation.parser_quality.digest DIR_OR_PDF ... > before.txt
    (change the parser, or check out another commit)
    python -m evidence_pipeline.evaluation.parser_quality.digest DIR_OR_PDF ... > after.txt
    diff before.txt after.txt

Each line: the digest, the number of tables, the file name. A file that fails to parse prints
its error instead of a digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from evidence_pipeline.corpus import expand_paths
from evidence_pipeline.errors import ParseError
from evidence_pipeline.parser_port import Parser


def parse_digest(parser: Parser, path: Path) -> tuple[str, int]:
    """The digest of ``path``'s parse (its version string and the path it was read from left
    out) and its number of tables."""
    doc = parser.parse(path).model_dump(mode="json", exclude={"parser", "source"})
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16], len(doc["tables"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evidence_pipeline.evaluation.parser_quality.digest", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=Path)
    args = ap.parse_args(argv)
    from evidence_pipeline.parser import DoclingParser

    parser = DoclingParser()
    failed = 0
    for path in sorted(expand_paths(args.paths), key=lambda p: (str(p.parent), p.name)):
        try:
            digest, tables = parse_digest(parser, path)
        except ParseError as exc:
            failed += 1
            print(f"error {exc}")
            continue
        print(f"{digest} {tables:4d} {path.name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
