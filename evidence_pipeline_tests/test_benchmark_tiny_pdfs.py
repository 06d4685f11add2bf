"""The scale benchmark's tiny PDFs: real one-page PDFs, each with its own number and hash."""

import pypdfium2

from evidence_pipeline.benchmark.tiny_pdfs import rewrite, write_tiny_pdfs
from evidence_pipeline.records import sha256_file


def test_each_tiny_pdf_is_a_parseable_page_of_its_own(tmp_path):
    paths = write_tiny_pdfs(tmp_path, 3, start=1998)
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == ["0001/doc-001998.pdf", "0001/doc-001999.pdf", "0002/doc-002000.pdf"]
    texts = []
    for path in paths:
        pdf = pypdfium2.PdfDocument(str(path))
        assert len(pdf) == 1
        texts.append(pdf[0].get_textpage().get_text_range())
        pdf.close()
    assert "Calibration record 001999" in texts[1] and "Batch 002000 was checked" in texts[2]
    assert len({sha256_file(str(p)) for p in paths}) == 3
    before = sha256_file(str(paths[0]))
    rewrite(paths[0], 42)
    assert sha256_file(str(paths[0])) != before and paths[0].stat().st_size == paths[1].stat().st_size
