"""Word coverage: how much of a PDF's own text reaches its evidence units.

The reference is pdfium's text of the same pages (``get_textpage().get_text_range()``), a
decoder independent of the parser's. Both sides are normalised as the other metrics are
(NFKC, dashes, case) and cut into words; the figure is the share of the document's
distinct words that appear in the text of any of its evidence units. A word the parser
lost entirely (a dropped heading, a line taken for page furniture) shows in ``lost``.

Page furniture (running headers and footers, page numbers) belongs in no unit, but the
parser records it as such (blocks labelled ``page_header`` / ``page_footer``): a word found
only there is accounted for, not lost, and is counted apart (``furniture``) so that a body
line wrongly taken for furniture still shows in the report. The lines of a table of contents
(``units.is_contents_entry``) are navigation too, read and left out of the units: counted
with the furniture. A word both in a unit and in furniture counts as found in the units.

Each listed lost word is located in pdfium's text (``locate_words``): its page and the box of
its characters, in PDF points from the page's top-left corner, for its first few occurrences.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from evidence_pipeline.errors import ParseError
from evidence_pipeline.evaluation.parser_quality.metrics import normalise
from evidence_pipeline.evaluation.parser_quality.models import CoverageFile, CoverageSection, WordPlace
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.units import build_units, is_contents_entry

_WORD = re.compile(r"\w+")
LOST_SHOWN = 30  # lost words listed per file
PLACES_SHOWN = 3  # occurrences located per listed lost word


def words_of(text: str) -> set[str]:
    # pdfium writes a line-end hyphenation point as U+FFFE ("Ef\ufffefects"): the word is whole.
    return set(_WORD.findall(normalise(text.replace("\ufffe", ""))))


def pdf_page_texts(path: Path, pages: tuple[int, int] | None = None) -> list[str]:
    """pdfium's text of each page of the PDF, as its text layer holds it (``pages``: a 1-based
    inclusive range): the reference that neither this project's parser nor a layout step shaped."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        first, last = pages if pages is not None else (1, len(pdf))
        out: list[str] = []
        for n in range(first - 1, min(last, len(pdf))):
            page = pdf[n]
            textpage = page.get_textpage()
            out.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return out
    finally:
        pdf.close()


def pdf_words(path: Path, pages: tuple[int, int] | None = None) -> set[str]:
    """Distinct words of pdfium's text of the PDF (``pages``: a 1-based inclusive range)."""
    return set().union(*(words_of(text) for text in pdf_page_texts(path, pages)))


FURNITURE = ("page_header", "page_footer")


def unit_words(doc: ParsedDoc) -> set[str]:
    out: set[str] = set()
    for unit in build_units(doc):
        out |= words_of(unit.text)
    return out


def furniture_words(doc: ParsedDoc) -> set[str]:
    """Words of the lines the parser recorded as page furniture, and of contents lines."""
    out: set[str] = set()
    for block in doc.blocks:
        if block.label in FURNITURE or is_contents_entry(block):
            out |= words_of(block.text)
    return out


def file_coverage(path: Path, doc: ParsedDoc, pages: tuple[int, int] | None = None) -> CoverageFile:
    """The coverage of one PDF by its parse ``doc``; the first ``LOST_SHOWN`` lost words are
    listed, each with up to ``PLACES_SHOWN`` places (``lost_at``)."""
    reference = pdf_words(path, pages)
    if not reference:
        return CoverageFile(file=path.name, words=0, covered=0, error="no text layer: needs OCR")
    found = unit_words(doc)
    furniture = (reference - found) & furniture_words(doc)
    lost = sorted(reference - found - furniture)
    shown = lost[:LOST_SHOWN]
    return CoverageFile(
        file=path.name,
        words=len(reference),
        covered=len(reference) - len(lost),
        furniture=len(furniture),
        lost=shown,
        lost_at=locate_words(path, set(shown), pages) if shown else [],
        n_lost=len(lost),
    )


# --------------------------------------------------------------------------- where a word stands


