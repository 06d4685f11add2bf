"""Text for pages without a usable text layer: the page rendered and read by RapidOCR.

The models ship inside the ``rapidocr`` wheel (PP-OCRv6 detection and recognition as ONNX
files in ``rapidocr/models``): nothing is downloaded, and the engine is told the paths of
those files so no download code runs. RapidOCR's per-line orientation classifier is not
used, as it can turn sound lines of an upright scan over; the page's orientation is decided
once per page instead (a page on its side is turned upright; a page read with low confidence is
also read upside down).

Docling's own OCR stage runs after layout (it refines the layout model's clusters), but the
rule layout reads text to find its regions; so OCR is a source of page text *inside* the
layout stage: a page whose text layer is usable costs one pass over its cells; a page
without one is rendered, read, and its OCR lines and words enter the same layout and
table rules as docling-parse's cells (top-left origin, PDF points), with rulings found in
the pixels (``scan_rules``). A page turned upright keeps its boxes inside the page's own
box (one scale for both axes), so the rules see lines across; a slightly tilted page is
levelled for its rulings and its boxes turned with it.
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from docling_core.types.doc.page import TextCell

from evidence_pipeline.parser.geometry import Rules
from evidence_pipeline.parser.ocr_cells import MIN_SCORE, Frame, ocr_cells, quads_of
from evidence_pipeline.parser.scan_rules import image_rules
from evidence_pipeline.work import CLOCK, WORK

if TYPE_CHECKING:
    from rapidocr import RapidOCR

RENDER_SCALE = 2.0  # 144 dpi: 10 pt text is 20 px high, plenty for the recognizer's 48 px lines
OCR_THREADS = 2  # fixed, so the ONNX arithmetic (and the text) never depends on the machine
MIN_TEXT_CHARS = 20  # fewer letters and digits than this on a page: no usable text layer
MIN_READABLE_SHARE = 0.5  # below this share of readable characters, the text layer is garbage
MIN_SKEW_DEGREES = 0.1  # a page tilted less than this is read as it is
UPSIDE_DOWN_SCORE = 0.75  # a page read with less mean confidence is also read turned over
_UNMAPPED = re.compile(r"GLYPH<[^>]*>|/uni[0-9A-Fa-f]{4,6}|\ufffd|[\ue000-\uf8ff]")
_INK_LEVEL = 160  # grey level under which a pixel is ink (blank-page test)
_MIN_INK_SHARE = 0.001


def has_text_layer(cells) -> bool:
    """Whether a page's text cells carry readable text: enough letters and digits, and most
    of the printed characters mapped (docling-parse writes unmapped glyphs as ``GLYPH<..>``).
    Punctuation counts neither way: the dot leaders of a table of contents outnumber its
    letters, and the page is still born digital. Stops reading as soon as the answer is
    clear, so a born-digital page pays a few cells."""
    readable = printed = 0
    for cell in cells:
        text = cell.text
        clean = _UNMAPPED.sub("\ufffd", text)
        for ch in clean:
            if ch.isspace() or unicodedata.category(ch).startswith("P"):
                continue
            printed += 1
            if ch.isalnum() and ch != "\ufffd":
                readable += 1
        if readable >= 10 * MIN_TEXT_CHARS and readable >= MIN_READABLE_SHARE * printed:
            return True
    return readable >= MIN_TEXT_CHARS and readable >= MIN_READABLE_SHARE * printed


@dataclass
class PageScan:
    """What OCR read on one page: line and word cells (top-left, PDF points) and rulings."""

    lines: list[TextCell] = field(default_factory=list)
    words: list[TextCell] = field(default_factory=list)
    rules: Rules = field(default_factory=Rules)
    seconds: float = 0.0
    turned: int = 0  # quarter turns (counter-clockwise) that made the page upright


def _packaged_models() -> dict[str, str]:
    """The ONNX files inside the rapidocr wheel; an error naming them if one is missing."""
    import rapidocr

    root = Path(rapidocr.__file__).parent / "models"
    files = {
        "Det.model_path": root / "PP-OCRv6_det_small.onnx",
        "Rec.model_path": root / "PP-OCRv6_rec_small.onnx",
        # not used (see above), but RapidOCR loads it: the packaged file, never a download
        "Cls.model_path": root / "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
    }
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise OcrUnavailable(f"OCR unavailable: rapidocr's packaged models are missing: {', '.join(missing)}")
    return {k: str(v) for k, v in files.items()}


class OcrUnavailable(RuntimeError):
    """The OCR packages are not installed."""


class PageReader:
    """One RapidOCR engine, built on the first page that needs it, used under a lock."""

    def __init__(self) -> None:
        self._engine: RapidOCR | None = None
        self._lock = threading.Lock()

    def _engine_locked(self):
        if self._engine is None:
            try:
                import onnxruntime
                from rapidocr import RapidOCR
            except ImportError as exc:
                raise OcrUnavailable(f"OCR unavailable ({exc}): pip install 'evidence_pipeline[ocr]'") from exc

            onnxruntime.disable_telemetry_events()
            params = {
                **_packaged_models(),
                "Global.log_level": "error",
                "Global.use_cls": False,
                "Global.text_score": MIN_SCORE,
                "EngineConfig.onnxruntime.intra_op_num_threads": OCR_THREADS,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            }
            self._engine = RapidOCR(params=params)
        return self._engine

    def read(self, rgb: np.ndarray, **kwargs):
        with self._lock:
            return self._engine_locked()(rgb, **kwargs)

    def scan(self, source, page_no: int, width: float, height: float) -> PageScan:
        """OCR of page ``page_no`` (1-based) of ``source`` (path or bytes stream), whose
        page box is ``width`` x ``height`` points."""
        started = time.perf_counter()
        WORK.count("parse.ocr_pages")
        rgb = render_page(source, page_no, RENDER_SCALE)
        if _ink_share(rgb) < _MIN_INK_SHARE:
            return PageScan(seconds=time.perf_counter() - started)
        result = self.read(rgb, use_det=True, use_cls=False, use_rec=True, return_word_box=True)
        turned = 0
        if _runs_down(result):
            turned = self._upright_turn(rgb, result)
            rgb = np.ascontiguousarray(np.rot90(rgb, turned))
            result = self.read(rgb, use_det=True, use_cls=False, use_rec=True, return_word_box=True)
        if _mean_score(result) < UPSIDE_DOWN_SCORE:
            flipped = np.ascontiguousarray(np.rot90(rgb, 2))
            other = self.read(flipped, use_det=True, use_cls=False, use_rec=True, return_word_box=True)
            if _mean_score(other) > _mean_score(result):
                rgb, result, turned = flipped, other, (turned + 2) % 4
        frame = Frame(rgb.shape[1], rgb.shape[0], width, height)
        grey, straighten = _deskewed(_grey(rgb), _skew(result))
        lines, words = ocr_cells(result, frame, straighten, grey)
        rules = image_rules(grey, frame.box)
        return PageScan(lines, words, rules, time.perf_counter() - started, turned)

    def _upright_turn(self, rgb: np.ndarray, result) -> int:
        """1 or 3 quarter turns: whichever reads the tallest boxes with more confidence
        when the orientation classifier is not asked (it only knows 0 and 180 degrees)."""
        boxes = sorted(quads_of(result), key=lambda q: -(q[:, 1].max() - q[:, 1].min()))[:6]
        totals = {1: 0.0, 3: 0.0}
        for quad in boxes:
            x0, y0 = np.maximum(quad.min(axis=0).astype(int), 0)
            x1, y1 = quad.max(axis=0).astype(int)
            crop = rgb[y0:y1, x0:x1]
            if crop.size == 0:
                continue
            for turn in totals:
                out = self.read(np.ascontiguousarray(np.rot90(crop, turn)), use_det=False, use_cls=False, use_rec=True)
                totals[turn] += float(sum(out.scores or ()))
        return 1 if totals[1] >= totals[3] else 3


def render_page(source, page_no: int, scale: float) -> np.ndarray:
    """The page as RGB pixels (pypdfium2, under Docling's pdfium lock)."""
    import pypdfium2 as pdfium
    from docling.utils.locks import pypdfium2_lock

    if isinstance(source, BytesIO):
        source = source.getvalue()
    with pypdfium2_lock:
        pdf = pdfium.PdfDocument(source)
        try:
            page = pdf[page_no - 1]
            bitmap = page.render(scale=scale)
            WORK.count("parse.rendered_pages")
            rgb = np.array(bitmap.to_pil().convert("RGB"))
            page.close()
        finally:
            pdf.close()
    return rgb


def _grey(rgb: np.ndarray) -> np.ndarray:
    return (rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114).astype(np.uint8)


def _ink_share(rgb: np.ndarray) -> float:
    return float((_grey(rgb[::4, ::4]) < _INK_LEVEL).mean())


def _mean_score(result) -> float:
    scores = list(getattr(result, "scores", None) or ())
    return float(np.mean(scores)) if len(scores) >= 3 else 1.0


def _runs_down(result) -> bool:
    """Most text boxes taller than wide: the page was scanned on its side."""
    quads = quads_of(result)
    if len(quads) < 3:
        return False
    tall = sum(1 for q in quads if np.ptp(q[:, 1]) > 1.5 * np.ptp(q[:, 0]))
    return tall > len(quads) / 2


def _skew(result) -> float:
    """The median slope (radians, y down) of the top edges of the long text boxes: a page
    scanned a little askew. 0 when there are too few lines, or the tilt is negligible."""
    angles = []
    for quad in quads_of(result):
        dx, dy = quad[1] - quad[0]
        if dx > 4 * max(np.ptp(quad[:, 1]), 1.0):
            angles.append(float(np.arctan2(dy, dx)))
    if len(angles) < 5:
        return 0.0
    angle = float(np.median(angles))
    return angle if np.radians(MIN_SKEW_DEGREES) <= abs(angle) <= np.radians(5) else 0.0


def _deskewed(grey: np.ndarray, angle: float):
    """The page image turned level, and the same turn for the OCR boxes' points."""
    if not angle:
        return grey, lambda points: points
    import cv2

    h, w = grey.shape
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), float(np.degrees(angle)), 1.0)
    level = cv2.warpAffine(grey, matrix, (w, h), flags=cv2.INTER_LINEAR, borderValue=255)
    return level, lambda points: np.asarray(points, dtype=float) @ matrix[:, :2].T + matrix[:, 2]


def scan_if_needed(reader: PageReader | None, conv_res, page) -> PageScan | None:
    """OCR of ``page`` when it has no usable text layer and OCR is on; else None.

    The page's parsed cells are replaced by the OCR cells, so every later stage (Docling's
    reading order and heading levels among them) sees the text that was read."""
    if reader is None:
        return None
    with CLOCK.cpu("parse.text_layer", thread=True):
        readable = has_text_layer(page.cells)
    if readable:
        return None
    size = page.size
    with CLOCK.cpu("parse.ocr", thread=True):
        scan = reader.scan(conv_res.input._backend.path_or_stream, page.page_no, size.width, size.height)
    parsed = page.parsed_page
    if parsed is not None and scan.lines:
        parsed.textline_cells = scan.lines
        parsed.word_cells = scan.words
        parsed.has_lines = parsed.has_words = True
    return scan
