"""A scanned variant of a folder of PDFs: every page rendered to a grey image (optionally
with mild noise and a slight tilt, as a scanner leaves it) and rebuilt as an image-only PDF
of the same page size and file name, so the same question file scores it.

Deterministic: the noise and tilt of a page come from a generator seeded with ``seed``, the
file name and the page number, and reportlab writes the PDF with ``invariant=1``; the same
inputs give the same bytes.

``python -m evidence_pipeline.tools.samples.scanned SRC_DIR OUT_DIR [--dpi 150] [--noise 8]
[--max-tilt 0.3] [--seed 7]``
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
from pathlib import Path

import numpy as np


def _rng(seed: int, name: str, page: int) -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}/{name}/{page}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def scan_page_image(grey: np.ndarray, rng: np.random.Generator, noise: float, max_tilt: float):
    """A rendered page as a scanner would return it: ``noise`` is the standard deviation of
    Gaussian grain in grey levels; the page turns by up to ``max_tilt`` degrees."""
    from PIL import Image

    out = grey.astype(np.float32)
    if noise > 0:
        out += rng.normal(0.0, noise, size=out.shape)
    image = Image.fromarray(np.clip(out, 0, 255).astype(np.uint8), mode="L")
    if max_tilt > 0:
        angle = float(rng.uniform(-max_tilt, max_tilt))
        image = image.rotate(angle, resample=Image.BICUBIC, expand=False, fillcolor=255)
    return image


def scan_pdf(pdf: bytes | Path, name: str, *, dpi: int = 150, noise: float = 0.0, max_tilt: float = 0.0, seed: int = 0) -> bytes:
    """The image-only PDF of ``pdf`` (bytes or a path); ``name`` seeds the noise."""
    import pypdfium2 as pdfium
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    source = pdfium.PdfDocument(pdf if isinstance(pdf, Path) else bytes(pdf))
    buffer = io.BytesIO()
    out = canvas.Canvas(buffer, invariant=1)
    out.setTitle(name)
    try:
        for n in range(len(source)):
            page = source[n]
            width, height = page.get_size()
            grey = np.array(page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L"))
            page.close()
            image = scan_page_image(grey, _rng(seed, name, n + 1), noise, max_tilt)
            png = io.BytesIO()
            image.save(png, format="PNG")
            out.setPageSize((width, height))
            out.drawImage(ImageReader(io.BytesIO(png.getvalue())), 0, 0, width=width, height=height)
            out.showPage()
    finally:
        source.close()
    out.save()
    return buffer.getvalue()


def scan_folder(src: Path, dst: Path, **options) -> list[Path]:
    """Every ``*.pdf`` of ``src`` scanned into ``dst`` under the same name."""
    dst.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(Path(src).glob("*.pdf")):
        target = dst / path.name
        target.write_bytes(scan_pdf(path, path.name, **options))
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence_pipeline.tools.samples.scanned", description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path, help="folder of born-digital PDFs (e.g. the generated corpus)")
    parser.add_argument("out", type=Path, help="folder for the image-only PDFs")
    parser.add_argument("--dpi", type=int, default=150)
    parser.add_argument("--noise", type=float, default=0.0, help="grain: standard deviation in grey levels (0-255)")
    parser.add_argument("--max-tilt", type=float, default=0.0, help="largest page tilt, in degrees")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not args.src.is_dir():
        print(f"error: {args.src}: not a folder", file=sys.stderr)
        return 2
    paths = scan_folder(args.src, args.out, dpi=args.dpi, noise=args.noise, max_tilt=args.max_tilt, seed=args.seed)
    if not paths:
        print(f"error: {args.src}: no PDF files", file=sys.stderr)
        return 2
    print(f"wrote {len(paths)} scanned documents to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
