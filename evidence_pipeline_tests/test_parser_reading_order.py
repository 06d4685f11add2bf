"""Reading order from positions: two-column bands between full-width text, centred blocks."""

from evidence_pipeline.parser.docling_items import Entry
from evidence_pipeline.parser.reading_order import positional_order
from evidence_pipeline.records import BBox


def _e(name: str, l: float, t: float, r: float, b: float) -> Entry:
    return Entry(0.0, None, 1, BBox(l=l, t=t, r=r, b=b), text=name)  # type: ignore[arg-type]


def _names(entries):
    return [e.text for e in positional_order(entries)]


def test_a_two_column_band_reads_left_column_then_right_between_full_width_text():
    page = [
        _e("intro", 70, 100, 520, 140),
        _e("right-1", 305, 160, 520, 200),  # listed first: Docling's order is not trusted
        _e("left-1", 70, 160, 290, 300),
        _e("right-2", 305, 215, 520, 290),
        _e("left-2", 70, 310, 285, 330),
        _e("right-3", 305, 300, 520, 340),
        _e("heading below", 70, 360, 180, 372),
        _e("full below", 70, 380, 515, 420),
    ]
    assert _names(page) == ["intro", "left-1", "left-2", "right-1", "right-2", "right-3", "heading below", "full below"]


def test_a_centred_table_takes_its_place_by_height():
    page = [
        _e("heading", 70, 80, 200, 92),
        _e("text", 70, 100, 520, 130),
        _e("next heading", 70, 300, 200, 312),
        _e("next text", 70, 320, 520, 350),
        _e("centred table", 200, 150, 390, 280),
    ]
    assert _names(page) == ["heading", "text", "centred table", "next heading", "next text"]


def test_narrow_labels_beside_values_read_line_by_line():
    page = [
        _e("Name:", 70, 100, 130, 110),
        _e("Lutronic", 200, 100, 400, 110),
        _e("Address:", 70, 120, 140, 130),
        _e("19 Fortune Drive", 200, 120, 420, 130),
    ]
    assert _names(page) == ["Name:", "Lutronic", "Address:", "19 Fortune Drive"]
