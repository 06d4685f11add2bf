"""The Docling parser on real PDFs (generated SOPs, Docling's own test PDFs, one 10-Q) and small DOCX/HTML/MD files."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from evidence_pipeline.errors import ParseError
from evidence_pipeline.parser import DoclingParser
from evidence_pipeline.records import ParsedDoc, Table, sha256_file
from evidence_pipeline.tools.samples.truth import SampleTruth


def _dash(text: str) -> str:
    # For cell-by-cell comparisons only: any dash counts as a dash. Captions, where the
    # dash must come out as printed (parser/dashes.py), are compared exactly.
    return re.sub("[\u2010-\u2015\u2212]", "-", text)


@pytest.fixture(scope="module")
def parser() -> DoclingParser:
    return DoclingParser()


@pytest.fixture(scope="module")
def samples(parser, sample_corpus) -> dict[str, tuple[ParsedDoc, SampleTruth]]:
    truth_dir = sample_corpus.parent / "truth"
    out = {}
    for pdf in sorted(sample_corpus.glob("*.pdf")):
        truth = SampleTruth.model_validate_json((truth_dir / f"{pdf.stem}.json").read_text())
        out[pdf.stem] = (parser.parse(pdf), truth)
    return out


@pytest.fixture(scope="module")
def docling_tests(parser, corpora) -> dict[str, tuple[ParsedDoc, dict]]:
    root = corpora / "docling-tests"
    out = {}
    for name in ("2305.03393v1-pg9", "redp5110_sampled", "normal_4pages"):
        truth = json.loads((root / "groundtruth" / f"{name}.json").read_text())
        out[name] = (parser.parse(root / "pdfs" / f"{name}.pdf"), truth)
    return out


def _by_caption(doc: ParsedDoc, caption: str) -> Table:
    found = [t for t in doc.tables if t.caption and t.caption.strip() == caption.strip()]
    assert found, f"{doc.doc_id}: no table captioned {caption!r}; captions: {[t.caption for t in doc.tables]}"
    return found[0]


# ----------------------------------------------------------------- generated SOPs


def test_every_generated_table_is_found_with_its_caption_header_body_and_footnotes(samples):
    checked = 0
    for doc, truth in samples.values():
        for want in truth.tables:
            table = _by_caption(doc, want.caption)
            parts = [table] + [t for t in doc.tables if t.continues == table.id]
            assert len(parts) > 1 if want.continues else len(parts) == 1, (doc.doc_id, want.label)
            assert table.header_rows == len(want.header_rows), (doc.doc_id, want.label)
            assert [[_dash(x) for x in row] for row in table.grid()[: table.header_rows]] == [
                [_dash(x) for x in row] for row in want.header_rows
            ]
            body = [row for part in parts for row in part.grid()[part.header_rows :]]
            assert [[_dash(x) for x in row] for row in body] == [[_dash(x) for x in row] for row in want.body_rows], (
                doc.doc_id,
                want.label,
            )
            assert len(table.footnotes) == len(want.footnotes), (doc.doc_id, want.label, table.footnotes)
            for marker in want.footnotes:
                assert any(f.startswith(marker) for f in table.footnotes), (marker, table.footnotes)
            assert all(c.column_header for c in table.cells if c.row < table.header_rows)
            assert all(c.row_header for c in table.cells if c.col == 0 and c.row >= table.header_rows)
            checked += 1
    assert checked >= 10


def test_two_level_ruled_header_has_spanning_cells(samples):
    doc, _ = samples["SOP-8812"]
    table = _by_caption(doc, "Table 1: Pump flow rate limits")
    spans = {(c.text, c.col_span) for c in table.cells if c.row == 0}
    assert ("Flow rate (mL/min)", 2) in spans and ("Pressure (bar)", 2) in spans
    assert table.header_rows == 2 and table.page == 1 and table.bbox is not None


def test_caption_below_a_borderless_table_and_warning_paragraph_above(samples):
    for doc, truth in samples.values():
        for want in truth.tables:
            table = _by_caption(doc, want.caption)
            caption_block = next(b for b in doc.blocks if b.label == "caption" and b.text == table.caption)
            if want.caption_position == "below":
                assert caption_block.order > table.order and caption_block.bbox.t >= table.bbox.b
            else:
                assert caption_block.order < table.order and caption_block.bbox.b <= table.bbox.t
            if want.context_above:
                before = [b for b in doc.blocks if b.order < min(table.order, caption_block.order)]
                assert _dash(want.context_above).startswith(before[-1].text[:40]), (want.context_above, before[-1].text)


def test_long_table_continues_on_the_next_page(samples):
    doc, truth = samples["SOP-ENG-114"]
    want = next(t for t in truth.tables if t.continues)
    first = _by_caption(doc, want.caption)
    rest = [t for t in doc.tables if t.continues == first.id]
    assert rest and rest[0].page == first.page + 1 and rest[0].n_cols == first.n_cols


def test_section_headers_have_levels_and_titles_and_furniture(samples):
    for doc, truth in samples.values():
        heads = [(b.text, b.level) for b in doc.blocks if b.label == "section_header"]
        for s in truth.sections:
            assert (f"{s.number} {s.title}", s.level) in heads, (doc.doc_id, s)
        assert doc.title == truth.title_line
        assert doc.n_pages == truth.n_pages
        furniture = [b for b in doc.blocks if b.label in ("page_header", "page_footer")]
        assert {b.page for b in furniture} == set(range(1, truth.n_pages + 1))
        assert any(b.text.startswith(f"{doc.doc_id} Rev.") for b in furniture if b.label == "page_header")
        assert not any(b.text.startswith("Page ") for b in doc.blocks if b.label not in ("page_header", "page_footer"))


def test_parsed_doc_identity_and_reading_order(samples, sample_corpus):
    doc, _ = samples["SOP-8812"]
    assert doc.doc_id == "SOP-8812" and doc.parser.startswith("docling-")
    assert doc.content_hash == sha256_file(str(sample_corpus / "SOP-8812.pdf"))
    orders = [i.order for i in doc.items()]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    for block in doc.blocks:
        if block.bbox is not None:
            assert block.bbox.t < block.bbox.b and block.page >= 1


# ----------------------------------------------------------------- Docling's test PDFs


def test_captioned_tables_match_doclings_own_output(docling_tests):
    for name, (doc, truth) in docling_tests.items():
        texts = {t["self_ref"]: t["text"] for t in truth["texts"]}
        want = sorted(texts[t["captions"][0]["$ref"]] for t in truth["tables"] if t.get("captions"))
        got = sorted(t.caption for t in doc.tables if t.caption)
        assert len(got) == len(want), (name, got, want)
        for g, w in zip(got, want):
            assert " ".join(g.split())[:20] == " ".join(w.split())[:20], (name, g, w)
        for table in doc.tables:
            if table.caption:
                assert table.n_rows >= 2 and table.n_cols >= 2 and table.cells


def test_redbook_table_grid_and_korean_footnotes(docling_tests):
    redp, _ = docling_tests["redp5110_sampled"]
    table = next(t for t in redp.tables if t.caption and t.caption.startswith("Table 2-1"))
    assert (table.n_rows, table.n_cols, table.header_rows) == (5, 3, 1)
    assert table.grid()[0] == ["Column name", "Data type", "Description"]
    assert table.grid()[1][:2] == ["FUNCTION_ID", "VARCHAR(30)"]
    # a code listing between two rules of the same length: the box runs from rule to rule
    listing = next(t for t in redp.tables if t.caption and t.caption.startswith("Example 2-1"))
    assert listing.bbox.r - listing.bbox.l > 400 and listing.bbox.b - listing.bbox.t > 85
    korean, _ = docling_tests["normal_4pages"]
    (table,) = [t for t in korean.tables if t.caption]
    assert table.caption.startswith("[표 1]") and len(table.footnotes) == 2
    assert all(f.startswith("※") for f in table.footnotes)


def test_section_headers_and_page_furniture_on_a_real_paper(docling_tests):
    doc, _ = docling_tests["2305.03393v1-pg9"]
    heads = {b.text: b.level for b in doc.blocks if b.label == "section_header"}
    assert heads.get("5.1 Hyper Parameter Optimization") == 2
    assert heads.get("5.2 Quantitative Results") == 2
    furniture = [b.text for b in doc.blocks if b.label == "page_header"]
    assert "Optimized Table Tokenization for Table Structure Recognition" in furniture


@pytest.fixture(scope="module")
def statements(parser, corpora) -> dict[str, ParsedDoc]:
    """Only the statement pages of three 10-Qs (EDGAR layout: no rulings, shaded row bands)."""
    root = corpora / "sec-10q-dev" / "pdfs"
    ranges = {"2022 Q3 AAPL": (4, 6), "2022 Q3 NVDA": (5, 5), "2022 Q3 INTC": (7, 7)}
    return {name: parser.parse(root / f"{name}.pdf", pages=pages) for name, pages in ranges.items()}


def _statement(doc: ParsedDoc, page: int) -> Table:
    (table,) = [t for t in doc.tables if t.page == page]  # one statement, one table
    return table


def _body_rows(table: Table) -> dict[str, list[str]]:
    """Row label (typographic apostrophes made plain) -> value cells, for the body rows."""
    return {row[0].replace("\u2019", "'"): row[1:] for row in table.grid()[table.header_rows :]}


def test_borderless_10q_statement_keeps_its_column_headers(statements):
    doc = statements["2022 Q3 AAPL"]
    assert doc.n_pages == 3 and {b.page for b in doc.blocks} <= {4, 5, 6}
    table = _statement(doc, 4)
    grid = table.grid()
    assert table.header_rows == 3
    assert grid[0][1:] == ["Three Months Ended"] * 2 + ["Nine Months Ended"] * 2
    products = next(row for row in grid if row[0] == "Products")
    assert products[1:] == ["$63,355", "$63,948", "$245,241", "$232,309"]
    assert any(c.col_span == 2 and c.column_header for c in table.cells)


def test_10q_balance_sheet_is_one_table_with_group_label_rows(statements):
    table = _statement(statements["2022 Q3 AAPL"], 6)
    grid = table.grid()
    assert (table.n_cols, table.header_rows) == (3, 2)
    assert grid[:2] == [["", "June 25,", "September 25,"], ["", "2022", "2021"]]
    rows = _body_rows(table)
    # group labels are rows of their own, with empty value cells
    for label in ("ASSETS:", "Current assets:", "LIABILITIES AND SHAREHOLDERS' EQUITY:", "Current liabilities:", "Shareholders' equity:"):
        assert rows[label] == ["", ""], label
    assert rows["Cash and cash equivalents"] == ["$27,502", "$34,940"]  # "$" printed apart joins its amount
    assert rows["Total assets"] == ["$336,309", "$351,002"]
    assert rows["Total liabilities and shareholders' equity"] == ["$336,309", "$351,002"]
    # a label wrapped onto a second line is one row, with the values of its last line
    wrapped = next(k for k in rows if k.startswith("Common stock and additional paid-in capital"))
    assert wrapped.endswith("issued and outstanding, respectively") and rows[wrapped] == ["62,115", "57,365"]
    assert len(grid) == 37


def test_10q_statements_of_other_filers_are_one_table_each(statements):
    nvda = _statement(statements["2022 Q3 NVDA"], 5)
    rows = _body_rows(nvda)
    assert rows["Total assets"] == ["$40,488", "$44,187"] and rows["Total liabilities"] == ["19,139", "17,575"]
    assert [_dash(v) for v in rows["Preferred stock"]] == ["-", "-"]  # dashes drawn off the label's baseline
    assert rows["Commitments and contingencies - see Note 13"] == ["", ""]
    intc = _statement(statements["2022 Q3 INTC"], 7)
    grid = intc.grid()
    assert grid[0][1:] == ["Oct 1, 2022", "Dec 25, 2021"] and intc.header_rows == 1
    rows = _body_rows(intc)
    assert rows["Other current assets"] == ["6,348", "2,130"]  # an underlined amount stays in its column
    assert rows["Total stockholders' equity"] == ["99,885", "95,391"]
    wrapped = next(k for k in rows if k.startswith("Common stock and capital in excess of par value"))
    assert wrapped.endswith("2021)") and rows[wrapped] == ["30,912", "28,006"]


# ----------------------------------------------------------------- DOCX / HTML / Markdown


def test_docx_html_markdown_give_tables_headers_captions(parser, tmp_path):
    import docx

    d = docx.Document()
    d.add_heading("Cleaning SOP", level=0)
    d.add_heading("1 Purpose", level=1)
    d.add_paragraph("This procedure describes cleaning.")
    d.add_heading("1.1 Limits", level=2)
    d.add_paragraph("Table 1: Rinse limits")
    t = d.add_table(rows=3, cols=3)
    for r, row in enumerate([["Analyte", "Limit", "Unit"], ["TOC", "500", "ppb"], ["Conductivity*", "1.3", "µS/cm"]]):
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    d.add_paragraph("* At 25 °C.")
    d.save(tmp_path / "sop.docx")
    (tmp_path / "sop.html").write_text(
        "<html><body><h1>HTML SOP</h1><h2>2 Scope</h2><p>Scope text.</p><table><caption>Table 2: Hold times</caption>"
        '<thead><tr><th rowspan="2">Step</th><th colspan="2">Hold</th></tr><tr><th>Min</th><th>Max</th></tr></thead>'
        "<tbody><tr><td>Harvest</td><td>1</td><td>24</td></tr><tr><td>Eluate</td><td>2</td><td>48</td></tr></tbody>"
        "</table><p>a) measured at 4 °C</p></body></html>"
    )
    (tmp_path / "sop.md").write_text(
        "# MD SOP\n\n## 3 Procedure\n\nSome text.\n\n### 3.1 Sub\n\nTable 3: Parameters\n\n"
        "| Param | Value |\n|---|---|\n| pH | 7.0 |\n| Temp | 25 |\n\n† Nominal values.\n"
    )
    docx_doc = parser.parse(tmp_path / "sop.docx")
    (table,) = docx_doc.tables
    assert table.caption == "Table 1: Rinse limits" and table.footnotes == ["* At 25 °C."]
    assert table.header_rows == 1 and table.grid()[2] == ["Conductivity*", "1.3", "µS/cm"]
    assert docx_doc.title == "Cleaning SOP" and table.page is None and table.bbox is None
    assert ("1.1 Limits", 2) in [(b.text, b.level) for b in docx_doc.blocks if b.label == "section_header"]

    html = parser.parse(tmp_path / "sop.html")
    (table,) = html.tables
    assert table.caption == "Table 2: Hold times" and table.footnotes == ["a) measured at 4 °C"]
    assert table.header_rows == 2 and table.grid()[0] == ["Step", "Hold", "Hold"]
    assert [c.row_span for c in table.cells if c.text == "Step"] == [2]

    md = parser.parse(tmp_path / "sop.md", doc_id="md-1")
    (table,) = md.tables
    assert md.doc_id == "md-1" and table.caption == "Table 3: Parameters"
    assert table.footnotes == ["† Nominal values."] and table.grid()[1] == ["pH", "7.0"]
    heads = [(b.text, b.level) for b in md.blocks if b.label == "section_header"]
    assert ("3 Procedure", 1) in heads and ("3.1 Sub", 2) in heads


# ----------------------------------------------------------------- files that must fail cleanly


def test_bad_files_raise_parse_error_naming_the_file(parser, tmp_path, sample_corpus):
    from reportlab.lib import pdfencrypt
    from reportlab.pdfgen import canvas

    good = (sample_corpus / "SOP-8812.pdf").read_bytes()
    files = {
        "truncated.pdf": good[: len(good) // 3],
        "empty.pdf": b"",
        "random.pdf": os.urandom(4096),
        "garbage_after_header.pdf": b"%PDF-1.4\n" + os.urandom(4096),
        "notes.txt": b"plain text",
        "broken.docx": b"PK\x03\x04 not a zip",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    enc = canvas.Canvas(str(tmp_path / "encrypted.pdf"), encrypt=pdfencrypt.StandardEncryption("secret", canPrint=0))
    enc.drawString(100, 700, "secret text")
    enc.save()
    reasons = {}
    for name in [*files, "encrypted.pdf"]:
        with pytest.raises(ParseError) as err:
            parser.parse(tmp_path / name)
        assert name in str(err.value)
        reasons[name] = err.value.reason
    assert "encrypted" in reasons["encrypted.pdf"]
    assert "empty" in reasons["empty.pdf"]
    assert "unsupported" in reasons["notes.txt"]
    assert "corrupt" in reasons["truncated.pdf"]
    with pytest.raises(ParseError, match="not found"):
        parser.parse(tmp_path / "missing.pdf")


def test_parser_package_is_the_only_docling_importer():
    root = Path(__file__).resolve().parents[1] / "evidence_pipeline"
    offenders = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if p.relative_to(root).parts[0] != "parser"
        and any(line.lstrip().startswith(("import docling", "from docling")) for line in p.read_text(encoding="utf-8").splitlines())
    ]
    assert offenders == []
