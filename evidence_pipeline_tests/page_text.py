"""Where text is printed on a PDF page, read independently of the pipeline with pdfium: the
reference the page-geometry tests hold a hit's boxes against.

Boxes are (l, t, r, b) in PDF points from the page's top-left corner, as ``records.PageBox``;
pdfium's own boxes are (left, bottom, right, top) from the bottom-left corner.
"""

from __future__ import annotations

import re
from pathlib import Path

import pypdfium2 as pdfium

Box = tuple[float, float, float, float]


class PageText:
    """One page of a PDF, open until ``close`` (or the end of a ``with`` block)."""

    def __init__(self, pdf_path: Path | str, page: int):
        self._pdf = pdfium.PdfDocument(str(pdf_path))
        self._page = self._pdf[page - 1]
        self.width, self.height = self._page.get_size()
        self._text = self._page.get_textpage()

    def __enter__(self) -> PageText:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._pdf.close()

    def printed_at(self, text: str) -> list[Box]:
        """Every place ``text`` is printed on the page (case-sensitive), one box around its characters."""
        found, searcher = [], self._text.search(text, match_case=True)
        while (match := searcher.get_next()) is not None:
            start, count = match
            chars = [self._text.get_charbox(i) for i in range(start, start + count)]
            chars = [c for c in chars if c[2] > c[0]]  # spaces have no box
            found.append(
                (
                    min(c[0] for c in chars),
                    self.height - max(c[3] for c in chars),
                    max(c[2] for c in chars),
                    self.height - min(c[1] for c in chars),
                )
            )
        return found

    def words_in(self, box: Box) -> list[str]:
        """The words and numbers printed inside ``box`` ("2.4*" reads "2.4", "$5,679" reads "5,679")."""
        l, t, r, b = box
        return re.findall(r"\w+(?:[.,]\w+)*", self._text.get_text_bounded(l, self.height - b, r, self.height - t))


def inside(inner: Box, outer: Box, slack: float = 1.0) -> bool:
    """``inner`` lies within ``outer``; ``slack`` points allowed for rounding and for glyph boxes
    (pdfium) measured differently from cell boxes (the parser)."""
    return outer[0] - slack <= inner[0] and outer[1] - slack <= inner[1] and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack
