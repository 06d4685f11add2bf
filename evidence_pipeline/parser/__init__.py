"""Document parsers: files in, ``ParsedDoc`` out. The only package that imports Docling.

Docling is imported lazily (inside ``DoclingParser``), so importing this package is cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from evidence_pipeline.parser.docling_parser import SUPPORTED_SUFFIXES, DoclingParser
from evidence_pipeline.records import ParsedDoc


class Parser(Protocol):
    def parse(self, path: Path, doc_id: str | None = None) -> ParsedDoc:
        """Read one file; ``doc_id`` defaults to the file stem. Raises ``ParseError``."""
        ...


__all__ = ["DoclingParser", "ParsedDoc", "Parser", "SUPPORTED_SUFFIXES"]
