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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from evidence_pipeline.errors import ParseError
from evidence_pipeline.evaluation.parser_quality.metrics import normalise
from evidence_pipeline.evaluation.parser_quality.models import CoverageFile, CoverageSection
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.units import build_units, is_contents_entry

_WORD = re.compile(r"\w+")
LOST_SHOWN = 30  # lost words listed per file


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
    reference = pdf_words(path, pages)
    if not reference:
        return CoverageFile(file=path.name, words=0, covered=0, error="no text layer: needs OCR")
    found = unit_words(doc)
    furniture = (reference - found) & furniture_words(doc)
    lost = sorted(reference - found - furniture)
    return CoverageFile(
        file=path.name,
        words=len(reference),
        covered=len(reference) - len(lost),
        furniture=len(furniture),
        lost=lost[:LOST_SHOWN],
        n_lost=len(lost),
    )


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
