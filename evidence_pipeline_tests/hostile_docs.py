"""Generated hostile documents: huge table cells and very wide tables (PDF through reportlab, HTML)."""

from __future__ import annotations

from pathlib import Path

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.pdfgen import canvas
from reportlab.platypus import Paragraph, SimpleDocTemplate, Table, TableStyle

_WORDS = "lorem ipsum dolor sit amet "


def filler(n_chars: int) -> str:
    return (_WORDS * (n_chars // len(_WORDS) + 1))[:n_chars]


def one_line_cell_pdf(path: Path, n_chars: int) -> Path:
    """A ruled 3 x 2 table whose last cell holds ``n_chars`` of text on one line running off the page.

    docling-parse's time grows with the square of such a line's length (20,000 characters: 14 s,
    50,000: 110 s on 2 cores): only the worker's time limit bounds it."""
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.setFont("Helvetica", 10)
    c.drawString(72, 780, "Table 1: Limits")
    x0, y0, w, h = 72, 700, 200, 20
    for r in range(4):
        c.line(x0, y0 - r * h, x0 + 2 * w, y0 - r * h)
    for k in range(3):
        c.line(x0 + k * w, y0, x0 + k * w, y0 - 3 * h)
    for r, row in enumerate([["Parameter", "Value"], ["Flow", "1.8"], ["Note", ""]]):
        for k, text in enumerate(row):
            c.drawString(x0 + k * w + 3, y0 - (r + 1) * h + 6, text)
    c.setFont("Helvetica", 1)
    line = c.beginText(x0 + w + 3, y0 - 3 * h + 6)
    line.textOut(filler(n_chars))
    c.drawText(line)
    c.save()
    return path


def long_cell_and_wide_table_pdf(path: Path, cell_chars: int, n_cols: int, col_width: float = 14) -> Path:
    """Two ruled tables on one tall page: one cell of ``cell_chars`` wrapped characters, and a
    3-row table of ``n_cols`` columns on a page as wide as it needs."""
    width = max(n_cols * col_width + 144, 612)
    grid = TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black), ("FONTSIZE", (0, 0), (-1, -1), 6)])
    body = getSampleStyleSheet()["Normal"]
    small = ParagraphStyle("cell", fontName="Helvetica", fontSize=5, leading=6)
    wide_rows = [[f"c{k}" for k in range(n_cols)], [str(k % 10) for k in range(n_cols)]]
    wide_rows.append([str(k * 7 % 10) for k in range(n_cols)])
    story = [
        Paragraph("Table 1: Long note", body),
        Table(
            [["Parameter", "Value"], ["Note", Paragraph(filler(cell_chars), small)], ["Flow", "1.8"]],
            colWidths=[80, 500],
            style=grid,
        ),
        Paragraph("Table 2: Wide readings", body),
        Table(wide_rows, colWidths=[col_width] * n_cols, style=grid),
    ]
    SimpleDocTemplate(str(path), pagesize=(width, 3000), invariant=1).build(story)
    return path


def huge_cell_and_wide_table_html(path: Path, cell_chars: int, n_cols: int) -> Path:
    head = "".join(f"<th>c{k}</th>" for k in range(n_cols))
    rows = "".join("<tr>" + "".join(f"<td>{(r * 7 + k) % 10}</td>" for k in range(n_cols)) + "</tr>" for r in range(3))
    path.write_text(
        "<html><body><h1>Hostile tables</h1>"
        "<table><caption>Table 1: Long note</caption><tr><th>Parameter</th><th>Value</th></tr>"
        f"<tr><td>Note</td><td>{filler(cell_chars)}</td></tr><tr><td>Flow</td><td>1.8</td></tr></table>"
        f"<p>Readings follow.</p><table><caption>Table 2: Wide readings</caption><tr>{head}</tr>{rows}</table>"
        "</body></html>"
    )
    return path