def _clusters(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each character of ``text`` with the combining marks that follow it."""
    i = 0
    while i < len(text):
        j = i + 1
        while j < len(text) and unicodedata.combining(text[j]):
            j += 1
        yield i, j
        i = j


def normalised_spans(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` normalised as ``words_of`` normalises it, each white-space character a space,
    and for each character of the result the ``(start, end)`` slice of ``text`` it came from:
    the words ``words_of(text)`` finds are the ``\\w+`` runs of the result."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    for start, end in _clusters(text):
        piece = text[start:end]
        if piece == "\ufffe":  # pdfium's line-end hyphenation point: the word goes on
            continue
        norm = " " if piece.isspace() else normalise(piece)
        out.append(norm)
        spans += [(start, end)] * len(norm)
    return "".join(out), spans


def word_spans(text: str, words: set[str]) -> Iterator[tuple[str, int, int]]:
    """(word, start, end) of each occurrence in ``text`` of a word of ``words`` (normalised
    words, as ``words_of`` gives them), as a slice of ``text``, in text order."""
    norm, spans = normalised_spans(text)
    for m in _WORD.finditer(norm):
        if m.group() in words:
            yield m.group(), spans[m.start()][0], spans[m.end() - 1][1]


def _utf16_offsets(text: str) -> list[int]:
    """For each index of ``text``, its offset in UTF-16 code units (pdfium's text indices)."""
    out, n = [], 0
    for ch in text:
        out.append(n)
        n += 2 if ord(ch) > 0xFFFF else 1
    return out


def char_box(textpage: Any, text: str, start: int, end: int) -> tuple[float, float, float, float] | None:
    """The union of pdfium's boxes of the characters of ``text[start:end]`` (``text``: the page's
    ``get_text_range()``), as pdfium gives them: ``(left, bottom, right, top)``, origin bottom-left.
    None when no character there has a box (characters pdfium inserted, such as line breaks)."""
    import pypdfium2.raw as pdfium_c
    from pypdfium2 import PdfiumError

    offsets = _utf16_offsets(text)
    boxes = []
    for i in range(start, end):
        index = pdfium_c.FPDFText_GetCharIndexFromTextIndex(textpage, offsets[i])
        if index < 0:
            continue
        try:
            l, b, r, t = textpage.get_charbox(index)
        except PdfiumError:  # pdfium has no box for this character
            continue
        if r > l or t > b:
            boxes.append((l, b, r, t))
    if not boxes:
        return None
    return min(x[0] for x in boxes), min(x[1] for x in boxes), max(x[2] for x in boxes), max(x[3] for x in boxes)


def _top_left(box: tuple[float, float, float, float], height: float) -> tuple[float, float, float, float]:
    l, b, r, t = box
    return round(l, 1), round(height - t, 1), round(r, 1), round(height - b, 1)


def _page_places(page: Any, number: int, words: set[str], taken: dict[str, int]) -> list[WordPlace]:
    """The places on one page of the words still short of ``PLACES_SHOWN`` places (``taken``
    counts them and is updated)."""
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
        height = page.get_height()
        out = []
        for word, start, end in word_spans(text, words):
            if taken.get(word, 0) >= PLACES_SHOWN:
                continue
            box = char_box(textpage, text, start, end)
            if box is not None:
                taken[word] = taken.get(word, 0) + 1
                out.append(WordPlace(word=word, page=number, box=_top_left(box, height)))
        return out
    finally:
        textpage.close()


def locate_words(path: Path, words: set[str], pages: tuple[int, int] | None = None) -> list[WordPlace]:
    """Where pdfium's text of the PDF holds each of ``words`` (normalised, as ``words_of`` gives
    them): its first ``PLACES_SHOWN`` occurrences, each with its 1-based page and the box of its
    characters ``(l, t, r, b)`` in PDF points from the page's top-left corner (pdfium's bottom-left
    boxes turned over with the page height); in page order, then reading order. ``pages``: a
    1-based inclusive range, as ``pdf_words`` takes it."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        first, last = pages if pages is not None else (1, len(pdf))
        taken: dict[str, int] = {}
        out: list[WordPlace] = []
        for n in range(first - 1, min(last, len(pdf))):
            if all(taken.get(w, 0) >= PLACES_SHOWN for w in words):
                break
            page = pdf[n]
            try:
                out += _page_places(page, n + 1, words, taken)
            finally:
                page.close()
        return out
    finally:
        pdf.close()


def coverage_section(parse: Callable[[Path], ParsedDoc], folders: Iterable[Path]) -> CoverageSection:
    """Every PDF of each folder (and its ``pdfs/`` subfolder, if any), parsed and scored alone."""
    files: list[CoverageFile] = []
    for folder in folders:
        folder = Path(folder)
        pdfs = sorted(folder.glob("*.pdf")) or sorted((folder / "pdfs").glob("*.pdf"))
        for path in pdfs:
            try:
                row = file_coverage(path, parse(path))
            except ParseError as exc:
                row = CoverageFile(file=path.name, words=0, covered=0, error=exc.reason)
            files.append(row.model_copy(update={"folder": str(folder)}))
    return CoverageSection(files=files)
