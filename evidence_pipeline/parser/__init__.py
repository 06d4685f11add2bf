"""Document parsers: files in, ``ParsedDoc`` out. The only package that imports Docling.

Docling is imported lazily (inside ``DoclingParser``), so importing this package is cheap.
``make_parser`` gives the parser the pipeline uses: by default Docling in a worker process with
limits per document (``parser/worker.py``); ``isolation="inline"`` parses in the caller's process.
The port the core types against, ``Parser``, lives in ``evidence_pipeline.parser_port``.
"""

from __future__ import annotations

from functools import lru_cache

from evidence_pipeline.parser.docling_parser import DoclingParser, PdfThreads
from evidence_pipeline.parser_port import SUPPORTED_SUFFIXES, Parser
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.settings import ParserSettings


def make_parser(settings: ParserSettings | None = None) -> Parser:
    """The isolated (worker process) or inline parser that ``settings.isolation`` asks for;
    ``settings`` defaults to the environment's. Both have the same ``name`` and ``parse``."""
    settings = settings if settings is not None else ParserSettings.from_env()
    if settings.isolation == "inline":
        return DoclingParser(settings)
    from evidence_pipeline.parser.worker import WorkerParser

    return WorkerParser(settings)


@lru_cache(maxsize=4)
def shared_parser(settings: ParserSettings) -> Parser:
    """One parser per process and settings (``make_parser``): Docling's pipeline, in its worker
    or here, is built once. The Dagster resource hands out this one, so ``evidence-pipeline
    ingest`` can start its worker before Dagster is even imported."""
    return make_parser(settings)


__all__ = ["DoclingParser", "ParsedDoc", "Parser", "PdfThreads", "SUPPORTED_SUFFIXES", "make_parser", "shared_parser"]
