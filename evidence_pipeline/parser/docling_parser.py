"""The default parser: Docling for every format, weight-free rule models for PDF layout and tables."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from evidence_pipeline.errors import ParseError
from evidence_pipeline.parser.convert import docling_to_parsed
from evidence_pipeline.parser.table_limits import limit_tables
from evidence_pipeline.parser_port import SUPPORTED_SUFFIXES
from evidence_pipeline.records import ParsedDoc, sha256_file
from evidence_pipeline.settings import ParserSettings
from evidence_pipeline.work import CLOCK, WORK

MAX_BYTES = 500 * 1024 * 1024

_log = logging.getLogger(__name__)


def _docling_version() -> str:
    try:
        return version("docling-slim")
    except Exception:  # the full "docling" distribution ships the same modules
        return version("docling")


@dataclass(frozen=True)
class PdfThreads:
    """How Docling spreads one PDF conversion over threads. The output does not depend on
    these (a test parses with other values and compares); only the speed does."""

    parser_threads: int = 2  # docling-parse threads decoding pages
    batch_size: int = 4  # pages per call of the layout and table stages


class DoclingParser:
    """Parses PDF, DOCX, HTML and Markdown into a ParsedDoc.

    One DocumentConverter per instance, built on first use and reused: Docling keeps its
    pipelines (and any models) cached inside it, so they load once per process.
    """

    def __init__(self, settings: ParserSettings = ParserSettings(), threads: PdfThreads = PdfThreads()):
        self.settings = settings
        self.threads = threads
        route = "ml" if settings.docling_artifacts else "rules+ocr" if settings.ocr == "auto" else "rules"
        self.name = f"docling-{_docling_version()}+{route}"
        self._converter = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ build
    def _build_converter(self):
        from docling.datamodel.base_models import InputFormat
        from docling.datamodel.pipeline_options import HeadingHierarchyOptions, PdfPipelineOptions
        from docling.document_converter import DocumentConverter, PdfFormatOption

        from evidence_pipeline.parser import docling_patches

        docling_patches.initialisms_are_not_numbering()
        heading = HeadingHierarchyOptions(enabled=True)
        if self.settings.docling_artifacts:
            # Docling's own layout model and TableFormer from pre-downloaded weights.
            options = PdfPipelineOptions(
                artifacts_path=self.settings.docling_artifacts,
                do_ocr=False,
                do_table_structure=True,
                heading_hierarchy_options=heading,
                generate_parsed_pages=True,
                document_timeout=self.settings.timeout_s,
            )
            pdf = PdfFormatOption(pipeline_options=options)
        else:
            from evidence_pipeline.parser.pdf_plugins import (
                RuleLayoutOptions,
                RulePdfPipeline,
                RuleTableStructureOptions,
                backend_options,
            )

            options = PdfPipelineOptions(
                layout_batch_size=self.threads.batch_size,
                table_batch_size=self.threads.batch_size,
                # Docling's OCR stage runs after layout; the rule layout reads OCR text itself (see ``ocr``)
                do_ocr=False,
                layout_options=RuleLayoutOptions(ocr=self.settings.ocr),
                table_structure_options=RuleTableStructureOptions(),
                heading_hierarchy_options=heading,
                # the heading-level stage reads font styles from the parsed pages
                generate_parsed_pages=True,
                document_timeout=self.settings.timeout_s,
            )
            pdf = PdfFormatOption(
                pipeline_cls=RulePdfPipeline, pipeline_options=options, backend_options=backend_options(self.threads.parser_threads)
            )
        return DocumentConverter(
            allowed_formats=[InputFormat.PDF, InputFormat.DOCX, InputFormat.HTML, InputFormat.MD],
            format_options={InputFormat.PDF: pdf},
        )

    @property
    def converter(self):
        with self._lock:
            if self._converter is None:
                self._converter = self._build_converter()
            return self._converter

    # ------------------------------------------------------------------ parse
    def parse(self, path: Path, doc_id: str | None = None, pages: tuple[int, int] | None = None) -> ParsedDoc:
        """``pages``: only this 1-based, inclusive page range of a PDF (page numbers stay those
        of the file; ``n_pages`` counts the pages converted)."""
        with CLOCK.cpu("parse"):
            return self._parse(Path(path), doc_id, pages)

    def _parse(self, path: Path, doc_id: str | None, pages: tuple[int, int] | None) -> ParsedDoc:
        kind = self._check(path)
        WORK.count("parse.documents")
        warnings: list[str] = []
        if kind == "pdf":
            warnings += _check_pdf(path, self.settings.max_pages, ocr=self.settings.ocr == "auto" and not self.settings.docling_artifacts)
        try:
            extra = {"page_range": pages} if pages is not None and kind == "pdf" else {}
            result = self.converter.convert(
                path, raises_on_error=False, max_num_pages=self.settings.max_pages, max_file_size=MAX_BYTES, **extra
            )
        except ParseError:
            raise
        except Exception as exc:  # Docling raises many types; callers get one
            raise ParseError(str(path), f"{kind} could not be converted: {type(exc).__name__}: {exc}") from exc
        status = getattr(result.status, "value", str(result.status))
        errors = [e.error_message for e in result.errors]
        if status not in ("success", "partial_success") or result.document is None:
            reason = "; ".join(errors[:3]) or f"conversion status {status}"
            raise ParseError(str(path), f"{kind} could not be converted: {reason}")
        if status == "partial_success":
            warnings.append(f"partial conversion: {'; '.join(errors[:3]) or 'some pages failed'}")
        title_hint = None
        if kind == "pdf" and not self.settings.docling_artifacts:
            from evidence_pipeline.parser.conversion_state import state_of

            state = state_of(result)
            if state is not None:
                title_hint = state.title
                warnings += state.warnings
                if state.ocr_seconds:
                    warnings.append(ocr_note(state.ocr_seconds))
                    _log.info("%s: OCR took %.1f s", path.name, sum(state.ocr_seconds.values()))
        with CLOCK.cpu("parse.convert", thread=True):
            doc = self._read(result.document, path, doc_id, kind, title_hint, warnings)
        if kind == "pdf" and not doc.blocks and not doc.tables:
            unavailable = [w for w in doc.warnings if w.startswith("OCR unavailable")]
            reason = "OCR is off" if "rules+ocr" not in self.name else unavailable[0] if unavailable else "OCR found no text either"
            doc = doc.model_copy(update={"warnings": [*doc.warnings, f"no text layer: needs OCR (scanned PDF; {reason})"]})
        return limit_tables(doc, self.settings.max_cell_chars, self.settings.max_table_cols)

    def _read(self, document, path: Path, doc_id: str | None, kind: str, title_hint: str | None, warnings: list[str]) -> ParsedDoc:
        """Docling's document as a ParsedDoc (headings levelled, tables read), dashes as printed."""
        try:
            doc = docling_to_parsed(
                document,
                doc_id=doc_id or path.stem,
                source=str(path),
                content_hash=sha256_file(str(path)),
                parser=self.name,
                title_hint=title_hint,
                number_levels=kind == "pdf",
                warnings=warnings,
            )
        except Exception as exc:
            raise ParseError(str(path), f"converted document could not be read: {type(exc).__name__}: {exc}") from exc
        if kind == "pdf":
            from evidence_pipeline.parser.dashes import page_texts, restore_dashes_in
            from evidence_pipeline.parser.spaces import restore_spaces_in

            try:
                texts = page_texts(doc, path)
                doc = restore_spaces_in(restore_dashes_in(doc, texts), texts)
            except Exception as exc:  # cosmetic: never fail a document over its dashes and spaces
                doc = doc.model_copy(update={"warnings": [*doc.warnings, f"dashes and spaces not restored: {exc}"]})
        return doc

    @staticmethod
    def _check(path: Path) -> str:
        kind = SUPPORTED_SUFFIXES.get(path.suffix.lower())
        if kind is None:
            raise ParseError(str(path), f"unsupported file type {path.suffix or '(none)'!r}; supported: {sorted(SUPPORTED_SUFFIXES)}")
        if not path.is_file():
            raise ParseError(str(path), "file not found")
        size = path.stat().st_size
        if size == 0:
            raise ParseError(str(path), "empty file (0 bytes)")
        if size > MAX_BYTES:
            raise ParseError(str(path), f"file too large ({size} bytes > {MAX_BYTES})")
        if kind == "docx":
            with open(path, "rb") as fh:
                if fh.read(4) != b"PK\x03\x04":
                    raise ParseError(str(path), "not a DOCX file (no ZIP signature)")
        return kind


