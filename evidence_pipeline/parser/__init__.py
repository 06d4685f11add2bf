"""Document parsers: files in, ``ParsedDoc`` out. The only package that imports Docling.

Docling is imported lazily (inside ``DoclingParser``), so importing this package is cheap.
``make_parser`` gives the parser the pipeline uses: by default Docling in a worker process with
limits per document (``parser/worker.py``); ``isolation="inline"`` parses in the caller's process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from evidence_pipeline.parser.docling_parser import SUPPORTED_SUFFIXES, DoclingParser
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.settings import ParserSettings


class Parser(Protocol):
    name: str

    def parse(self, path: Path, doc_id: str | None = None) -> ParsedDoc:
        """Read one file; ``doc_id`` defaults to the file stem. Raises ``ParseError``."""
        ...


def make_parser(settings: ParserSettings | None = None) -> Parser:
    """The isolated (worker process) or inline parser that ``settings.isolation`` asks for;
    ``settings`` defaults to the environment's. Both have the same ``name`` and ``parse``."""
    settings = settings if settings is not None else ParserSettings.from_env()
    if settings.isolation == "inline":
        return DoclingParser(settings)
    from evidence_pipeline.parser.worker import WorkerParser

    return WorkerParser(settings)


__all__ = ["DoclingParser", "ParsedDoc", "Parser", "SUPPORTED_SUFFIXES", "make_parser"]
