"""The command line the corpus listings share (``table_rules``, ``statements``): the files or
folders to read, and ``--cache``, the parse cache of ``evidence-pipeline eval --cache`` (the same
key: file bytes, parser and pipeline version), read instead of parsing again."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

from evidence_pipeline.corpus import expand_paths
from evidence_pipeline.records import ParsedDoc


def listed_corpus(module: str, doc: str, argv: list[str] | None) -> tuple[list[Path], Iterator[tuple[Path, ParsedDoc]]]:
    """The files the command line names, in a stable order, and each one's parse, read one at a
    time (a corpus is never held whole). ``module`` and ``doc`` name the command in its help."""
    ap = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--cache", type=Path, default=None, help="parse cache of `evidence-pipeline eval --cache`")
    args = ap.parse_args(argv)
    paths = sorted(expand_paths(args.paths), key=lambda p: (str(p.parent), p.name))

    def parses() -> Iterator[tuple[Path, ParsedDoc]]:
        from evidence_pipeline.evaluation.runner import parse_documents

        for path in paths:
            for parsed in parse_documents([path], with_docling=False, cache=args.cache, log=lambda message: None):
                yield path, parsed.parsed

    return paths, parses()