def ocr_note(seconds: dict[int, float]) -> str:
    """One line naming the pages OCR read (runs of pages as ranges); no timing, so that the
    same bytes give the same document."""
    pages = sorted(seconds)
    runs: list[list[int]] = []
    for n in pages:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    named = ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
    return f"read by OCR (no usable text layer): page{'s' if len(pages) > 1 else ''} {named}"


def _check_pdf(path: Path, max_pages: int, ocr: bool = False) -> list[str]:
    """Reject what Docling would choke on, with a reason a person can act on."""
    import pypdfium2 as pdfium

    with open(path, "rb") as fh:
        head = fh.read(1024)
    if b"%PDF-" not in head:
        raise ParseError(str(path), "not a PDF (no %PDF- header)")
    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        msg = str(exc)
        if "password" in msg.lower():
            raise ParseError(str(path), "encrypted PDF (password required)") from exc
        raise ParseError(str(path), f"corrupt PDF: {msg}") from exc
    try:
        n = len(pdf)
        if n == 0:
            raise ParseError(str(path), "PDF has no pages")
        if n > max_pages:
            raise ParseError(str(path), f"PDF has {n} pages (limit {max_pages})")
        try:
            WORK.count("parse.pdfium_text_pages", min(n, 3))
            text_chars = sum(pdf[i].get_textpage().count_chars() for i in range(min(n, 3)))
        except pdfium.PdfiumError:
            text_chars = 1
        return [] if text_chars or ocr else ["first pages carry no text layer (scanned PDF? OCR is off)"]
    finally:
        pdf.close()
