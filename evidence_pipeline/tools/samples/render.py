"""PDF rendering of a ``DocSpec`` with reportlab, tracking the page of every keyed flowable.

Output is byte-identical across runs: reportlab ``invariant=1``, fixed metadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from xml.sax.saxutils import escape

from reportlab.graphics.shapes import Drawing, Line, Polygon, Rect, String
from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER
from reportlab.lib.pagesizes import A4, LETTER
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import cm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import (
    BalancedColumns,
    BaseDocTemplate,
    CondPageBreak,
    Flowable,
    Frame,
    KeepTogether,
    PageTemplate,
    Paragraph,
    Spacer,
    Table,
    TableStyle,
)

from evidence_pipeline.tools.samples.spec import Block, Columns, DocSpec, Fig, H, P, T
from evidence_pipeline.tools.samples.truth import SampleTruth, truth_from_pages


@dataclass(frozen=True)
class Typeface:
    """The fonts a document is set in: regular, bold and oblique."""

    regular: str
    bold: str
    oblique: str


LATIN = Typeface("Helvetica", "Helvetica-Bold", "Helvetica-Oblique")
# Debian's fonts-nanum: TrueType outlines, the only kind reportlab embeds (it refuses PostScript
# outlines, and Noto CJK ships CFF .ttc/.otf). Nanum has no oblique; the regular face stands in.
NANUM_DIR = Path("/usr/share/fonts/truetype/nanum")
HANGUL = Typeface("NanumGothic", "NanumGothicBold", "NanumGothic")


def typeface(script: str) -> Typeface:
    """The typeface of ``script``, its TrueType fonts registered with reportlab on first use."""
    if script == "latin":
        return LATIN
    for name in {HANGUL.regular, HANGUL.bold}:
        if name in pdfmetrics.getRegisteredFontNames():
            continue
        path = NANUM_DIR / f"{name}.ttf"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: Korean sample PDFs need the Debian package fonts-nanum")
        pdfmetrics.registerFont(TTFont(name, str(path)))
    pdfmetrics.registerFontFamily(HANGUL.regular, normal=HANGUL.regular, bold=HANGUL.bold, italic=HANGUL.oblique, boldItalic=HANGUL.bold)
    return HANGUL


def styles_for(face: Typeface) -> dict[str, ParagraphStyle]:
    body = ParagraphStyle("body", fontName=face.regular, fontSize=10, leading=13.5, spaceAfter=6)
    return {
        "body": body,
        "step": ParagraphStyle("step", parent=body, leftIndent=14, spaceAfter=4),
        "warning": ParagraphStyle("warning", parent=body, spaceBefore=4, spaceAfter=8),
        "ref": ParagraphStyle("ref", parent=body, leftIndent=14, spaceAfter=2),
        "title": ParagraphStyle("title", fontName=face.bold, fontSize=16, leading=20, spaceAfter=4),
        "meta": ParagraphStyle("meta", fontName=face.regular, fontSize=9, leading=12, spaceAfter=14),
        "h1": ParagraphStyle("h1", fontName=face.bold, fontSize=13, leading=16, spaceBefore=10, spaceAfter=5),
        "h2": ParagraphStyle("h2", fontName=face.bold, fontSize=11, leading=14, spaceBefore=6, spaceAfter=4),
        "caption": ParagraphStyle("caption", fontName=face.bold, fontSize=9.5, leading=12, spaceBefore=4, spaceAfter=4),
        "figcaption": ParagraphStyle(
            "figcaption",
            fontName=face.oblique,
            fontSize=9.5,
            leading=12,
            alignment=TA_CENTER,
            spaceBefore=4,
            spaceAfter=8,
        ),
        "footnote": ParagraphStyle("footnote", fontName=face.regular, fontSize=8, leading=10),
        "cell": ParagraphStyle("cell", fontName=face.regular, fontSize=9, leading=11),
    }


STYLES = styles_for(LATIN)
# Part of every PDF's bytes, hence of every content hash: left as it is so the corpus keeps
# its hashes (and stores built from it stay current).
FIXED_META = dict(author="Document Control", creator="evidence_pipeline.samples", producer="ReportLab")


class _Tracker:
    """One build: its typeface and styles, and the pages on which keyed flowables were drawn."""

    def __init__(self, face: Typeface = LATIN) -> None:
        self.pages: dict[str, list[int]] = {}
        self.face = face
        self.styles = STYLES if face == LATIN else styles_for(face)

    def mark(self, key: str, page: int) -> None:
        seen = self.pages.setdefault(key, [])
        if page not in seen:
            seen.append(page)


class _TrackedParagraph(Paragraph):
    def __init__(self, text: str, style: ParagraphStyle, key: str, tracker: _Tracker):
        super().__init__(text, style)
        self._key, self._tracker = key, tracker

    def split(self, availWidth, availHeight):  # noqa: N803 (reportlab signature)
        # Never split: a tracked paragraph then sits on exactly one page.
        return []

    def draw(self) -> None:
        self._tracker.mark(self._key, self.canv.getPageNumber())
        super().draw()


class _TrackedTable(Table):
    """Records the page of every row it draws (keyed by the row's first cell)."""

    _key: str = ""
    _tracker: _Tracker | None = None

    def split(self, availWidth, availHeight):  # noqa: N803
        parts = super().split(availWidth, availHeight)
        for part in parts:
            part._key, part._tracker = self._key, self._tracker
        return parts

    def draw(self) -> None:
        if self._tracker is not None:
            page = self.canv.getPageNumber()
            self._tracker.mark(self._key, page)
            for row in self._cellvalues:
                self._tracker.mark(f"{self._key}/row/{_cell_text(row[0])}", page)
        super().draw()


class _PageMark(Flowable):
    """Zero-size flowable that records the page it lands on."""

    def __init__(self, key: str, tracker: _Tracker):
        super().__init__()
        self._key, self._tracker = key, tracker
        self.width = self.height = 0

    def draw(self) -> None:
        self._tracker.mark(self._key, self.canv.getPageNumber())


def _cell_text(value: object) -> str:
    return value.text if isinstance(value, Paragraph) else str(value)


def _markup(p: P) -> str:
    text = escape(p.text)
    return f"<b>{escape(p.lead)}</b> {text}" if p.lead else text


def _para(text: str, style: str, key: str | None, tracker: _Tracker) -> Paragraph:
    if key is None:
        return Paragraph(text, tracker.styles[style])
    return _TrackedParagraph(text, tracker.styles[style], key, tracker)


def _table_flowables(t: T, context: P | None, heading: Flowable | None, tracker: _Tracker) -> list[Flowable]:
    n_head = len(t.header_rows)
    # Render form: a spanned header shows its text once, in its top-left cell.
    covered = {(r, c) for (r0, c0, nr, nc) in t.spans for r in range(r0, r0 + nr) for c in range(c0, c0 + nc) if (r, c) != (r0, c0)}
    data: list[list[object]] = []
    for r, row in enumerate(t.header_rows):
        data.append(["" if (r, c) in covered else v for c, v in enumerate(row)])
    for row in t.body_rows:
        data.append([Paragraph(escape(v), tracker.styles["cell"]) if c in t.wrap_cols else v for c, v in enumerate(row)])
    face = tracker.face
    table = _TrackedTable(data, colWidths=t.col_widths, repeatRows=n_head, hAlign="LEFT")
    table._key, table._tracker = f"{t.key}", tracker
    cmds: list[tuple] = [
        ("FONT", (0, 0), (-1, n_head - 1), face.bold, 9),
        ("FONT", (0, n_head), (-1, -1), face.regular, 9),
        ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
        ("TOPPADDING", (0, 0), (-1, -1), 2.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
        ("LEFTPADDING", (0, 0), (-1, -1), 5),
        ("RIGHTPADDING", (0, 0), (-1, -1), 5),
    ]
    if t.compact:
        cmds += [
            ("FONT", (0, n_head), (-1, -1), face.regular, 8.5),
            ("TOPPADDING", (0, 0), (-1, -1), 1.5),
            ("BOTTOMPADDING", (0, 0), (-1, -1), 2.5),
        ]
    if t.ruled:
        cmds += [
            ("GRID", (0, 0), (-1, -1), 0.5, colors.black),
            ("BACKGROUND", (0, 0), (-1, n_head - 1), colors.HexColor("#E4E4E4")),
            ("ALIGN", (0, 0), (-1, n_head - 1), "CENTER"),
        ]
    else:
        cmds += [("ALIGN", (0, 0), (-1, -1), "LEFT"), ("RIGHTPADDING", (0, 0), (-1, -1), 14)]
    cmds += [("SPAN", (c0, r0), (c0 + nc - 1, r0 + nr - 1)) for (r0, c0, nr, nc) in t.spans]
    table.setStyle(TableStyle(cmds))

    caption = _para(escape(t.caption), "caption", f"{t.key}/caption", tracker)
    notes = [_para(f"{escape(marker)} {escape(text)}", "footnote", f"{t.key}/fn/{marker}", tracker) for marker, text in t.footnotes]
    if notes:
        notes = [Spacer(1, 3), *notes]
    group: list[Flowable] = [caption, table, *notes] if t.caption_position == "above" else [table, caption, *notes]
    if context is not None:
        group = [_para(_markup(context), context.style, context.key, tracker), *group]
    if heading is not None:
        group = [heading, *group]
    if t.keep_together:
        return [KeepTogether(group), Spacer(1, 6)]
    # A long table starts where it is and crosses the break; only make sure its context,
    # caption and first rows are not left alone at the foot of a page.
    return [CondPageBreak(140), *group, Spacer(1, 6)]


def _figure_drawing() -> Drawing:
    """A simple process schematic: boxes, labels and arrows (vector graphics only)."""
    d = Drawing(440, 130)
    boxes = [
        (0, 82, 110, 32, "Aqueous feed (mRNA)"),
        (0, 16, 110, 32, "Lipid feed (ethanol)"),
        (160, 49, 110, 32, "Herringbone mixer"),
        (320, 82, 120, 32, "In-line dilution"),
        (320, 16, 120, 32, "Collection bag"),
    ]
    for x, y, w, h, label in boxes:
        d.add(Rect(x, y, w, h, strokeColor=colors.black, fillColor=colors.HexColor("#F2F2F2"), strokeWidth=0.8))
        d.add(String(x + w / 2, y + h / 2 - 3, label, fontName="Helvetica", fontSize=8, textAnchor="middle"))

    def arrow(x1: float, y1: float, x2: float, y2: float) -> None:
        d.add(Line(x1, y1, x2, y2, strokeWidth=0.8))
        d.add(Polygon([x2, y2, x2 - 6, y2 + 3, x2 - 6, y2 - 3], fillColor=colors.black, strokeWidth=0))

    arrow(110, 98, 160, 70)
    arrow(110, 32, 160, 60)
    arrow(270, 65, 320, 98)
    d.add(Line(380, 82, 380, 48, strokeWidth=0.8))
    d.add(Polygon([380, 48, 377, 54, 383, 54], fillColor=colors.black, strokeWidth=0))
    return d


def _story(spec: DocSpec, tracker: _Tracker) -> list[Flowable]:
    labels = spec.labels
    story: list[Flowable] = [
        _para(escape(spec.title_line), "title", "title", tracker),
        Paragraph(
            f"{labels.revision} {escape(spec.revision)} &nbsp;|&nbsp; {labels.effective_date} {spec.effective}"
            f" &nbsp;|&nbsp; {labels.owner} {escape(spec.owner)}",
            tracker.styles["meta"],
        ),
    ]
    blocks = spec.blocks

    def at(i: int) -> Block | None:
        return blocks[i] if 0 <= i < len(blocks) else None

    def table_follows(i: int) -> bool:
        return isinstance(at(i), T) or (isinstance(at(i), P) and isinstance(at(i + 1), T))

    for i, block in enumerate(blocks):
        if isinstance(block, P) and isinstance(at(i + 1), T):
            continue  # rendered together with its table
        if isinstance(block, H) and table_follows(i + 1):
            continue  # kept with the table group so it is never orphaned at a page foot
        if isinstance(block, H):
            story.append(_heading(block, tracker))
        elif isinstance(block, P):
            story.append(_para(_markup(block), block.style, block.key, tracker))
        elif isinstance(block, T):
            context = at(i - 1) if isinstance(at(i - 1), P) else None
            head = at(i - 2) if context is not None else at(i - 1)
            heading = _heading(head, tracker) if isinstance(head, H) else None
            story += _table_flowables(block, context, heading, tracker)
        elif isinstance(block, Fig):
            story.append(
                KeepTogether(
                    [
                        _PageMark(block.key, tracker),
                        _figure_drawing(),
                        _para(escape(block.caption), "figcaption", f"{block.key}/caption", tracker),
                    ]
                )
            )
        elif isinstance(block, Columns):
            inner: list[Flowable] = []
            for sub in block.blocks:
                if isinstance(sub, H):
                    inner.append(_heading(sub, tracker))
                else:
                    # Plain paragraphs so the columns can balance by splitting them.
                    inner.append(Paragraph(_markup(sub), tracker.styles[sub.style]))
            story.append(_PageMark("columns", tracker))
            story.append(BalancedColumns(inner, nCols=2, innerPadding=14, name=f"{spec.doc_id}-cols"))
    return story


def _heading(h: H, tracker: _Tracker) -> Paragraph:
    para = _para(f"{escape(h.number)} {escape(h.title)}", "h1" if h.level == 1 else "h2", f"H/{h.number}", tracker)
    para.keepWithNext = 1
    return para


def _render(spec: DocSpec, total_pages: int, tracker: _Tracker) -> tuple[bytes, int]:
    size = A4 if spec.page_size == "A4" else LETTER
    labels = spec.labels
    width, height = size
    buf = BytesIO()
    doc = BaseDocTemplate(
        buf,
        pagesize=size,
        leftMargin=2.2 * cm,
        rightMargin=2.2 * cm,
        topMargin=2.6 * cm,
        bottomMargin=2.3 * cm,
        title=f"{spec.doc_id} {spec.title}",
        subject=f"Standard operating procedure, revision {spec.revision}",
        invariant=1,
        **FIXED_META,
    )

    def furniture(canvas, _doc) -> None:
        canvas.saveState()
        top = height - 1.5 * cm
        canvas.setFont(tracker.face.bold, 8.5)
        canvas.drawString(doc.leftMargin, top, f"{spec.doc_id} {labels.header_revision} {spec.revision}")
        canvas.setFont(tracker.face.regular, 8.5)
        canvas.drawRightString(width - doc.rightMargin, top, spec.title)
        canvas.setLineWidth(0.6)
        canvas.line(doc.leftMargin, top - 5, width - doc.rightMargin, top - 5)
        bottom = 1.3 * cm
        canvas.line(doc.leftMargin, bottom + 11, width - doc.rightMargin, bottom + 11)
        canvas.setFont(tracker.face.regular, 8)
        canvas.drawString(doc.leftMargin, bottom, labels.footer.format(effective=spec.effective))
        canvas.drawRightString(width - doc.rightMargin, bottom, labels.page.format(page=canvas.getPageNumber(), total=total_pages))
        canvas.restoreState()

    frame = Frame(doc.leftMargin, doc.bottomMargin, doc.width, doc.height, id="body")
    doc.addPageTemplates([PageTemplate(id="page", frames=[frame], onPage=furniture)])
    doc.build(_story(spec, tracker))
    return buf.getvalue(), doc.page


def render(spec: DocSpec) -> tuple[bytes, SampleTruth]:
    """Render one document and derive its ground truth from where things landed."""
    # First pass counts pages for the "Page X of Y" footer; the second is the real one.
    face = typeface(spec.script)
    _, n_pages = _render(spec, 0, _Tracker(face))
    tracker = _Tracker(face)
    pdf, n_pages_final = _render(spec, n_pages, tracker)
    assert n_pages_final == n_pages, "page count changed between passes"
    return pdf, truth_from_pages(spec, n_pages, tracker.pages)
