"""The scanned variant of the sample corpus: image-only PDFs, page for page, byte-identical
for the same inputs and seed."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium

from evidence_pipeline.tools.samples.scanned import main, scan_pdf


def _pages(pdf: bytes | Path) -> list[tuple[tuple[float, float], int]]:
    doc = pdfium.PdfDocument(pdf if isinstance(pdf, Path) else pdf)
    try:
        return [(doc[i].get_size(), doc[i].get_textpage().count_chars()) for i in range(len(doc))]
    finally:
        doc.close()


def test_a_scanned_pdf_has_the_pages_of_its_source_and_no_text_layer(sample_corpus: Path):
    source = sorted(sample_corpus.glob("*.pdf"))[0]
    scanned = scan_pdf(source, source.name, dpi=100, noise=8, max_tilt=0.3, seed=7)
    before, after = _pages(source), _pages(scanned)
    assert [size for size, _ in after] == [size for size, _ in before]
    assert all(chars > 0 for _, chars in before) and all(chars == 0 for _, chars in after)


def test_scanning_is_deterministic_and_the_seed_changes_the_grain(sample_corpus: Path):
    source = sorted(sample_corpus.glob("*.pdf"))[0]
    first = scan_pdf(source, source.name, dpi=72, noise=8, max_tilt=0.3, seed=7)
    assert scan_pdf(source, source.name, dpi=72, noise=8, max_tilt=0.3, seed=7) == first
    assert scan_pdf(source, source.name, dpi=72, noise=8, max_tilt=0.3, seed=8) != first


def test_the_command_names_a_missing_folder_in_one_line(tmp_path: Path, capsys):
    assert main([str(tmp_path / "nowhere"), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere" in err[0]
