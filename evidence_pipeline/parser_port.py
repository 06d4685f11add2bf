"""The parser port: what the core asks of a parser, without importing one.

Core modules type against ``Parser``; ``evidence_pipeline.parser.DoclingParser`` is the
implementation (the only code that imports Docling). ``SUPPORTED_SUFFIXES`` is the one
list of file types: the corpus scan offers exactly what the parser accepts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from evidence_pipeline.records import ParsedDoc

# file suffix (lower case) -> the kind of document the parser reads it as
SUPPORTED_SUFFIXES: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".html": "html",
    ".htm": "html",
    ".md": "md",
    ".markdown": "md",
}


class Parser(Protocol):
    name: str  # names the parser and its version; part of the pipeline version

    def parse(self, path: Path, doc_id: str | None = None, pages: tuple[int, int] | None = None) -> ParsedDoc:
        """Read one file; ``doc_id`` defaults to the file stem; ``pages``: a 1-based inclusive
        page range of a PDF. Raises ``ParseError`` naming the file and the reason."""
        ...
