"""Deterministic SOP-like sample PDFs with ground truth, for parser and retrieval tests.

``generate_corpus(out_dir)`` writes six PDFs (text layer, standard fonts, no images)
into ``out_dir`` and one ``SampleTruth`` JSON per PDF into ``out_dir.parent / "truth"``.
``write_questions(path)`` writes the retrieval questions of the whole corpus as JSONL.
``generate_corpus`` also writes ``truth/questions.jsonl``; ``python -m
evidence_pipeline.samples OUT_DIR`` runs it.

The documents exercise what makes tables hard to retrieve: a warning paragraph that
governs a table, a two-level header, footnote markers in cells, a table crossing a page
break with its header repeated, a borderless table captioned below, two same-shaped
tables told apart only by caption, two documents whose IDs differ only by digit order,
a figure caption that is not a table caption, and a two-column page.

Output is byte-identical across runs (reportlab ``invariant=1``, fixed metadata, values
computed by formulas rather than a random generator), so a content hash is stable.

Question semantics: ``answers`` are strings that occur literally on ``page`` of
``doc_id``; ``must_include`` are strings the retrieved evidence should carry (the
governing warning, or the caption that tells the table apart). For ``exact_id``
questions the near-twin document holds the same caption, so only ``doc_id`` decides.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Callable, Literal
from xml.sax.saxutils import escape

from pydantic import BaseModel, ConfigDict
from reportlab.graphics.shapes import Drawing, Line, Polygon, Rect, String
from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER
from reportlab.lib.pagesizes import A4, LETTER
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import cm
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

QuestionKind = Literal["table_cell", "footnote", "long_tail", "exact_id", "similar", "prose"]


# --------------------------------------------------------------------------- truth models


class TruthModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TruthSection(TruthModel):
    number: str
    title: str
    level: int
    page: int


class TruthTable(TruthModel):
    label: str  # "Table 1"
    caption: str  # full caption text as printed
    caption_position: Literal["above", "below"]
    pages: list[int]
    header_rows: list[list[str]]  # spanning header text repeated over covered columns
    body_rows: list[list[str]]
    row_pages: list[int]  # page of each body row
    footnotes: dict[str, str]  # marker -> text (without the marker)
    context_above: str | None  # paragraph directly above the caption/table, if any
    ruled: bool
    continues: bool  # crosses a page break (header row repeated on the next page)


class TruthFigure(TruthModel):
    caption: str
    page: int


class TruthQuestion(TruthModel):
    id: str
    question: str
    doc_id: str
    answers: list[str]
    must_include: list[str]
    page: int
    kind: QuestionKind


class SampleTruth(TruthModel):
    doc_id: str
    title: str
    title_line: str  # the title as printed on page 1 (carries the document ID)
    revision: str
    n_pages: int
    page_size: Literal["A4", "Letter"]
    sections: list[TruthSection]
    tables: list[TruthTable]
    figures: list[TruthFigure]
    two_column_pages: list[int]
    questions: list[TruthQuestion]


# --------------------------------------------------------------------------- document spec


@dataclass
class H:
    number: str
    title: str

    @property
    def level(self) -> int:
        return self.number.count(".") + 1


@dataclass
class P:
    text: str
    lead: str = ""  # bold prefix ("Step 3", "WARNING:")
    key: str | None = None
    style: str = "body"

    @property
    def plain(self) -> str:
        return f"{self.lead} {self.text}" if self.lead else self.text


@dataclass
class T:
    key: str
    label: str
    title: str
    header_rows: list[list[str]]  # truth form; spanned cells repeat the text
    body_rows: list[list[str]]
    spans: list[tuple[int, int, int, int]] = field(default_factory=list)  # (row, col, nrows, ncols)
    footnotes: list[tuple[str, str]] = field(default_factory=list)
    caption_position: Literal["above", "below"] = "above"
    separator: str = ": "
    ruled: bool = True
    col_widths: list[float] | None = None
    wrap_cols: frozenset[int] = frozenset()
    # False for a long table: kept together it would be pushed onto a fresh page
    # instead of starting mid-page and crossing the break.
    keep_together: bool = True
    compact: bool = False  # tighter rows, as in long listings

    @property
    def caption(self) -> str:
        return f"{self.label}{self.separator}{self.title}"


@dataclass
class Fig:
    key: str
    caption: str


@dataclass
class Columns:
    blocks: list[H | P]


Block = H | P | T | Fig | Columns


@dataclass
class Q:
    kind: QuestionKind
    question: str
    answers: list[str]
    must_include: list[str]
    at: str  # tracker key whose page is the question's page


@dataclass
class DocSpec:
    doc_id: str
    title: str
    revision: str
    effective: str
    owner: str
    page_size: Literal["A4", "Letter"]
    blocks: list[Block]
    questions: list[Q]

    @property
    def title_line(self) -> str:
        return f"{self.doc_id}: {self.title}"

    def tables(self) -> list[T]:
        return [b for b in self.blocks if isinstance(b, T)]


# --------------------------------------------------------------------------- rendering

BODY = ParagraphStyle("body", fontName="Helvetica", fontSize=10, leading=13.5, spaceAfter=6)
STYLES: dict[str, ParagraphStyle] = {
    "body": BODY,
    "step": ParagraphStyle("step", parent=BODY, leftIndent=14, spaceAfter=4),
    "warning": ParagraphStyle("warning", parent=BODY, spaceBefore=4, spaceAfter=8),
    "ref": ParagraphStyle("ref", parent=BODY, leftIndent=14, spaceAfter=2),
    "title": ParagraphStyle(
        "title", fontName="Helvetica-Bold", fontSize=16, leading=20, spaceAfter=4
    ),
    "meta": ParagraphStyle("meta", fontName="Helvetica", fontSize=9, leading=12, spaceAfter=14),
    "h1": ParagraphStyle(
        "h1", fontName="Helvetica-Bold", fontSize=13, leading=16, spaceBefore=10, spaceAfter=5
    ),
    "h2": ParagraphStyle(
        "h2", fontName="Helvetica-Bold", fontSize=11, leading=14, spaceBefore=6, spaceAfter=4
    ),
    "caption": ParagraphStyle(
        "caption", fontName="Helvetica-Bold", fontSize=9.5, leading=12, spaceBefore=4, spaceAfter=4
    ),
    "figcaption": ParagraphStyle(
        "figcaption", fontName="Helvetica-Oblique", fontSize=9.5, leading=12, alignment=TA_CENTER,
        spaceBefore=4, spaceAfter=8,
    ),
    "footnote": ParagraphStyle("footnote", fontName="Helvetica", fontSize=8, leading=10),
    "cell": ParagraphStyle("cell", fontName="Helvetica", fontSize=9, leading=11),
}
FIXED_META = dict(author="Document Control", creator="evidence_pipeline.samples", producer="ReportLab")


class _Tracker:
    """Pages on which keyed flowables were drawn during one build."""

    def __init__(self) -> None:
        self.pages: dict[str, list[int]] = {}

    def mark(self, key: str, page: int) -> None:
        seen = self.pages.setdefault(key, [])
        if page not in seen:
            seen.append(page)

    def page(self, key: str) -> int:
        return self.pages[key][0]


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
        return Paragraph(text, STYLES[style])
    return _TrackedParagraph(text, STYLES[style], key, tracker)


def _table_flowables(t: T, context: P | None, heading: Flowable | None, tracker: _Tracker) -> list[Flowable]:
    n_head = len(t.header_rows)
    # Render form: a spanned header shows its text once, in its top-left cell.
    covered = {
        (r, c)
        for (r0, c0, nr, nc) in t.spans
        for r in range(r0, r0 + nr)
        for c in range(c0, c0 + nc)
        if (r, c) != (r0, c0)
    }
    data: list[list[object]] = []
    for r, row in enumerate(t.header_rows):
        data.append(["" if (r, c) in covered else v for c, v in enumerate(row)])
    for row in t.body_rows:
        data.append(
            [Paragraph(escape(v), STYLES["cell"]) if c in t.wrap_cols else v for c, v in enumerate(row)]
        )
    table = _TrackedTable(data, colWidths=t.col_widths, repeatRows=n_head, hAlign="LEFT")
    table._key, table._tracker = f"{t.key}", tracker
    cmds: list[tuple] = [
        ("FONT", (0, 0), (-1, n_head - 1), "Helvetica-Bold", 9),
        ("FONT", (0, n_head), (-1, -1), "Helvetica", 9),
        ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
        ("TOPPADDING", (0, 0), (-1, -1), 2.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
        ("LEFTPADDING", (0, 0), (-1, -1), 5),
        ("RIGHTPADDING", (0, 0), (-1, -1), 5),
    ]
    if t.compact:
        cmds += [
            ("FONT", (0, n_head), (-1, -1), "Helvetica", 8.5),
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
    notes = [
        _para(f"{escape(marker)} {escape(text)}", "footnote", f"{t.key}/fn/{marker}", tracker)
        for marker, text in t.footnotes
    ]
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
    story: list[Flowable] = [
        _para(escape(spec.title_line), "title", "title", tracker),
        Paragraph(
            f"Revision {escape(spec.revision)} &nbsp;|&nbsp; Effective date {spec.effective}"
            f" &nbsp;|&nbsp; Owner: {escape(spec.owner)}",
            STYLES["meta"],
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
                    inner.append(Paragraph(_markup(sub), STYLES[sub.style]))
            story.append(_PageMark("columns", tracker))
            story.append(BalancedColumns(inner, nCols=2, innerPadding=14, name=f"{spec.doc_id}-cols"))
    return story


def _heading(h: H, tracker: _Tracker) -> Paragraph:
    para = _para(f"{escape(h.number)} {escape(h.title)}", "h1" if h.level == 1 else "h2", f"H/{h.number}", tracker)
    para.keepWithNext = 1
    return para


def _render(spec: DocSpec, total_pages: int, tracker: _Tracker) -> tuple[bytes, int]:
    size = A4 if spec.page_size == "A4" else LETTER
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
        canvas.setFont("Helvetica-Bold", 8.5)
        canvas.drawString(doc.leftMargin, top, f"{spec.doc_id} Rev. {spec.revision}")
        canvas.setFont("Helvetica", 8.5)
        canvas.drawRightString(width - doc.rightMargin, top, spec.title)
        canvas.setLineWidth(0.6)
        canvas.line(doc.leftMargin, top - 5, width - doc.rightMargin, top - 5)
        bottom = 1.3 * cm
        canvas.line(doc.leftMargin, bottom + 11, width - doc.rightMargin, bottom + 11)
        canvas.setFont("Helvetica", 8)
        canvas.drawString(doc.leftMargin, bottom, f"Effective {spec.effective} - CONFIDENTIAL")
        canvas.drawRightString(
            width - doc.rightMargin, bottom, f"Page {canvas.getPageNumber()} of {total_pages}"
        )
        canvas.restoreState()

    frame = Frame(doc.leftMargin, doc.bottomMargin, doc.width, doc.height, id="body")
    doc.addPageTemplates([PageTemplate(id="page", frames=[frame], onPage=furniture)])
    doc.build(_story(spec, tracker))
    return buf.getvalue(), doc.page


def render(spec: DocSpec) -> tuple[bytes, SampleTruth]:
    """Render one document and derive its ground truth from where things landed."""
    # First pass counts pages for the "Page X of Y" footer; the second is the real one.
    _, n_pages = _render(spec, 0, _Tracker())
    tracker = _Tracker()
    pdf, n_pages_final = _render(spec, n_pages, tracker)
    assert n_pages_final == n_pages, "page count changed between passes"
    return pdf, _truth(spec, n_pages, tracker)


def _truth(spec: DocSpec, n_pages: int, tracker: _Tracker) -> SampleTruth:
    sections = []
    flat: list[Block] = []
    for b in spec.blocks:
        flat += b.blocks if isinstance(b, Columns) else [b]
    for b in flat:
        if isinstance(b, H):
            sections.append(
                TruthSection(number=b.number, title=b.title, level=b.level, page=tracker.page(f"H/{b.number}"))
            )
    tables = []
    for i, b in enumerate(spec.blocks):
        if not isinstance(b, T):
            continue
        prev = spec.blocks[i - 1] if i > 0 else None
        row_pages = [tracker.page(f"{b.key}/row/{row[0]}") for row in b.body_rows]
        pages = sorted(set(row_pages) | {tracker.page(f"{b.key}/caption")})
        tables.append(
            TruthTable(
                label=b.label,
                caption=b.caption,
                caption_position=b.caption_position,
                pages=pages,
                header_rows=b.header_rows,
                body_rows=b.body_rows,
                row_pages=row_pages,
                footnotes=dict(b.footnotes),
                context_above=prev.plain if isinstance(prev, P) else None,
                ruled=b.ruled,
                continues=len(set(row_pages)) > 1,
            )
        )
    figures = [
        TruthFigure(caption=b.caption, page=tracker.page(f"{b.key}/caption"))
        for b in spec.blocks
        if isinstance(b, Fig)
    ]
    questions = [
        TruthQuestion(
            id=f"{spec.doc_id}-q{n:02d}",
            question=q.question,
            doc_id=spec.doc_id,
            answers=q.answers,
            must_include=q.must_include,
            page=tracker.page(q.at),
            kind=q.kind,
        )
        for n, q in enumerate(spec.questions, start=1)
    ]
    return SampleTruth(
        doc_id=spec.doc_id,
        title=spec.title,
        title_line=spec.title_line,
        revision=spec.revision,
        n_pages=n_pages,
        page_size=spec.page_size,
        sections=sections,
        tables=tables,
        figures=figures,
        two_column_pages=tracker.pages.get("columns", []),
        questions=questions,
    )


# --------------------------------------------------------------------------- corpus content


def _steps(start: int, texts: list[str]) -> list[P]:
    return [P(text, lead=f"Step {start + i}", style="step") for i, text in enumerate(texts)]


def _refs(texts: list[str]) -> list[P]:
    return [P(text, lead=f"[{i}]", style="ref") for i, text in enumerate(texts, start=1)]


def _cell_q(kind: QuestionKind, table: T, row: str, question: str, answer: str, must: list[str] | None = None) -> Q:
    return Q(kind, question, [answer], must if must is not None else [table.caption], f"{table.key}/row/{row}")


def _lnp_doc() -> DocSpec:
    warning = P(
        "If processing lipid nanoparticles, confirm the cooling jacket is active before starting the pumps.",
        lead="WARNING:",
        style="warning",
    )
    t1 = T(
        key="T1",
        label="Table 1",
        title="Pump flow rate limits",
        header_rows=[
            ["Stream", "Flow rate (mL/min)", "Flow rate (mL/min)", "Pressure (bar)", "Pressure (bar)"],
            ["", "Min", "Max", "Min", "Max"],
        ],
        spans=[(0, 1, 1, 2), (0, 3, 1, 2)],
        body_rows=[
            ["Aqueous Phase 1", "0.6", "1.8", "0.35", "2.4*"],
            ["Aqueous Phase 2", "0.75", "2.25", "0.41", "2.65*"],
            ["Lipid (ethanol) phase", "0.26", "0.84", "0.29", "1.95\u2020"],
            ["Dilution buffer", "1.35", "4.05", "0.52", "3.1"],
        ],
        footnotes=[
            ("*", "Only with the high-pressure manifold installed."),
            ("\u2020", "Read at pressure transducer PT-104 on the ethanol line."),
        ],
        col_widths=[130, 62, 62, 62, 62],
    )
    t2 = T(
        key="T2",
        label="Table 2",
        title="Release specifications for LNP drug substance",
        header_rows=[["Attribute", "Method", "Acceptance criterion"]],
        body_rows=[
            ["Particle size (Z-average)", "Dynamic light scattering", "70-110 nm"],
            ["Polydispersity index", "Dynamic light scattering", "NMT 0.19"],
            ["Encapsulation efficiency", "RiboGreen assay", "NLT 91%"],
            ["mRNA content", "RiboGreen assay", "0.093-0.127 mg/mL"],
            ["Residual ethanol", "GC-FID", "NMT 470 ppm"],
            ["Bacterial endotoxin", "Kinetic LAL", "NMT 8.4 EU/mL"],
            ["pH", "Potentiometry", "7.1-7.7"],
        ],
    )
    cooling = "confirm the cooling jacket is active"
    blocks: list[Block] = [
        H("1", "Purpose"),
        P(
            "This procedure describes the formulation of lipid nanoparticles (LNP) that encapsulate messenger "
            "RNA by microfluidic mixing of an ethanolic lipid solution with an acidic aqueous mRNA solution, "
            "followed by in-line dilution and transfer to tangential flow filtration. It defines the critical "
            "process parameters of the mixing step and the release specifications of the drug substance."
        ),
        H("2", "Scope"),
        P(
            "This SOP applies to the microfluidic mixing skid MX-300 in suite B2 of the clinical manufacturing "
            "facility and covers batches from 0.5 L to 12 L of formulated drug substance. Development-scale "
            "mixing on benchtop cartridges is out of scope and is described in SOP-8815.",
            key="P/scope",
        ),
        H("3", "Responsibilities"),
        P(
            "Manufacturing operators execute the procedure and record every parameter in the electronic batch "
            "record. The shift supervisor verifies the calibration status of the pumps and pressure transducers "
            "before each campaign. Quality Assurance reviews the completed batch record within 5 working days "
            "of batch completion.",
            key="P/resp",
        ),
        H("4", "Procedure"),
        H("4.1", "Preparation of solutions"),
        *_steps(
            1,
            [
                "Dissolve the ionizable lipid, DSPC, cholesterol and PEG-lipid in absolute ethanol at a molar "
                "ratio of 50:10:38.5:1.5 to a total lipid concentration of 12.5 mM.",
                "Dilute the mRNA drug substance in 25 mM sodium acetate buffer, pH 4.0, to a concentration of "
                "0.174 mg/mL.",
                "Filter both solutions through a 0.2 \u00b5m polyethersulfone filter into the feed vessels.",
                "Equilibrate both feed vessels at 18 \u00b1 2 \u00b0C for at least 40 minutes before mixing.",
            ],
        ),
        H("4.2", "Critical process parameters"),
        P(
            "The pump flow rates and line pressures below are critical process parameters. Operate within "
            "these limits throughout mixing and record any excursion as a deviation. The flow rate ratio of "
            "aqueous to ethanol phase is held at 3:1 for all batch sizes."
        ),
        warning,
        t1,
        H("4.3", "Mixing and in-line dilution"),
        *_steps(
            5,
            [
                "Prime both pump lines with their solutions and discard the first 35 mL of mixed output to waste.",
                "Start the aqueous and ethanol pumps simultaneously from the skid controller and collect the "
                "mixed stream after the priming volume.",
                "Dilute the mixed stream in-line with dilution buffer to reduce the ethanol content before "
                "collection. Figure 1 shows the arrangement of feeds, mixer and dilution point.",
            ],
        ),
        Fig("F1", "Figure 1: Mixer schematic"),
        P(
            "Collect the diluted LNP suspension in a single-use bag and start tangential flow filtration "
            "within 45 minutes of mixing. Record the start and end time of collection in the batch record.",
            key="P/tff",
        ),
        H("5", "Acceptance criteria"),
        P(
            "The formulated drug substance is released against the specifications in Table 2. Results outside "
            "these limits are handled under the out-of-specification procedure and the batch is placed on hold."
        ),
        t2,
        H("6", "Storage"),
        P(
            "Store the filled drug substance bags at -60 \u00b0C or below. The maximum storage period before "
            "fill and finish is 9 months from the date of formulation.",
            key="P/storage",
        ),
        H("7", "References"),
        *_refs(
            [
                "SOP-8815 Benchtop LNP formulation for development batches.",
                "SOP-ENG-114 Calibration of process instruments.",
                "ICH Q8(R2) Pharmaceutical development.",
            ]
        ),
    ]
    questions = [
        _cell_q("table_cell", t1, "Aqueous Phase 1", "What is the maximum flow rate of Aqueous Phase 1 in mL/min during LNP mixing?", "1.8", [cooling]),
        _cell_q("table_cell", t1, "Dilution buffer", "What is the minimum line pressure for the dilution buffer stream?", "0.52", [cooling]),
        _cell_q("table_cell", t1, "Lipid (ethanol) phase", "What maximum flow rate is allowed for the lipid (ethanol) phase?", "0.84", [cooling]),
        _cell_q("table_cell", t1, "Aqueous Phase 2", "What is the maximum pressure for Aqueous Phase 2 on the microfluidic skid?", "2.65*", [cooling]),
        Q("footnote", "When does the 2.4 bar pressure limit for Aqueous Phase 1 apply?", ["Only with the high-pressure manifold installed."], [t1.caption], "T1/fn/*"),
        Q("footnote", "At which pressure transducer is the ethanol line pressure read?", ["PT-104"], [t1.caption], "T1/fn/\u2020"),
        _cell_q("table_cell", t2, "Encapsulation efficiency", "What is the acceptance criterion for encapsulation efficiency of the LNP drug substance?", "NLT 91%"),
        _cell_q("table_cell", t2, "Residual ethanol", "What is the residual ethanol limit for the LNP drug substance?", "NMT 470 ppm"),
        _cell_q("table_cell", t2, "Polydispersity index", "What polydispersity index is acceptable for release of the LNP drug substance?", "NMT 0.19"),
        Q("prose", "What batch sizes does the microfluidic mixing SOP cover?", ["0.5 L to 12 L"], [], "P/scope"),
        Q("prose", "Within how many working days does QA review the LNP batch record?", ["5 working days"], [], "P/resp"),
        Q("prose", "How soon after mixing must tangential flow filtration of the LNP suspension start?", ["45 minutes"], [], "P/tff"),
        Q("prose", "What is the maximum storage period of the LNP drug substance before fill and finish?", ["9 months"], [], "P/storage"),
        Q("prose", "What molar ratio of ionizable lipid, DSPC, cholesterol and PEG-lipid is used?", ["50:10:38.5:1.5"], [], "H/4.1"),
    ]
    return DocSpec("SOP-8812", "Lipid Nanoparticle Formulation by Microfluidic Mixing", "2", "2024-02-12",
                   "Drug Substance Manufacturing", "A4", blocks, questions)


def _qa_doc(
    doc_id: str,
    revision: str,
    effective: str,
    title: str,
    purpose: str,
    scope: str,
    prep: list[str],
    execution: list[str],
    acceptance_intro: str,
    t1: T,
    sampling: list[list[str]],
    review_months: str,
    chapter: str,
    refs: list[str],
    questions: Callable[[T, T], list[Q]],
) -> DocSpec:
    t2 = T(
        key="T2",
        label="Table 2",
        title="Sampling plan",
        header_rows=[["Batch size (units)", "Sample size (units)", "Retained samples"]],
        body_rows=sampling,
        col_widths=[140, 120, 110],
    )
    blocks: list[Block] = [
        H("1", "Purpose"),
        P(purpose),
        H("2", "Scope"),
        P(scope),
        H("3", "Responsibilities"),
        P(
            "QC analysts perform the testing described here and document results in the laboratory information "
            "management system. The QC supervisor reviews raw data and approves results. Quality Assurance "
            "owns this procedure and approves deviations from it."
        ),
        H("4", "Procedure"),
        H("4.1", "Preparation"),
        *_steps(1, prep),
        H("4.2", "Execution"),
        *_steps(len(prep) + 1, execution),
        H("5", "Acceptance criteria"),
        P(acceptance_intro),
        t1,
        H("6", "Sampling"),
        P(
            "Samples are drawn at random across the whole filling run, including the beginning, middle and end "
            "of the run, according to the batch size in Table 2."
        ),
        t2,
        H("7", "Review period"),
        P(
            f"This SOP is reviewed every {review_months} or earlier when the referenced compendial chapter "
            f"{chapter} is revised.",
            key="P/review",
        ),
        H("8", "References"),
        *_refs(refs),
    ]
    spec = DocSpec(doc_id, title, revision, effective, "Quality Control", "Letter", blocks, [])
    spec.questions = questions(t1, t2)
    return spec


def _visual_inspection_doc() -> DocSpec:
    t1 = T(
        key="T1",
        label="Table 1",
        title="Defect classification for filled vials",
        header_rows=[["Defect", "Class", "AQL (%)"]],
        body_rows=[
            ["Cracked or broken vial", "Critical", "0.010"],
            ["Visible particle in solution", "Critical", "0.065"],
            ["Missing or loose crimp", "Major", "0.40"],
            ["Stopper not fully seated", "Major", "0.65"],
            ["Fill volume visibly low", "Major", "0.15"],
            ["Cosmetic scratch on vial body", "Minor", "1.5"],
            ["Discoloured crimp cap", "Minor", "2.5"],
        ],
        col_widths=[190, 90, 80],
    )

    def questions(t1: T, t2: T) -> list[Q]:
        return [
            _cell_q("exact_id", t2, "3,201 to 10,000", "Under SOP-QA-070, how many units are sampled from a batch of 3,201 to 10,000 units?", "315"),
            _cell_q("exact_id", t2, "Up to 1,200", "Under SOP-QA-070, how many retained samples are kept for a batch of up to 1,200 units?", "32"),
            Q("exact_id", "How often is SOP-QA-070 reviewed?", ["every 24 months"], [], "P/review"),
            # "USP <87>" is only in the references list.
            Q("exact_id", "Which USP chapter on biological reactivity is referenced by SOP-QA-070?", ["USP <87>"], [], "H/8"),
            _cell_q("table_cell", t1, "Stopper not fully seated", "What AQL applies to a stopper that is not fully seated during visual inspection?", "0.65"),
            _cell_q("table_cell", t1, "Cracked or broken vial", "What is the AQL for cracked or broken vials?", "0.010"),
            Q("prose", "What light intensity is required at the visual inspection station?", ["2,000 to 3,750 lux"], [], "P/lux"),
        ]

    spec = _qa_doc(
        "SOP-QA-070",
        "3",
        "2023-11-06",
        "Visual Inspection of Filled Vials",
        "This procedure defines the manual visual inspection of filled and crimped vials for visible particles, "
        "container defects and closure defects, and the acceptance sampling that follows 100% inspection.",
        "It applies to all parenteral drug products filled in 2R to 10R glass vials on fill line FL-2. "
        "Automated inspection on the AVI-40 machine is covered by a separate procedure.",
        [
            "Verify that the inspection booth has a matte black and a non-glare white background and that the "
            "inspector holds a current qualification.",
            "Measure the light intensity at the inspection point and record it in the log.",
            "Allow the vials to reach room temperature so that condensation does not mask defects.",
        ],
        [
            "Swirl each vial gently, then hold it against the white background for 5 seconds and against the "
            "black background for 5 seconds.",
            "Reject every vial with a defect listed in Table 1 and place it in the labelled reject tray.",
            "Count the rejects by defect class and record the counts in the batch record.",
            "After 100% inspection, draw an acceptance sample according to Table 2 and inspect it with a "
            "second, independent inspector.",
        ],
        "Defects are classified as critical, major or minor. The acceptance quality limit (AQL) for the "
        "acceptance sample is given per defect in Table 1.",
        t1,
        [
            ["Up to 1,200", "125", "32"],
            ["1,201 to 3,200", "200", "48"],
            ["3,201 to 10,000", "315", "64"],
            ["10,001 to 35,000", "500", "96"],
        ],
        "24 months",
        "USP <790>",
        [
            "USP <790> Visible Particulates in Injections.",
            "USP <1790> Visual Inspection of Injections.",
            "USP <87> Biological Reactivity Tests, In Vitro (elastomeric closures).",
        ],
        questions,
    )
    # The light-intensity fact lives in its own paragraph so its page is known.
    i = next(n for n, b in enumerate(spec.blocks) if isinstance(b, H) and b.number == "4.2")
    spec.blocks.insert(
        i,
        P(
            "The light intensity at the inspection point must be in the range 2,000 to 3,750 lux; stop inspection "
            "and call maintenance when the measured value is outside this range.",
            key="P/lux",
        ),
    )
    return spec


def _endotoxin_doc() -> DocSpec:
    t1 = T(
        key="T1",
        label="Table 1",
        title="Endotoxin limits by product",
        header_rows=[["Product", "Route", "Endotoxin limit (EU/mL)", "Maximum valid dilution"]],
        body_rows=[
            ["mRNA-LNP drug product", "Intramuscular", "17.5", "1:350"],
            ["Placebo vehicle", "Intramuscular", "11.2", "1:224"],
            ["Water for injection", "Process water", "0.25", "1:5"],
            ["Formulation buffer", "Process intermediate", "3.6", "1:72"],
        ],
        col_widths=[135, 115, 120, 105],
    )

    def questions(t1: T, t2: T) -> list[Q]:
        return [
            _cell_q("exact_id", t2, "3,201 to 10,000", "Under SOP-QA-007, how many units are sampled from a batch of 3,201 to 10,000 units?", "19"),
            _cell_q("exact_id", t2, "10,001 to 35,000", "Under SOP-QA-007, how many retained samples are kept for a batch of 10,001 to 35,000 units?", "58"),
            Q("exact_id", "How often is SOP-QA-007 reviewed?", ["every 36 months"], [], "P/review"),
            Q("exact_id", "Which USP chapter does SOP-QA-007 follow for bacterial endotoxins?", ["USP <85>"], [], "title"),
            _cell_q("table_cell", t1, "mRNA-LNP drug product", "What is the endotoxin limit for the mRNA-LNP drug product in EU/mL?", "17.5"),
            _cell_q("table_cell", t1, "Placebo vehicle", "What is the maximum valid dilution for the placebo vehicle?", "1:224"),
            Q("prose", "What lysate sensitivity is used for the kinetic chromogenic endotoxin assay?", ["0.05 EU/mL"], [], "P/lambda"),
        ]

    spec = _qa_doc(
        "SOP-QA-007",
        "5",
        "2024-01-22",
        "Endotoxin Testing per USP <85>",
        "This procedure defines the determination of bacterial endotoxins in drug products, process water and "
        "intermediates by the kinetic chromogenic LAL method described in USP <85>.",
        "It applies to release and in-process samples tested in QC microbiology laboratory M-12. Gel-clot "
        "testing for investigations is covered by a separate procedure.",
        [
            "Reconstitute the control standard endotoxin and vortex for at least 15 minutes.",
            "Prepare a standard curve from 5 EU/mL to 0.005 EU/mL in endotoxin-free water.",
            "Dilute each sample within its maximum valid dilution and prepare positive product controls.",
        ],
        [
            "Load standards, samples and controls in duplicate into the microplate and add the reconstituted "
            "lysate.",
            "Incubate the plate in the reader at 37 \u00b0C and read the onset time for each well.",
            "Accept the run when the standard curve correlation coefficient is at least 0.980 and the spike "
            "recovery is between 50% and 200%.",
            "Report the endotoxin result of each sample against its limit in Table 1.",
        ],
        "Endotoxin limits are set per product from the maximum dose and the route of administration. The "
        "maximum valid dilution in Table 1 is calculated from the limit and the lysate sensitivity.",
        t1,
        [
            ["Up to 1,200", "7", "14"],
            ["1,201 to 3,200", "13", "26"],
            ["3,201 to 10,000", "19", "38"],
            ["10,001 to 35,000", "29", "58"],
        ],
        "36 months",
        "USP <85>",
        [
            "USP <85> Bacterial Endotoxins Test.",
            "USP <1085> Guidelines on the Endotoxins Test.",
            "Ph. Eur. 2.6.14 Bacterial endotoxins.",
        ],
        questions,
    )
    i = next(n for n, b in enumerate(spec.blocks) if isinstance(b, H) and b.number == "4.2")
    spec.blocks.insert(
        i,
        P(
            "The labelled lysate sensitivity (lambda) used for all calculations in this procedure is "
            "0.05 EU/mL; a new lysate lot is qualified before use.",
            key="P/lambda",
        ),
    )
    return spec


_INSTRUMENTS = [
    ("TT", "Temperature transmitter", ["-20 to 150 \u00b0C", "0 to 100 \u00b0C", "-80 to 40 \u00b0C"], "\u00b0C", 12),
    ("PT", "Pressure transmitter", ["0 to 6 bar", "0 to 10 bar", "-1 to 4 bar"], "bar", 12),
    ("FT", "Flow meter", ["0 to 20 L/min", "0 to 250 L/h", "0 to 5 L/min"], "%", 24),
    ("LT", "Level transmitter", ["0 to 500 L", "0 to 2000 L", "0 to 200 L"], "% span", 24),
    ("AT", "pH probe", ["2 to 12 pH", "0 to 14 pH", "4 to 10 pH"], "pH", 3),
    ("CT", "Conductivity sensor", ["0 to 200 mS/cm", "0 to 20 mS/cm", "0 to 2 mS/cm"], "mS/cm", 6),
    ("WT", "Weighing scale", ["0 to 60 kg", "0 to 600 kg", "0 to 6 kg"], "kg", 12),
]
_LOCATIONS = ["Suite B2 mixing skid", "Suite B2 TFF skid", "Buffer prep C1", "WFI loop", "Cold room CR-03", "Fill line FL-2"]


def _calibration_rows(n: int = 60) -> list[list[str]]:
    rows = []
    for i in range(n):
        prefix, kind, ranges, unit, interval = _INSTRUMENTS[i % len(_INSTRUMENTS)]
        tag = f"{prefix}-{1101 + 19 * i}"
        # 37 is coprime to 89 and i < 89, so every row's tolerance value is distinct;
        # three decimals keep them apart from the two-decimal values of the other documents.
        tol = (i * 37 % 89 + 11) / 1000
        rows.append(
            [tag, kind, _LOCATIONS[(i * 5) % len(_LOCATIONS)], ranges[i % 3], f"\u00b1{tol:.3f} {unit}", str(interval)]
        )
    return rows


def _calibration_doc() -> DocSpec:
    t1 = T(
        key="T1",
        label="Table 1",
        title="Calibration status labels",
        header_rows=[["Label colour", "Status", "Meaning"]],
        body_rows=[
            ["Green", "Calibrated", "Within tolerance; use permitted until the due date on the label."],
            ["Yellow", "Limited use", "Usable only in the range written on the label."],
            ["Red", "Out of service", "Out of tolerance or overdue; must not be used."],
            ["Blue", "No calibration required", "Indicator only; not used for GMP decisions."],
        ],
        col_widths=[80, 120, 250],
        wrap_cols=frozenset({2}),
    )
    rows = _calibration_rows()
    t2 = T(
        key="T2",
        label="Table 2",
        title="Calibration intervals for process instruments",
        header_rows=[["Tag", "Instrument", "Location", "Range", "Tolerance", "Interval (months)"]],
        body_rows=rows,
        col_widths=[45, 107, 92, 74, 66, 84],
        keep_together=False,
        compact=True,
    )
    t3 = T(
        key="T3",
        label="Table 3",
        separator=" \u2013 ",
        title="Buffer compositions",
        header_rows=[["Buffer", "pH at 25 \u00b0C", "Composition", "Use after opening"]],
        body_rows=[
            ["Phthalate buffer", "4.005", "10.12 g/L potassium hydrogen phthalate", "8 weeks"],
            ["Phosphate buffer", "6.865", "3.39 g/L KH2PO4 + 3.53 g/L Na2HPO4", "6 weeks"],
            ["Borate buffer", "9.180", "3.80 g/L sodium tetraborate decahydrate", "4 weeks"],
            ["Carbonate buffer", "10.012", "2.09 g/L NaHCO3 + 2.64 g/L Na2CO3", "2 weeks"],
        ],
        caption_position="below",
        ruled=False,
    )
    blocks: list[Block] = [
        H("1", "Purpose"),
        P(
            "This procedure defines how process instruments that measure GMP-relevant parameters are calibrated, "
            "labelled and released for use, and at what intervals they are recalibrated."
        ),
        H("2", "Scope"),
        P(
            "It applies to temperature, pressure, flow, level, pH, conductivity and weighing instruments on "
            "manufacturing equipment, utilities and cold rooms. Laboratory balances and analytical instruments "
            "are calibrated under the QC equipment program."
        ),
        H("3", "Responsibilities"),
        P(
            "Metrology technicians perform calibrations against reference standards traceable to national "
            "standards. The engineering planner schedules calibrations in the maintenance system so that no "
            "instrument becomes overdue. Quality Assurance approves the assessment of out-of-tolerance results."
        ),
        P(
            "System owners make instruments available on the scheduled date and confirm after calibration that "
            "the instrument has been returned to service with a valid label."
        ),
        H("3.1", "Definitions"),
        P("The reading of the instrument before any adjustment, compared with the reference standard.", lead="As-found:"),
        P("The reading of the instrument after adjustment, when an adjustment was needed.", lead="As-left:"),
        P(
            "A standard of higher accuracy, with a valid certificate, against which the instrument is compared. "
            "Its uncertainty is at most one quarter of the tolerance of the instrument.",
            lead="Reference standard:",
        ),
        P(
            "The maximum time between two calibrations. The due date is the calibration date plus the interval.",
            lead="Calibration interval:",
        ),
        H("4", "Calibration status labels"),
        P(
            "Every calibrated instrument carries a status label that shows the tag, the calibration date and "
            "the due date. The label colour tells the user whether the instrument may be used."
        ),
        t1,
        H("5", "Calibration intervals"),
        P(
            "Initial intervals follow the criticality of the measured parameter and the stability history of "
            "the instrument type. Intervals may be extended after three consecutive as-found results within "
            "tolerance, with engineering and QA approval."
        ),
        P(
            "The tolerance is the maximum permitted as-found error. Instruments found outside it are handled "
            "as described in section 7."
        ),
        t2,
        H("6", "Calibration of pH probes"),
        *_steps(
            1,
            [
                "Rinse the probe with purified water and blot it dry with a lint-free tissue.",
                "Calibrate at three points using the phthalate, phosphate and borate buffers, in that order.",
                "Check the slope; it must be between 95% and 102% of the theoretical Nernst slope.",
            ],
        ),
        P(
            "Use the certified reference buffers listed below. Record the lot number and the opening date on "
            "each bottle and discard it after the period shown."
        ),
        t3,
        H("7", "Out-of-tolerance results"),
        P(
            "When an instrument is found outside its tolerance, label it red, notify the system owner and report "
            "the result to Quality Assurance within 2 working days. The system owner assesses the impact on "
            "every batch processed since the last passing calibration.",
            key="P/oot",
        ),
        P(
            "Instruments overdue by more than 14 days are tagged out of service until they have been "
            "recalibrated.",
            key="P/overdue",
        ),
        H("8", "References"),
        *_refs(["SOP-QA-070 Visual inspection of filled vials.", "ISPE Good Practice Guide: Calibration Management."]),
    ]
    long_tail_rows = [48, 51, 54, 57, 59]  # all on the continuation page
    questions = [
        Q(
            "long_tail",
            f"What is the calibration tolerance of {rows[i][1].lower()} {rows[i][0]}?",
            [rows[i][4]],
            [t2.caption],
            f"T2/row/{rows[i][0]}",
        )
        for i in long_tail_rows
    ]
    questions += [
        _cell_q("table_cell", t3, "Carbonate buffer", "What is the pH of the carbonate calibration buffer at 25 \u00b0C?", "10.012"),
        _cell_q("table_cell", t3, "Borate buffer", "How long may the borate buffer be used after opening?", "4 weeks"),
        _cell_q("table_cell", t3, "Phthalate buffer", "What is the composition of the phthalate pH buffer?", "10.12 g/L potassium hydrogen phthalate"),
        _cell_q("table_cell", t1, "Yellow", "What status does a yellow calibration label indicate?", "Limited use"),
        Q("prose", "Within how many working days must an out-of-tolerance calibration result be reported to QA?", ["2 working days"], [], "P/oot"),
        Q("prose", "After how many days overdue is an instrument tagged out of service?", ["14 days"], [], "P/overdue"),
    ]
    return DocSpec("SOP-ENG-114", "Calibration of Process Instruments", "4", "2023-09-04", "Engineering",
                   "A4", blocks, questions)


def _hold_time_doc() -> DocSpec:
    header = [["Intermediate", "Container", "Maximum hold (h)", "Bioburden limit (CFU/10 mL)"]]
    items = [
        ("Clarified harvest", "Single-use bag"),
        ("Protein A eluate", "Single-use bag"),
        ("Viral inactivation pool", "Stainless steel tank"),
        ("UF/DF retentate", "Stainless steel tank"),
        ("Formulated bulk", "PETG bottle"),
    ]
    cold = [("97", "14"), ("73", "9"), ("53", "6"), ("121", "23"), ("167", "3")]
    warm = [("11", "46"), ("17", "39"), ("21", "27"), ("29", "52"), ("31", "2")]
    widths = [140, 120, 100, 150]
    t1 = T(key="T1", label="Table 1", title="Hold times at 2\u20138 \u00b0C", header_rows=header,
           body_rows=[[n, c, h, b] for (n, c), (h, b) in zip(items, cold)], col_widths=widths)
    t2 = T(key="T2", label="Table 2", title="Hold times at 25 \u00b0C", header_rows=header,
           body_rows=[[n, c, h, b] for (n, c), (h, b) in zip(items, warm)], col_widths=widths)
    caution = P(
        "Intermediates held at 25 \u00b0C must be protected from light and processed within the same shift.",
        lead="CAUTION:",
        style="warning",
    )
    blocks: list[Block] = [
        H("1", "Purpose"),
        P(
            "This procedure sets the maximum hold times and bioburden limits for process intermediates of the "
            "monoclonal antibody purification process, at refrigerated and at room temperature."
        ),
        H("2", "Scope"),
        P(
            "It applies to intermediates from clarified harvest to formulated bulk produced in the purification "
            "suites P1 and P2. Hold times for cell culture media and buffers are defined in their own "
            "specifications."
        ),
        H("3", "Definitions"),
        P(
            "Hold time is the period from the end of one process step to the start of the next. Bioburden is the "
            "number of colony-forming units (CFU) recovered from a 10 mL sample."
        ),
        P(
            "Hold times start when the last container of the step has been filled and end when the next step "
            "starts drawing from it.",
            key="P/start",
        ),
        H("4", "Hold time limits"),
        H("4.1", "Refrigerated storage"),
        P(
            "The limits below apply to intermediates stored at 2\u20138 \u00b0C in a monitored cold room. Samples "
            "for bioburden are taken at the end of the hold."
        ),
        t1,
        H("4.2", "Room temperature storage"),
        P(
            "Room-temperature holds are permitted only when a refrigerated hold is not possible, for example "
            "during equipment changeover."
        ),
        caution,
        t2,
        H("5", "Extension of hold times"),
        P(
            "A hold time may be extended once by up to 12 hours with QA approval, provided the bioburden "
            "result at the end of the extended hold meets the limit. Repeated extensions require a deviation.",
            key="P/extension",
        ),
        P(
            "Hold time studies supporting these limits are repeated every 3 years or after a process change.",
            key="P/studies",
        ),
        H("6", "References"),
        *_refs(["PDA Technical Report No. 66.", "SOP-8812 Lipid nanoparticle formulation by microfluidic mixing."]),
    ]
    protect = "must be protected from light"
    questions = [
        _cell_q("similar", t2, "Protein A eluate", "What is the maximum hold time for Protein A eluate at 25 \u00b0C?", "17"),
        _cell_q("similar", t1, "Protein A eluate", "What is the maximum hold time for Protein A eluate at 2\u20138 \u00b0C?", "73"),
        _cell_q("similar", t1, "UF/DF retentate", "What bioburden limit applies to UF/DF retentate held refrigerated at 2\u20138 \u00b0C?", "23"),
        _cell_q("similar", t2, "UF/DF retentate", "What bioburden limit applies to UF/DF retentate held at 25 \u00b0C?", "52"),
        _cell_q("similar", t1, "Clarified harvest", "How long can clarified harvest be held at 2\u20138 \u00b0C?", "97"),
        _cell_q("table_cell", t2, "Clarified harvest", "What is the room-temperature bioburden limit for clarified harvest?", "46", [protect]),
        Q("prose", "By how much may an intermediate hold time be extended with QA approval?", ["12 hours"], [], "P/extension"),
        Q("prose", "How often are hold time studies repeated?", ["every 3 years"], [], "P/studies"),
    ]
    return DocSpec("SOP-MFG-231", "Hold Time Limits for Process Intermediates", "1", "2024-04-29",
                   "Downstream Processing", "Letter", blocks, questions)


def _toc_doc() -> DocSpec:
    t1 = T(
        key="T1",
        label="Table 1",
        title="Swab recovery factors by surface",
        header_rows=[["Surface", "Material", "Recovery (%)", "Correction factor"]],
        body_rows=[
            ["Vessel wall", "316L stainless steel\u00b9", "88.6", "1.13"],
            ["Mixing impeller", "316L stainless steel\u00b9", "81.9", "1.22"],
            ["Sight glass", "Borosilicate glass", "93.7", "1.07"],
            ["Gasket", "EPDM", "64.2\u00b2", "1.56"],
            ["Transfer tubing", "Platinum-cured silicone", "58.8\u00b2", "1.70"],
        ],
        footnotes=[
            ("\u00b9", "Electropolished coupons, 25 cm2 swab area."),
            ("\u00b2", "Recovery below 70% requires a correction factor approved by QA."),
        ],
        col_widths=[110, 150, 85, 100],
    )
    blocks: list[Block] = [
        H("1", "Purpose"),
        P(
            "This procedure describes the verification of equipment cleaning by swab sampling and total organic "
            "carbon (TOC) analysis after manual and clean-in-place cleaning of product-contact surfaces."
        ),
        H("2", "Scope"),
        P(
            "It applies to formulation vessels, mixing equipment and transfer lines in suites B2 and C4 after "
            "product changeover. Rinse sampling of closed piping is covered by a separate procedure."
        ),
        Columns(
            [
                H("3", "Background"),
                P(
                    "Total organic carbon is a non-specific measure of residues of product, excipients and "
                    "cleaning agents. Because it responds to any carbon-containing residue, a TOC result is "
                    "compared with a limit calculated from the most toxic and least soluble product made on the "
                    "equipment. Recovery from each surface material is determined in a recovery study with "
                    "spiked coupons, and the measured swab result is corrected with the recovery factor of the "
                    "sampled surface."
                ),
                P(
                    "Swab locations are chosen where residues are most likely to remain: below the impeller, "
                    "on gasket seats, around the sight glass and at the low point of transfer tubing. The "
                    "locations are fixed in the equipment sampling map and are not changed without a change "
                    "control."
                ),
                H("4", "Swab technique"),
                P(
                    "Moisten a low-TOC swab with TOC-grade water and press out excess liquid against the inside "
                    "of the vial. Swab a 25 cm2 area with ten horizontal strokes, turn the swab and repeat with "
                    "ten vertical strokes. Place the swab head in a pre-cleaned vial with 20 mL of TOC-grade "
                    "water and cap the vial immediately."
                ),
                P(
                    "Take one blank swab per sampling session and treat it like the samples. Analyse the "
                    "samples within 24 hours of sampling and keep them at room temperature until analysis."
                ),
            ]
        ),
        H("5", "Recovery factors"),
        P(
            "Multiply each swab result by the correction factor of the sampled surface before comparing it "
            "with the acceptance limit."
        ),
        t1,
        H("6", "Acceptance criteria"),
        P(
            "The corrected TOC result of every swab must not exceed 490 ppb carbon. The blank swab must read "
            "below 60 ppb carbon; otherwise the sampling session is repeated.",
            key="P/limit",
        ),
        P(
            "A failing result requires recleaning and resampling of the equipment; three consecutive failures "
            "on the same item open an investigation.",
            key="P/failure",
        ),
        H("7", "References"),
        *_refs(["USP <643> Total Organic Carbon.", "PDA Technical Report No. 29, Points to Consider for Cleaning Validation."]),
    ]
    questions = [
        _cell_q("table_cell", t1, "Gasket", "What is the swab recovery from EPDM gaskets?", "64.2\u00b2"),
        _cell_q("table_cell", t1, "Mixing impeller", "What correction factor applies to swabs from the mixing impeller?", "1.22"),
        Q("footnote", "What is required when swab recovery is below 70%?", ["a correction factor approved by QA"], [t1.caption], "T1/fn/\u00b2"),
        Q("footnote", "What swab area were the stainless steel recovery coupons?", ["25 cm2 swab area"], [t1.caption], "T1/fn/\u00b9"),
        Q("prose", "What is the TOC acceptance limit for a corrected swab result?", ["490 ppb carbon"], [], "P/limit"),
        Q("prose", "How many consecutive cleaning failures open an investigation?", ["three consecutive failures"], [], "P/failure"),
    ]
    return DocSpec("SOP-QC-415", "Cleaning Verification by TOC Swab Sampling", "2", "2024-05-13",
                   "Quality Control", "A4", blocks, questions)


def corpus_specs() -> list[DocSpec]:
    return [
        _lnp_doc(),
        _visual_inspection_doc(),
        _endotoxin_doc(),
        _calibration_doc(),
        _hold_time_doc(),
        _toc_doc(),
    ]


# --------------------------------------------------------------------------- public API


def build_corpus() -> list[tuple[str, bytes, SampleTruth]]:
    """Render every document in memory: (doc_id, pdf bytes, truth)."""
    out = []
    for spec in corpus_specs():
        pdf, truth = render(spec)
        out.append((spec.doc_id, pdf, truth))
    return out


QUESTIONS_FILE = "questions.jsonl"


def truth_dir_for(out_dir: Path) -> Path:
    return Path(out_dir).parent / "truth"


def generate_corpus(out_dir: Path) -> list[Path]:
    """Write the PDFs into ``out_dir``, their truth JSON into ``out_dir.parent / "truth"``
    and all questions into ``truth/questions.jsonl``."""
    out_dir = Path(out_dir)
    truth_dir = truth_dir_for(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    truth_dir.mkdir(parents=True, exist_ok=True)
    paths, truths = [], []
    for doc_id, pdf, truth in build_corpus():
        path = out_dir / f"{doc_id}.pdf"
        path.write_bytes(pdf)
        (truth_dir / f"{doc_id}.json").write_text(truth.model_dump_json(indent=2) + "\n", encoding="utf-8")
        paths.append(path)
        truths.append(truth)
    write_questions(truth_dir / QUESTIONS_FILE, truths)
    return paths


def load_truth(truth_dir: Path) -> list[SampleTruth]:
    return [
        SampleTruth.model_validate_json(p.read_text(encoding="utf-8"))
        for p in sorted(Path(truth_dir).glob("*.json"))
    ]


def corpus_questions(truths: list[SampleTruth] | None = None) -> list[TruthQuestion]:
    if truths is None:
        truths = [truth for _, _, truth in build_corpus()]
    return [q for t in truths for q in t.questions]


def write_questions(out_path: Path, truths: list[SampleTruth] | None = None) -> Path:
    """Write every question of the corpus as JSON lines (one ``TruthQuestion`` dict a line)."""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(q.model_dump(), ensure_ascii=False) for q in corpus_questions(truths)]
    out_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out_path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m evidence_pipeline.samples OUT_DIR", file=sys.stderr)
        return 2
    out_dir = Path(args[0])
    for path in generate_corpus(out_dir):
        print(path)
    print(truth_dir_for(out_dir) / QUESTIONS_FILE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
