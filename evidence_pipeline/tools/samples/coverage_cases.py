"""Small PDFs that each reproduce a way real documents lost words in the rule parser.

Drawn line by line on a reportlab canvas, so each case sits exactly where the real one did:

- ``raised_markers``: running text with footnote numbers set small and raised right after
  a word, in English ("Resource Center¹ reports") and in Korean ("상해¹⁾나", NanumGothic);
- ``check_box_item``: a list item led by a check box glyph taller than its text, its last
  word hyphenated onto the next line ("practic-" / "ing");
- ``column_top``: a one-page, two-column page whose columns start inside the top margin
  band, under a short running header, with a page number at the foot;
- ``dash_line_end``: a paragraph with a line that ends in an em dash;
- ``contents``: a table of contents whose dot leaders outnumber its letters.

Each is deterministic (``invariant=1``); ``write_coverage_cases(dir)`` writes them all and
returns their paths by name.
"""

from __future__ import annotations

from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

from evidence_pipeline.tools.samples.layout_cases import write_cases
from evidence_pipeline.tools.samples.render import typeface

WIDTH, HEIGHT = A4
MARKED_LINES = (  # (text before the marker, marker, text after it), one line each
    ("Recent news headlines are filled with reports of data breaches and", "", ""),
    ("attacks on businesses of all sizes. The Identity Theft Resource Center", "1", " reports"),
    ("that almost five thousand breaches have occurred since 2005, exposing", "", ""),
    ("hundreds of millions of records. Studies from the Ponemon Institute", "2", ""),
    ("show the cost of a breach rising every year.", "", ""),
)
KOREAN_LINE = (("병으로 보아야 할지, 상해", "1)"), ("나 재해", "2)"), ("로 보아야 할지", ""))
CHECK_ITEM = (
    "They are authorized to provide only those services that a faculty member or practic-",
    "ing lawyer supervises and signs.",
)
HEADER = "Field Guide to Fasteners"
COLUMN_TEXT = (
    "pulleys, provided the inner race of the bearing",
    "is clamped to the supporting structure by the",
    "nut and bolt. Plates must be attached firmly.",
)
COLUMN_TWO = (
    "the most common ranges in size for No. 6 up",
    "to a quarter inch, and the bellows type from",
    "No. 8 up to three eighths of an inch. Wing nuts",
)
PAGE_NUMBER = "7-45"
DASH_LINES = (
    "The journey of the word processor from clunky typewriters to AI-powered platforms\u2014",
    "reflects the broader technological progress of the last fifty years. What began as a",
    "tool to replace handwriting has become an ally for writing and for working together.",
)
CONTENTS = tuple((f"3.{i}.{j}", f"Assigning role {i}{j}", 20 + i + j) for i in range(1, 5) for j in range(1, 7))


def _doc(path: Path) -> Canvas:
    canvas = Canvas(str(path), pagesize=A4, invariant=1)
    canvas.setTitle(path.stem)
    canvas.setAuthor("evidence_pipeline")
    canvas.setCreator("evidence_pipeline")
    return canvas


def _y(top: float, size: float) -> float:
    """reportlab's baseline for a line whose box starts ``top`` points below the page top."""
    return HEIGHT - top - 0.8 * size


def raised_markers(path: Path) -> None:
    c = _doc(path)
    size, small = 10.0, 6.5
    c.setFont("Helvetica-Bold", 13)
    c.drawString(72, _y(90, 13), "1 Securing the data")
    top = 120.0
    for before, marker, after in MARKED_LINES:
        x = 72.0
        c.setFont("Helvetica", size)
        c.drawString(x, _y(top, size), before)
        x += c.stringWidth(before, "Helvetica", size)
        if marker:
            c.setFont("Helvetica", small)
            c.drawString(x, _y(top, size) + 3.5, marker)
            x += c.stringWidth(marker, "Helvetica", small)
        if after:
            c.setFont("Helvetica", size)
            c.drawString(x, _y(top, size), after)
        top += 13
    face = typeface("korean").regular
    top += 30
    x = 72.0
    for text, marker in KOREAN_LINE:
        c.setFont(face, size)
        c.drawString(x, _y(top, size), text)
        x += c.stringWidth(text, face, size)
        if marker:
            c.setFont(face, small)
            c.drawString(x, _y(top, size) + 3.5, marker)
            x += c.stringWidth(marker, face, small)
    c.save()


def check_box_item(path: Path) -> None:
    c = _doc(path)
    c.setFont("Helvetica-Bold", 12)
    c.drawString(72, _y(90, 12), "27. What may a student do?")
    top = 120.0
    c.setFont("ZapfDingbats", 12)
    c.drawString(72, _y(top, 12) + 1, "o")  # a check box, taller than the 8-point text
    c.setFont("Helvetica", 8)
    c.drawString(90, _y(top + 2, 8), CHECK_ITEM[0])
    c.drawString(90, _y(top + 14, 8), CHECK_ITEM[1])
    c.save()


def column_top(path: Path) -> None:
    c = _doc(path)
    size = 9.0
    c.setFont("Helvetica", 7)
    c.drawString(72, _y(22, 7), HEADER)
    for x, lines in ((72, COLUMN_TEXT), (320, COLUMN_TWO)):
        top = 46.0
        c.setFont("Helvetica", size)
        for line in lines:
            c.drawString(x, _y(top, size), line)
            top += 12.5
    c.setFont("Helvetica-Bold", 11)
    c.drawString(72, _y(110, 11), "Boots Self-Locking Nut")
    c.setFont("Helvetica", size)
    c.drawString(72, _y(128, size), "The Boots nut is of one piece, all metal.")
    c.setFont("Helvetica", 8)
    c.drawString(WIDTH - 110, _y(HEIGHT - 40, 8), PAGE_NUMBER)
    c.save()


def dash_line_end(path: Path) -> None:
    c = _doc(path)
    c.setFont("Helvetica-Bold", 13)
    c.drawString(72, _y(90, 13), "Conclusion")
    c.setFont("Helvetica", 10)
    top = 120.0
    for line in DASH_LINES:
        c.drawString(72, _y(top, 10), line)
        top += 13
    c.save()


def contents(path: Path) -> None:
    c = _doc(path)
    c.setFont("Helvetica-Bold", 16)
    c.drawString(72, _y(80, 16), "Contents")
    top = 120.0
    c.setFont("Helvetica", 9)
    for number, title, page in CONTENTS:
        c.drawString(90, _y(top, 9), number)
        c.drawString(120, _y(top, 9), title)
        start = 120 + c.stringWidth(title + " ", "Helvetica", 9)
        c.drawString(start, _y(top, 9), " ." * int((500 - start) / c.stringWidth(" .", "Helvetica", 9)))
        c.drawRightString(523, _y(top, 9), str(page))
        top += 12.5
    c.save()


CASES = {
    "raised_markers": raised_markers,
    "check_box_item": check_box_item,
    "column_top": column_top,
    "dash_line_end": dash_line_end,
    "contents": contents,
}


def write_coverage_cases(out_dir: Path) -> dict[str, Path]:
    return write_cases(CASES, out_dir)
