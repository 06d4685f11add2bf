"""What the rule models share within one conversion, owned by that conversion.

Docling runs the layout and table stages on their own threads and hands each a
``ConversionResult``; the state that passes between them (the document's body text size,
the title found on the first page, each page's decoded words, rulings and table grids) is
attached to that result, so two conversions never see each other's state and one result
carries its title back to the parser.

The body text size and the running lines (text repeated in the top or bottom band of many
pages) are computed once, before the first page is laid out, from every page the
conversion converts (``document_lines_of``): a page's labels therefore depend only on the
document's bytes and the page range, never on the order in which Docling's threads
decode and batch the pages.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from io import BytesIO

from docling.datamodel.document import ConversionResult
from docling_core.types.doc import CoordOrigin

from evidence_pipeline.parser.geometry import Rules, Span
from evidence_pipeline.parser.grid import Grid
from evidence_pipeline.parser.page_content import cell_text
from evidence_pipeline.parser.page_layout import RUNNING_BAND, most_common_size, running_key, size_key
from evidence_pipeline.parser.table_finder import BoxKey
from evidence_pipeline.work import CLOCK, WORK

_ATTRIBUTE = "_evidence_pipeline_state"  # the one attribute this package sets on a ConversionResult


@dataclass
class PageWork:
    """What the layout stage decoded and built for a page, handed to the table stage."""

    words: list[Span]
    rules: Rules
    grids: dict[BoxKey, Grid]


@dataclass(frozen=True)
class DocumentLines:
    """What the pre-pass reads from every page: the body text size (None: no text found up
    front; each page then uses its own) and the running lines (None: too few pages to tell)."""

    body_size: float | None
    running: frozenset[str] | None


@dataclass
class ConversionState:
    """``body`` is a future: the pre-pass runs beside Docling's own page decoding and
    the layout stage waits for it at its first page."""

    body: Future[DocumentLines]
    title: str | None = None
    warnings: list[str] = field(default_factory=list)
    ocr_seconds: dict[int, float] = field(default_factory=dict)  # page -> time OCR took (pages without a text layer)
    _page_work: dict[int, PageWork] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def lines(self) -> DocumentLines:
        try:
            return self.body.result()
        except Exception as exc:  # the pipeline's own backend reports unreadable files
            message = f"body text size taken per page: {type(exc).__name__}: {exc}"
            with self._lock:
                if message not in self.warnings:
                    self.warnings.append(message)
            return DocumentLines(None, None)

    @property
    def body_size(self) -> float | None:
        return self.lines.body_size

    @property
    def running(self) -> frozenset[str] | None:
        return self.lines.running

    def keep_page_work(self, page_no: int, work: PageWork) -> None:
        with self._lock:
            self._page_work[page_no] = work

    def take_page_work(self, page_no: int) -> PageWork | None:
        with self._lock:
            return self._page_work.pop(page_no, None)

    def warn_once(self, message: str) -> None:
        with self._lock:
            if message not in self.warnings:
                self.warnings.append(message)

    def scanned(self, page_no: int, seconds: float) -> None:
        with self._lock:
            self.ocr_seconds[page_no] = seconds

    def found_title(self, text: str) -> None:
        with self._lock:
            if self.title is None:
                self.title = text

    def release_pages(self) -> None:
        """Drop page work no stage took (pages that failed or had no table stage)."""
        with self._lock:
            self._page_work.clear()


def attach(conv_res: ConversionResult, state: ConversionState) -> None:
    # An undeclared underscore attribute is a plain instance attribute on a pydantic model.
    setattr(conv_res, _ATTRIBUTE, state)


def state_of(conv_res: ConversionResult) -> ConversionState | None:
    return getattr(conv_res, _ATTRIBUTE, None)


def start_body_size(conv_res: ConversionResult, page_nos: list[int]) -> Future[DocumentLines]:
    """``document_lines_of`` on a thread of its own; the future holds its result or its error."""
    future: Future[DocumentLines] = Future()

    def run() -> None:
        try:
            with CLOCK.cpu("parse.prepass", thread=True):
                lines = document_lines_of(conv_res, page_nos)
            future.set_result(lines)
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="body-size", daemon=True).start()
    return future


def document_lines_of(conv_res: ConversionResult, page_nos: list[int]) -> DocumentLines:
    """The text height carrying the most characters over ``page_nos`` of the document, and
    the lines (numbers aside) printed in the top or bottom band of more than half of its
    pages (at least three): its running headers and footers.

    A separate docling-parse pass over the same bytes, text lines only (no words, shapes or
    images): about a tenth of the conversion's time. Its lines are the ones the layout
    stage reads (same decoder and font settings), so the size is in the layout's units.
    """
    from docling_parse.pdf_parser import ContentConfig, ContentLevel, DecodeConfig, DoclingPdfParser

    backend = conv_res.input._backend
    source = backend.path_or_stream
    if isinstance(source, BytesIO):
        source = BytesIO(source.getvalue())  # the backend's stream stays where it was
    options = backend.options
    secret = getattr(options, "password", None)  # PDF backends only
    password = secret.get_secret_value() if secret else None
    decode = DecodeConfig(enforce_same_font=getattr(options, "enforce_same_font", True))
    lines_only = ContentConfig(
        char_cells_content_level=ContentLevel.COMPUTE,
        word_cells_content_level=ContentLevel.SKIP,
        line_cells_content_level=ContentLevel.COMPUTE_AND_MATERIALIZE,
        shapes_content_level=ContentLevel.SKIP,
        bitmaps_content_level=ContentLevel.SKIP,
    )
    doc = DoclingPdfParser(loglevel="fatal").load(source, lazy=True, password=password, decode_config=decode)
    weights: dict[float, int] = {}
    banded: dict[tuple[str, str], set[int]] = {}
    try:
        for page_no in page_nos:
            page = doc.get_page(page_no, content_config=lines_only)
            WORK.count("parse.prepass_pages")
            height = page.dimension.height
            for cell in page.textline_cells:
                text = cell_text(cell)
                if not text:
                    continue
                box = cell.rect.to_bounding_box()
                weights[size_key(box.height)] = weights.get(size_key(box.height), 0) + len(text)
                top = height - box.t if box.coord_origin == CoordOrigin.BOTTOMLEFT else box.t
                bottom = top + box.height
                where = "top" if bottom < RUNNING_BAND * height else "bottom" if top > (1 - RUNNING_BAND) * height else None
                if where and any(ch.isalpha() for ch in text):
                    banded.setdefault((where, running_key(text)), set()).add(page_no)
            doc.unload_pages((page_no, page_no + 1))
    finally:
        doc.unload()
    need = max(3, len(page_nos) // 2 + 1)  # more than half: a table's repeated column heads stay body
    running = frozenset(key for (_, key), pages in banded.items() if len(pages) >= need) if len(page_nos) >= 3 else None
    return DocumentLines(most_common_size(weights), running)
