"""Where units are printed: regions from their parts, and boxes checked against pdfium's own text.

The generated SOPs are parsed by the pipeline; pdfium (an extractor independent of Docling)
reads the characters inside each box, so a box on the wrong row, flipped to the other origin or
on the wrong page shows as text that is not the row's.
"""

import re

import pypdfium2 as pdfium
import pytest

from evidence_pipeline.children import unit_children
from evidence_pipeline.embedding import token_counter
from evidence_pipeline.page_boxes import page_box, regions
from evidence_pipeline.pipeline import PipelineOptions, prepare
from evidence_pipeline.records import BBox, PageBox
from evidence_pipeline.splitting import split_unit
from evidence_pipeline.units import approx_tokens

SIZES = {1: (612.0, 792.0), 2: (612.0, 792.0)}


def _box(l, t, r, b):
    return BBox(l=l, t=t, r=r, b=b)


def test_paragraphs_of_one_column_make_one_region_per_page():
    parts = [(1, _box(72, 100, 540, 140)), (1, _box(72, 150, 500, 200)), (2, _box(72, 80, 540, 120))]
    assert regions(parts, SIZES) == [
        PageBox(page=1, l=72, t=100, r=540, b=200, page_width=612, page_height=792),
        PageBox(page=2, l=72, t=80, r=540, b=120, page_width=612, page_height=792),
    ]


def test_a_section_that_runs_into_the_next_column_is_two_regions():
    left, right = _box(50, 600, 290, 740), _box(320, 60, 560, 200)
    got = regions([(1, left), (1, right)], SIZES)
    assert [(b.l, b.r) for b in got] == [(50, 290), (320, 560)]


def test_parts_without_a_page_a_box_or_a_page_size_have_no_region():
    assert regions([(None, _box(1, 2, 3, 4)), (1, None), (3, _box(1, 2, 3, 4))], SIZES) == []
    assert page_box(3, _box(1, 2, 3, 4), SIZES) is None
    assert page_box(1, None, SIZES) is None


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _inside(pdf, box: PageBox) -> str:
    """pdfium's characters inside ``box`` (pdfium counts y from the page's bottom)."""
    page = pdf[box.page - 1]
    height = page.get_height()
    text = page.get_textpage().get_text_bounded(left=box.l - 1, bottom=height - box.b - 1, right=box.r + 1, top=height - box.t + 1)
    return _squash(text)


@pytest.fixture(scope="module")
def prepared_corpus(sample_corpus, parse_cached):
    counter = token_counter(None)
    out = []
    for pdf in sorted(sample_corpus.glob("*.pdf")):
        doc = parse_cached(pdf)
        units, children = prepare(doc, counter, PipelineOptions())
        out.append((pdf, doc, units, children))
    return out


def test_every_table_row_box_holds_that_rows_cells(prepared_corpus):
    rows = cells = found_cells = rows_found = 0
    for pdf_path, doc, units, _ in prepared_corpus:
        assert set(doc.page_sizes) == set(range(1, doc.n_pages + 1))
        pdf = pdfium.PdfDocument(str(pdf_path))
        for unit in (u for u in units if u.kind == "table"):
            assert len(unit.row_boxes) == len(unit.rows), unit.unit_id
            for row, box in zip(unit.rows, unit.row_boxes):
                assert box is not None and box.page in unit.pages, unit.unit_id
                inside = _inside(pdf, box)
                texts = [_squash(c) for c in row if c.strip()]
                hits = sum(t in inside for t in texts)
                rows += 1
                cells += len(texts)
                found_cells += hits
                rows_found += hits > 0
        pdf.close()
    assert rows > 40
    # Cells a spanning cell fills (a group label carried down) are printed in another row's box.
    assert rows_found == rows and found_cells >= 0.9 * cells, (rows_found, rows, found_cells, cells)


def test_unit_regions_hold_their_text_on_their_pages(prepared_corpus):
    checked = 0
    for pdf_path, _, units, _ in prepared_corpus:
        pdf = pdfium.PdfDocument(str(pdf_path))
        for unit in units:
            if unit.kind == "card":
                assert unit.boxes == []
                continue
            assert unit.boxes and {b.page for b in unit.boxes} <= set(unit.pages), unit.unit_id
            inside = "".join(_inside(pdf, b) for b in unit.boxes)
            first = unit.body[0] if unit.kind == "section" else next(c for r in unit.rows for c in r if c.strip())
            assert _squash(first)[:40] in inside, (unit.unit_id, first)
            checked += 1
        pdf.close()
    assert checked > 30


def test_a_row_child_names_its_row_and_a_split_piece_keeps_its_rows_boxes(prepared_corpus):
    table = max((u for _, _, units, _ in prepared_corpus for u in units if u.kind == "table"), key=lambda u: len(u.rows))
    children = [c for c in unit_children(table) if c.kind == "row"]
    assert [c.row for c in children] == [i for i, s in enumerate(table.sentences_by_row) if s]
    assert all(c.text == table.sentences_by_row[c.row] for c in children if c.row is not None)

    pieces = split_unit(table, approx_tokens(table.text) // 2, approx_tokens)
    assert len(pieces) >= 2
    assert [b for p in pieces for b in p.row_boxes] == table.row_boxes
    for piece in pieces:
        assert len(piece.row_boxes) == len(piece.rows)
        assert {b.page for b in piece.boxes} == {b.page for b in piece.row_boxes if b is not None}
        for row in piece.row_boxes:  # every row lies in a region of its piece, on its page
            assert row is not None
            assert any(b.page == row.page and b.t <= row.t + 0.1 and row.b <= b.b + 0.1 for b in piece.boxes), row


def test_geometry_adds_where_and_changes_nothing_else(prepared_corpus):
    """The same document without page sizes and row boxes gives the same units and children,
    so boxes never move a ranking; only the units' regions and row boxes go."""
    counter = token_counter(None)
    for _, doc, units, children in prepared_corpus:
        bare = doc.model_copy(update={"page_sizes": {}, "tables": [t.model_copy(update={"row_boxes": []}) for t in doc.tables]})
        bare_units, bare_children = prepare(bare, counter, PipelineOptions())
        assert [u.model_dump(exclude={"boxes", "row_boxes"}) for u in bare_units] == [
            u.model_dump(exclude={"boxes", "row_boxes"}) for u in units
        ]
        assert bare_children == children
        assert all(u.boxes == [] and all(b is None for b in u.row_boxes) for u in bare_units)
