"""Right-to-left lines (Arabic, Hebrew) as a PDF shows them, for parser tests.

reportlab draws a string left to right, glyph after glyph, and neither shapes Arabic nor
reorders right-to-left text. A right-to-left line is therefore prepared as a typesetter
would print it: Arabic letters in their contextual forms (the presentation forms that
``unicodedata`` names ``<initial>``, ``<medial>``, ``<final>``, ``<isolated>``), then the line
in visual order (words right to left, letters of a right-to-left word reversed, numbers and
Latin words kept left to right), drawn flush right. A PDF reader must undo both to give the
line in logical order; NFKC folds the presentation forms back into the letters.

Fonts: DejaVu Sans (Debian's fonts-dejavu-core) carries the Hebrew letters and the Arabic
presentation forms.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from io import BytesIO
from pathlib import Path

FONT_PATH = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
FONT_NAME = "DejaVuSans"
_RTL = re.compile(r"[\u0590-\u05ff\u0600-\u06ff\ufb1d-\ufdff\ufe70-\ufeff]")
_FORMS = ("isolated", "final", "initial", "medial")


@lru_cache(maxsize=1)
def _presentation_forms() -> dict[str, dict[str, str]]:
    """letter -> {form: presentation character}, read from Unicode's decompositions."""
    table: dict[str, dict[str, str]] = {}
    for code in range(0xFE70, 0xFF00):
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) == 2 and parts[0].strip("<>") in _FORMS:
            table.setdefault(chr(int(parts[1], 16)), {})[parts[0].strip("<>")] = chr(code)
    return table


def shape_arabic(text: str) -> str:
    """Arabic letters in their contextual forms, logical order kept."""
    forms = _presentation_forms()

    def joins_next(ch: str) -> bool:  # dual-joining letters have an initial form
        return "initial" in forms.get(ch, {})

    out = []
    for i, ch in enumerate(text):
        if ch not in forms:
            out.append(ch)
            continue
        prev_joins = i > 0 and joins_next(text[i - 1])
        next_joins = i + 1 < len(text) and text[i + 1] in forms and joins_next(ch)
        form = {(False, False): "isolated", (True, False): "final", (False, True): "initial", (True, True): "medial"}[
            (prev_joins, next_joins)
        ]
        out.append(forms[ch].get(form) or forms[ch].get("isolated", ch))
    return "".join(out)


def visual_order(line: str) -> str:
    """A right-to-left line in the order its glyphs stand on the page, left to right."""
    runs: list[tuple[bool, list[str]]] = []
    for word in line.split():
        rtl = bool(_RTL.search(word))
        if runs and not rtl and not runs[-1][0]:
            runs[-1][1].append(word)  # consecutive left-to-right words keep their order
        else:
            runs.append((rtl, [word]))
    words = []
    for rtl, run in reversed(runs):
        words += [w[::-1] for w in run] if rtl else [" ".join(run)]
    return " ".join(words)


def rtl_pdf(lines: list[str], title: str = "Right-to-left sample") -> bytes:
    """A one-page PDF: an English title, then each right-to-left line flush right."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    if FONT_NAME not in pdfmetrics.getRegisteredFontNames():
        if not FONT_PATH.is_file():
            raise FileNotFoundError(f"{FONT_PATH}: right-to-left sample PDFs need the Debian package fonts-dejavu-core")
        pdfmetrics.registerFont(TTFont(FONT_NAME, str(FONT_PATH)))
    buf = BytesIO()
    width, height = A4
    c = canvas.Canvas(buf, pagesize=A4, invariant=1)
    c.setFont("Helvetica-Bold", 14)
    c.drawString(72, height - 72, title)
    c.setFont(FONT_NAME, 12)
    y = height - 110
    for line in lines:
        c.drawRightString(width - 72, y, visual_order(shape_arabic(line)))
        y -= 22
    c.showPage()
    c.save()
    return buf.getvalue()
