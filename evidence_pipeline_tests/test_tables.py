from evidence_pipeline.tables import carry_down, column_paths, row_sentence, split_marker, table_html


def test_column_paths_name_vertical_spans_once():
    header = [["Stream", "Flow", "Flow"], ["Stream", "Min", "Max"]]
    assert column_paths(header, 3) == ["Stream", "Flow / Min", "Flow / Max"]


def test_row_sentence_skips_empty_cells_and_joins_row_headers():
    paths = ["Group", "Item", "Value", "Unit"]
    assert row_sentence(["Buffers", "PBS", "7.4", ""], paths, 2) == "Buffers / PBS | Value: 7.4"


def test_carry_down_fills_spanning_row_headers():
    rows = [["Buffers", "PBS", "7.4"], ["", "Tris", "8.0"], ["", "", ""]]
    assert carry_down(rows, 1) == [["Buffers", "PBS", "7.4"], ["Buffers", "Tris", "8.0"], ["", "", ""]]


def test_split_marker():
    assert split_marker("2.4*") == ("2.4", "*")
    assert split_marker("5 ᵃ") == ("5", "ᵃ")
    assert split_marker("USP <85>") == ("USP <85>", None)


def test_table_html_colspans_and_escaping():
    html = table_html([["A", "B", "B"]], [["x<y", "1", "2"]], caption="Table 1: T&C")
    assert html == (
        "<table><caption>Table 1: T&amp;C</caption><thead><tr><th>A</th><th colspan=\"2\">B</th></tr></thead>"
        "<tbody><tr><td>x&lt;y</td><td>1</td><td>2</td></tr></tbody></table>"
    )
