"""OCR of pages without a text layer: the scanned clinical protocol (a one-page table, scanned
on its side) becomes evidence units offline, deterministically, and born-digital pages are
never sent to OCR."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from docling_core.types.doc import BoundingBox, CoordOrigin
from docling_core.types.doc.page import BoundingRectangle, TextCell

from evidence_pipeline.errors import SettingsError
from evidence_pipeline.evaluation.parser_quality.coverage import words_of
from evidence_pipeline.parser import DoclingParser, PdfThreads
from evidence_pipeline.parser.ocr import has_text_layer
from evidence_pipeline.settings import ParserSettings
from evidence_pipeline.units import build_units

pytestmark = pytest.mark.parses_afresh  # compares parses or counts the parser's work (parse_memo)

SCANNED = Path("clinical-protocols") / "pdfs" / "NCT06155240_Prot_SAP_000.pdf"

# What a person reads on the page (looked at in the page rendered upright): the version line,
# the appendix title, the table's title, its column heads and every cell.
SPOT_CHECK = """
V1 4/6/2023 APPENDIX D Study Protocol Class Procedures Yoga for a Healthy Heart Protocol
Assessment Yoga physical practice Yoga Breathing Practice Yoga Meditation Discussion with class theme
Week 1 2 3 4 5 6 7 8 Mini and Medi-Cog Perceived Stress Scale BP Chair-based yoga Natural breath
awareness abdominal breathing Yoga Nidra Joint protection Do no harm Post-class BP Pre-Class BP
Awareness of breathing pattern and posture truthfulness thoracic digestion simplicity perceived
effort non attachment Segmental diaphragmatic stage one add clavicular breath with movement
Non-excess concept Energy conservation self-study two Full one to one ration Ajapa visualization
mantra I am positive acceptance ratio ujjayii Home Program Self-discipline Conclusion
"""


def _cell(text: str) -> TextCell:
    box = BoundingBox(l=10, t=10, r=200, b=20, coord_origin=CoordOrigin.TOPLEFT)
    return TextCell(text=text, orig=text, rect=BoundingRectangle.from_bounding_box(box), from_ocr=False)


def test_a_text_layer_is_usable_when_its_glyphs_map_to_enough_letters():
    assert has_text_layer([_cell("4.2 Flow rate limits for the aqueous phase")])
    assert not has_text_layer([])
    assert not has_text_layer([_cell("Page 3")])  # a stamped page number on a scan
    unmapped = " ".join(f"GLYPH<c={i},font=/AAAAAB+F1>" for i in range(60))
    assert not has_text_layer([_cell(unmapped), _cell("ab")])
    # a table of contents: dot leaders outnumber the letters, and the page is born digital
    leaders = [_cell(f"3.{i} Assigning roles " + ". " * 40 + str(20 + i)) for i in range(3)]
    assert has_text_layer(leaders)


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    """Any connection attempt fails, and HOME and the cache folders point at an empty folder."""
    home = tmp_path_factory.mktemp("home")
    mp = pytest.MonkeyPatch()
    for var in ("HOME", "XDG_CACHE_HOME", "HF_HOME", "MODELSCOPE_CACHE"):
        mp.setenv(var, str(home))

    def refuse(self, *args, **kwargs):
        raise OSError("network access attempted during OCR")

    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket.socket, "connect_ex", refuse)
    yield home
    mp.undo()


@pytest.fixture(scope="module")
def scanned(corpora: Path, offline: Path):
    doc = DoclingParser(ParserSettings(isolation="inline")).parse(corpora / SCANNED)
    return doc


def test_the_scanned_protocol_yields_units_covering_what_a_person_reads(scanned, offline: Path):
    units = build_units(scanned)
    found = set().union(*(words_of(u.text) for u in units))
    wanted = words_of(SPOT_CHECK)
    missing = sorted(wanted - found)
    assert len(wanted - found) <= 0.1 * len(wanted), missing
    assert any("read by OCR" in w for w in scanned.warnings)
    assert not any("needs OCR" in w for w in scanned.warnings)
    # nothing downloaded or cached into HOME (onnxruntime keeps a small device id there)
    written = [p for p in offline.rglob("*") if p.is_file()]
    assert all(p.stat().st_size < 100_000 and p.suffix != ".onnx" for p in written), written


def test_the_scanned_table_comes_out_as_one_table_with_its_weeks_as_rows(scanned):
    assert len(scanned.tables) == 1
    table = scanned.tables[0]
    first_column = [c.text for c in table.cells if c.col == 0 and c.row >= table.header_rows]
    assert first_column == [f"Week {n}" for n in range(1, 9)]
    header = " ".join(c.text for c in table.cells if c.row < table.header_rows)
    assert "Assessment" in header and "Discussion" in header
    assert any(b.text.startswith("APPENDIX D") for b in scanned.blocks)


def test_ocr_gives_the_same_document_for_the_same_bytes(scanned, corpora: Path, offline: Path):
    again = DoclingParser(ParserSettings(isolation="inline"), PdfThreads(parser_threads=1, batch_size=1)).parse(corpora / SCANNED)
    assert again.model_dump_json() == scanned.model_dump_json()


def test_with_ocr_off_a_scan_gives_nothing_and_says_why(corpora: Path):
    doc = DoclingParser(ParserSettings(isolation="inline", ocr="off")).parse(corpora / SCANNED)
    assert not doc.blocks and not doc.tables
    assert any("needs OCR" in w and "OCR is off" in w for w in doc.warnings)


def test_born_digital_pages_are_never_sent_to_ocr(sample_corpus: Path):
    doc = DoclingParser(ParserSettings(isolation="inline")).parse(sorted(sample_corpus.glob("*.pdf"))[0])
    assert doc.blocks and not any("OCR" in w for w in doc.warnings)


def test_the_ocr_setting_is_read_from_the_environment(monkeypatch):
    assert ParserSettings.from_env().ocr == "auto"
    monkeypatch.setenv("EVIDENCE_OCR", "off")
    assert ParserSettings.from_env().ocr == "off"
    monkeypatch.setenv("EVIDENCE_OCR", "sometimes")
    with pytest.raises(SettingsError, match="EVIDENCE_OCR"):
        ParserSettings.from_env()


def test_a_scanned_ruled_table_keeps_the_grid_of_the_born_digital_one(sample_corpus: Path, tmp_path: Path):
    from evidence_pipeline.tools.samples.scanned import scan_pdf

    source = sample_corpus / "SOP-8812.pdf"
    scanned = tmp_path / source.name
    scanned.write_bytes(scan_pdf(source, source.name, dpi=150, noise=8, max_tilt=0.3, seed=7))
    parser = DoclingParser(ParserSettings(isolation="inline"))
    digital, scan = (parser.parse(path, pages=(1, 1)) for path in (source, scanned))
    assert [t.caption for t in scan.tables] == [t.caption for t in digital.tables]
    (want,), (got,) = digital.tables, scan.tables
    assert (got.n_rows, got.n_cols, got.header_rows) == (want.n_rows, want.n_cols, want.header_rows)
    cells = {(c.row, c.col): c.text for c in want.cells}
    same = sum(cells.get((c.row, c.col)) == c.text for c in got.cells)
    assert same >= 0.9 * len(cells), [(c.text, cells.get((c.row, c.col))) for c in got.cells]
    headings = [b.text for b in digital.blocks if b.label == "section_header"]
    assert [b.text for b in scan.blocks if b.label == "section_header"] == headings
