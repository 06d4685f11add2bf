"""Many tiny one-page PDFs, fast: one is drawn with reportlab, the others are copies with
the document's number written over the template's (same length, so the cross-reference
offsets stay valid). 100,000 files take seconds, and each is a real, parseable PDF
whose text and SHA-256 differ from every other's."""

from __future__ import annotations

import io
from pathlib import Path

PLACEHOLDER = b"QZXJWV"  # six letters that occur nowhere else in the file
FILES_PER_FOLDER = 1000


def template() -> bytes:
    from reportlab.lib.pagesizes import A5
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    # Uncompressed page stream and no timestamp: the placeholder is found and replaced as bytes.
    pdf = canvas.Canvas(buf, pagesize=A5, pageCompression=0, invariant=1)
    pdf.setFont("Helvetica-Bold", 14)
    pdf.drawString(40, 540, f"Calibration record {PLACEHOLDER.decode()}")
    pdf.setFont("Helvetica", 10)
    pdf.drawString(40, 510, f"Batch {PLACEHOLDER.decode()} was checked at 21 C and passed every limit.")
    pdf.showPage()
    pdf.save()
    data = buf.getvalue()
    if data.count(PLACEHOLDER) != 2:
        raise RuntimeError("template: the document number must appear exactly twice in the PDF bytes")
    return data


def key_for(i: int) -> str:
    return f"doc-{i:06d}"


def write_tiny_pdfs(root: Path, n: int, start: int = 0) -> list[Path]:
    """``root/<block>/doc-NNNNNN.pdf`` for ``i`` in ``[start, start + n)``; existing files are kept."""
    data = template()
    paths = []
    for i in range(start, start + n):
        folder = root / f"{i // FILES_PER_FOLDER:04d}"
        path = folder / f"{key_for(i)}.pdf"
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data.replace(PLACEHOLDER, f"{i:06d}".encode()))
        paths.append(path)
    return paths


def rewrite(path: Path, number: int) -> None:
    """The same document with another number in it: new content, new hash."""
    path.write_bytes(template().replace(PLACEHOLDER, f"{number:06d}".encode()))
