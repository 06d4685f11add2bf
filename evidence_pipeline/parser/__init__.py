"""Document parsers: files in, ``ParsedDoc`` out. The only package that imports Docling.

Docling is imported lazily (inside ``DoclingParser``), so importing this package is cheap.
The port the core types against, ``Parser``, lives in ``evidence_pipeline.parser_port``.
"""

from __future__ import annotations

from evidence_pipeline.parser.docling_parser import DoclingParser, PdfThreads
from evidence_pipeline.parser_port import SUPPORTED_SUFFIXES, Parser
from evidence_pipeline.records import ParsedDoc

__all__ = ["DoclingParser", "ParsedDoc", "Parser", "PdfThreads", "SUPPORTED_SUFFIXES"]
