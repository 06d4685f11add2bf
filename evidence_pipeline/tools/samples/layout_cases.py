"""Small PDFs that each reproduce one layout real documents use and parsers get wrong.

- ``title_page``: a cover page set in bold body-size type, line spacing doubled: a title
  over two lines, then "Principal Investigator: ..." style lines and a statement; body
  pages follow with numbered sections.
- ``key_value``: a two-column table of fields and values (no header row), ruled.
- ``schedule``: a schedule of visits (X marks) ruled cell by cell, with row labels
  carrying raised footnote letters and the notes printed under the table.
- ``centred_table``: a narrow table centred on the page (reportlab's default) under one
  section, the next section's heading and text below it.

Each is deterministic (reportlab ``invariant=1``) and small; ``write_layout_cases(dir)``
writes them all and returns their paths by name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

BODY = ParagraphStyle("body", fontName="Times-Roman", fontSize=11, leading=14, spaceAfter=6)
BOLD = ParagraphStyle("bold", parent=BODY, fontName="Times-Bold", leading=26)
HEAD = ParagraphStyle("head", parent=BODY, fontName="Times-Bold", fontSize=12, spaceBefore=8)
CELL = ParagraphStyle("cell", fontName="Times-Roman", fontSize=9, leading=11)
NOTE = ParagraphStyle("note", fontName="Times-Roman", fontSize=8, leading=10)

TITLE_LINES = ("Treatment of Chronic Mucosal Lesions With Cultured", "Stromal Cell Dressings in Adults")
COVER = (
    ("Principal Investigator", "Mara Quillfeather"),
    ("Research Institution", "Northbank Teaching Hospital, Department of Haematology"),
    ("Sponsor", "Quillfeather Stromal Research Group"),
)
FIELDS = (
    ("Study Title", "Observational Registry of Stromal Cell Dressing Outcomes"),
    ("Sponsor", "Northbank Teaching Hospital"),
    ("Trial Phase", "Observational"),
    ("Sample Size", "Forty participants across two sites"),
    ("Study Duration", "Twenty-four months from first enrolment"),
)
VISITS = ("Screening", "Baseline", "Month 6", "Month 12")
# (label, footnote letter or "", visits marked)
ACTIVITIES = (
    ("Informed Consent", "", (0,)),
    ("Medical History", "", (1, 2, 3)),
    ("Vital Signs", "a", (1, 2, 3)),
    ("Physical Exam", "b", (1, 3)),
    ("Family History", "", (1,)),
    ("Eligibility Review", "", (0,)),
    ("Grip Strength", "c", (0, 1, 2, 3)),
)
NOTES = {
    "a": "Pulse and blood pressure taken seated after five minutes.",
    "b": "Heart, lungs, abdomen and extremities.",
    "c": "Dominant hand, best of three attempts.",
}


def _doc(path: Path, **kw) -> SimpleDocTemplate:
    return SimpleDocTemplate(
        str(path), pagesize=A4, invariant=1, title=path.stem, author="evidence_pipeline", creator="evidence_pipeline", **kw
    )


def _grid(rows, widths, header: bool = False) -> Table:
    table = Table(rows, colWidths=widths)
    style = [("GRID", (0, 0), (-1, -1), 0.5, colors.black), ("VALIGN", (0, 0), (-1, -1), "TOP")]
    if header:
        style.append(("FONTNAME", (0, 0), (-1, 0), "Times-Bold"))
    table.setStyle(TableStyle(style))
    return table


def title_page(path: Path) -> None:
    story = [Paragraph(line, ParagraphStyle("t", parent=BOLD, alignment=1)) for line in TITLE_LINES]
    story.append(Spacer(1, 120))
    story += [Paragraph(f"{k}: {v}", BOLD) for k, v in COVER]
    story.append(Spacer(1, 30))
    story.append(Paragraph("Confidentiality Statement:", BOLD))
    story.append(
        Paragraph(
            "The information in this protocol is provided solely for review by the investigators and the ethics committee.",
            BOLD,
        )
    )
    story.append(PageBreak())
    story.append(Paragraph("1. Background", HEAD))
    story.append(Paragraph("Mucosal lesions after transplantation are common and hard to treat locally. " * 3, BODY))
    story.append(Paragraph("2. Objectives", HEAD))
    story.append(Paragraph("The study measures healing of lesions after four weeks of dressings. " * 3, BODY))
    _doc(path).build(story)


def key_value(path: Path) -> None:
    rows = [[Paragraph(k, CELL), Paragraph(v, CELL)] for k, v in FIELDS]
    story = [
        Paragraph("1. Protocol Summary", HEAD),
        Paragraph("The table below summarises the protocol.", BODY),
        _grid(rows, [120, 300]),
        Paragraph("2. Introduction", HEAD),
        Paragraph("Stromal cell dressings are applied once a week.", BODY),
    ]
    _doc(path).build(story)


def schedule(path: Path) -> None:
    """Rulings drawn cell by cell, as word processors do: one short segment per cell side."""
    header = ["Study Day", *VISITS]
    body = []
    for label, mark, marked in ACTIVITIES:
        text = f"{label}<super>{mark}</super>" if mark else label
        body.append([Paragraph(text, CELL), *("X" if i in marked else "" for i in range(len(VISITS)))])
    rows = [header, *body]
    table = Table(rows, colWidths=[150, 70, 70, 70, 70])
    style = [("FONTSIZE", (0, 0), (-1, -1), 9), ("ALIGN", (1, 0), (-1, -1), "CENTER")]
    for r in range(len(rows)):
        for c in range(len(header)):
            style.append(("BOX", (c, r), (c, r), 0.5, colors.black))
    table.setStyle(TableStyle(style))
    story = [
        Paragraph("Appendix 1: Schedule of Events", HEAD),
        table,
        Spacer(1, 8),
        *[Paragraph(f"{k} {v}", NOTE) for k, v in NOTES.items()],
    ]
    _doc(path).build(story)


def centred_table(path: Path) -> None:
    rows = [["Parameter", "Limit"], ["Jacket temperature", "85 C"], ["Stirrer speed", "120 rpm"], ["Pressure", "2.5 bar"]]
    story = [
        Paragraph("1 Reactor limits", HEAD),
        Paragraph("The reactor runs inside these limits at all times.", BODY),
        _grid(rows, [110, 70], header=True),
        Spacer(1, 6),
        _grid([["Valve", "Setting"], ["Inlet", "Open"], ["Outlet", "Half"]], [110, 70], header=True),
        Paragraph("2 Cleaning", HEAD),
        Paragraph("Clean the vessel with hot water after every batch.", BODY),
    ]
    _doc(path).build(story)


CASES = {"title_page": title_page, "key_value": key_value, "schedule": schedule, "centred_table": centred_table}


def write_cases(cases: dict[str, Callable[[Path], None]], out_dir: Path) -> dict[str, Path]:
    """Build every case into ``out_dir/<name>.pdf``; name -> path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, build in cases.items():
        paths[name] = out_dir / f"{name}.pdf"
        build(paths[name])
    return paths


def write_layout_cases(out_dir: Path) -> dict[str, Path]:
    return write_cases(CASES, out_dir)
