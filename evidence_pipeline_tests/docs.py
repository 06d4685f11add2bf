"""Hand-made ParsedDocs for tests of the stages after parsing (no parser needed)."""

from __future__ import annotations

from evidence_pipeline.records import BBox, ParsedDoc, Table, TableCell, TextBlock


def _cells(header: list[list[tuple[str, int]]], rows: list[list[str]]) -> list[TableCell]:
    cells = []
    for r, row in enumerate(header):
        c = 0
        for text, span in row:
            cells.append(TableCell(row=r, col=c, text=text, col_span=span, column_header=True))
            c += span
    for r, row in enumerate(rows, start=len(header)):
        for c, text in enumerate(row):
            cells.append(TableCell(row=r, col=c, text=text, row_header=c == 0))
    return cells


def lnp_doc(extra_rows: int = 0) -> ParsedDoc:
    """SOP-8812-like: a warning above a two-level-header table with a footnote."""
    header = [
        [("Stream", 1), ("Flow rate (mL/min)", 2), ("Pressure (bar)", 2)],
        [("Stream", 1), ("Min", 1), ("Max", 1), ("Min", 1), ("Max", 1)],
    ]
    rows = [
        ["Aqueous Phase 1", "0.6", "1.8", "1.1", "2.4*"],
        ["Lipid Phase", "0.2", "0.9", "1.0", "2.2"],
    ] + [[f"Stream {i}", f"{i}.1", f"{i}.2", f"{i}.3", f"{i}.4"] for i in range(extra_rows)]
    table = Table(
        id="t0",
        order=5,
        n_rows=len(header) + len(rows),
        n_cols=5,
        cells=_cells(header, rows),
        header_rows=2,
        page=2,
        bbox=BBox(l=72, t=300, r=520, b=420),
        pages=[2],
        caption="Table 1: Pump flow rate limits",
        footnotes=["* Only with the high-pressure manifold installed."],
    )
    blocks = [
        TextBlock(id="b0", label="title", text="Lipid Nanoparticle Formulation", order=0, page=1, bbox=BBox(l=72, t=60, r=500, b=80)),
        TextBlock(id="b1", label="section_header", text="3 Procedure", level=1, order=1, page=2, bbox=BBox(l=72, t=80, r=300, b=95)),
        TextBlock(
            id="b2",
            label="paragraph",
            text="Prepare the mixer as described below. Check the seals.",
            order=2,
            page=2,
            bbox=BBox(l=72, t=100, r=520, b=130),
        ),
        TextBlock(
            id="b3",
            label="section_header",
            text="3.1 Critical process parameters",
            level=2,
            order=3,
            page=2,
            bbox=BBox(l=72, t=200, r=400, b=215),
        ),
        TextBlock(
            id="b4",
            label="paragraph",
            text="WARNING: If processing lipid nanoparticles, confirm the cooling jacket is active.",
            order=4,
            page=2,
            bbox=BBox(l=72, t=230, r=520, b=260),
        ),
        TextBlock(id="b5", label="caption", text="Table 1: Pump flow rate limits", order=4, page=2, bbox=BBox(l=72, t=280, r=400, b=295)),
        TextBlock(
            id="b6",
            label="paragraph",
            text="Record the flow rates in the batch record.",
            order=7,
            page=2,
            bbox=BBox(l=72, t=450, r=520, b=470),
        ),
        TextBlock(
            id="b7", label="section_header", text="4 Acceptance criteria", level=1, order=8, page=3, bbox=BBox(l=72, t=80, r=300, b=95)
        ),
        TextBlock(
            id="b8",
            label="paragraph",
            text="The particle size must be 80 to 100 nm. Polydispersity must be below 0.2.",
            order=9,
            page=3,
            bbox=BBox(l=72, t=100, r=520, b=130),
        ),
        TextBlock(id="b9", label="page_footer", text="Page 2 of 3", order=10, page=2, bbox=BBox(l=250, t=800, r=350, b=815)),
    ]
    # Orders must be unique and follow reading order: caption just before the table.
    blocks = [b.model_copy(update={"order": o}) for b, o in zip(blocks, [0, 1, 2, 3, 4, 5, 7, 8, 9, 10])]
    table = table.model_copy(update={"order": 6})
    return ParsedDoc(
        doc_id="SOP-8812",
        source="SOP-8812.pdf",
        title="Lipid Nanoparticle Formulation",
        n_pages=3,
        content_hash="0" * 64,
        parser="test",
        blocks=blocks,
        tables=[table],
    )


def calibration_register(doc_id: str, first_tag: int) -> ParsedDoc:
    """A calibration register: one paragraph per instrument tag, near-identical wording."""
    blocks = [
        TextBlock(
            id=f"b{i}",
            label="paragraph",
            text=f"Instrument PT-{first_tag + 19 * i} on the Suite B2 skid is calibrated every {6 + i % 3 * 6} months "
            f"against the reference gauge; record the result in the calibration log.",
            order=i,
            page=1 + i // 10,
        )
        for i in range(30)
    ]
    return ParsedDoc(doc_id=doc_id, source=f"{doc_id}.pdf", title=doc_id, n_pages=3, content_hash="0" * 64, parser="test", blocks=blocks)


def box(l, t, r, b) -> BBox:
    return BBox(l=l, t=t, r=r, b=b)


def table_of(tid: str, page: int, box: BBox, rows: list[list[str]], caption: str | None = None, header_rows: int = 1) -> Table:
    """A table from plain rows (header rows first), for the parse-quality tests."""
    cells = [TableCell(row=r, col=c, text=x) for r, row in enumerate(rows) for c, x in enumerate(row)]
    return Table(
        id=tid, order=0, n_rows=len(rows), n_cols=len(rows[0]), cells=cells, header_rows=header_rows, page=page, bbox=box, caption=caption
    )


def doc_with_tables(tables: list[Table]) -> ParsedDoc:
    return ParsedDoc(doc_id="d", source="d.pdf", title="d", n_pages=2, content_hash="h", parser="p", tables=tables)
