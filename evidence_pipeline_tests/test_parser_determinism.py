"""Parsing is a function of the file's bytes (and the page range): the same ParsedDoc, byte
for byte, and the same unit ids, whatever the CPU load, Docling's thread count and page
batching, and whichever documents the parser converted before."""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from evidence_pipeline.parser import DoclingParser, PdfThreads
from evidence_pipeline.units import build_units

pytestmark = pytest.mark.parses_afresh  # compares parses or counts the parser's work (parse_memo)


@contextmanager
def busy_loops(n: int):
    """``n`` processes that spin on the CPU (the machine's cores are busy while the block runs)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


@pytest.fixture(scope="module")
def documents(sample_corpus: Path, corpora: Path) -> list[tuple[Path, tuple[int, int] | None]]:
    """A generated SOP, a clinical protocol whose pages differ in body text size, and the
    first ten pages of a 10-Q."""
    return [
        (sorted(sample_corpus.glob("*.pdf"))[0], None),
        (corpora / "clinical-protocols" / "pdfs" / "NCT06156735_Prot_SAP_000.pdf", None),
        (corpora / "sec-10q-dev" / "pdfs" / "2022 Q3 AAPL.pdf", (1, 10)),
    ]


def test_parse_is_the_same_under_load_other_threads_and_another_order(documents):
    first = DoclingParser()
    reference = {path: first.parse(path, pages=pages) for path, pages in documents}
    with busy_loops(2):
        # another converter with one decoding thread and single-page batches, the documents
        # in the opposite order, then the first parser again on documents it has seen
        other = DoclingParser(threads=PdfThreads(parser_threads=1, batch_size=1))
        runs = [
            {path: other.parse(path, pages=pages) for path, pages in reversed(documents)},
            {path: first.parse(path, pages=pages) for path, pages in documents},
        ]
    for run in runs:
        for path, _ in documents:
            want, got = reference[path], run[path]
            assert got.model_dump_json() == want.model_dump_json(), f"{path.name} parsed differently"
            assert [u.unit_id for u in build_units(got)] == [u.unit_id for u in build_units(want)]
    assert all(doc.blocks for doc in reference.values()) and reference[documents[0][0]].tables and reference[documents[2][0]].tables


def test_a_page_range_is_parsed_from_its_own_pages(documents):
    """Page 1 of the protocol alone comes out the same before and after the whole document
    was parsed (nothing carried from one conversion of a document to the next), and its
    first page is laid out with the body size of the pages converted, not of the file."""
    path, _ = documents[1]
    parser = DoclingParser()
    alone = parser.parse(path, pages=(1, 1))
    whole = parser.parse(path)
    assert parser.parse(path, pages=(1, 1)).model_dump_json() == alone.model_dump_json()
    assert alone.n_pages == 1 and whole.n_pages > 1
