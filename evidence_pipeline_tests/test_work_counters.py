"""How much work an ingest does, counted (``evidence_pipeline.work``), never timed: a count does not
depend on the machine's load, and work done twice shows as a doubled count.

Per document of the generated sample corpus, ingested as ``evidence-pipeline ingest`` does it
(in a process of its own, so that per-process counts are whole): one Dagster run, one store
flush; per page, one layout and one body-size decode, no render and no OCR (the pages are born
digital); per process, one embedding session and no model export (``make install`` prepared the
model); per distinct text, its word pieces once. Again over the unchanged corpus: nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evidence_pipeline import pipeline
from evidence_pipeline.benchmark.timing import page_count
from evidence_pipeline.embedding import token_counter
from evidence_pipeline.work import NAMES, WORK

pytestmark = pytest.mark.parses_afresh  # compares parses or counts the parser's work (parse_memo)

REPO = Path(__file__).resolve().parents[1]

_INGEST_TWICE = """
import json, sys
from evidence_pipeline.cli import main
from evidence_pipeline.work import WORK

runs = []
for _ in range(2):
    with WORK.delta() as counts:
        code = main(["ingest", "--quiet", sys.argv[1]])
    runs.append({"code": code, "counts": counts})
print(json.dumps(runs))
"""


def _embedded_pieces(docs, counter) -> tuple[int, int, int]:
    """(children, distinct texts, word pieces with [CLS] and [SEP]) that the default embedding
    runs for these documents: every child's text and prefix, each distinct string once."""
    children = [c for doc in docs for c in pipeline.children_of(pipeline.document_units(doc, pipeline.PipelineOptions(), counter), counter)]
    distinct = list(dict.fromkeys([c.text for c in children] + [c.prefix for c in children if c.prefix]))
    return len(children), len(distinct), sum(n + 2 for n in counter.counts(distinct))


@pytest.fixture(scope="module")
def ingest_counts(sample_corpus, tmp_path_factory) -> list[dict]:
    """The generated corpus ingested twice by the CLI's own code, in a process of its own."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "EVIDENCE_STORE_PATH": str(tmp_path_factory.mktemp("counted") / "store"),
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("DAGSTER_HOME", None)  # an ephemeral instance, as a first user's ingest
    out = subprocess.run([sys.executable, "-c", _INGEST_TWICE, str(sample_corpus)], capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_an_ingest_does_each_piece_of_work_once(ingest_counts, sample_corpus, parse_cached):
    first, again = ingest_counts
    assert first["code"] == 0 and again["code"] == 0
    counts = first["counts"]
    paths = sorted(sample_corpus.glob("*.pdf"))
    docs, pages = len(paths), page_count(paths)
    children, texts, pieces = _embedded_pieces([parse_cached(p) for p in paths], token_counter(None))

    assert counts.get("dagster.runs") == docs  # one run per document
    assert counts.get("parse.documents") == docs
    assert counts.get("parse.pages") == pages  # Docling decoded and the rule layout read each page once
    assert counts.get("parse.prepass_pages") == pages  # and the body-size pre-pass once more, no more
    assert counts.get("parse.pdfium_text_pages", 0) <= pages + 3 * docs  # the dash check, the text-layer check
    assert counts.get("parse.rendered_pages", 0) == 0 and counts.get("parse.ocr_pages", 0) == 0  # born digital
    assert counts.get("embed.model_exports", 0) == 0  # prepared ahead, as `make install` does
    assert counts.get("embed.sessions") == 1  # one model session for the whole process
    assert counts.get("embed.texts") == texts  # each distinct text and prefix once, across documents
    assert counts.get("embed.word_pieces") == pieces  # ... with its own word pieces, nothing else
    # Batches cut by word-piece count pad little (padded to the window, they would pad more than
    # they hold); a document's last batches are short, hence a loose bound on six small documents.
    assert counts.get("embed.padding", 0) < 0.25 * pieces
    assert counts.get("store.upserts") == children  # one point per child
    assert counts.get("store.flushes") == docs  # one flush per document

    # The same corpus again: unchanged, so nothing is parsed, embedded, written or run.
    idle = {k: v for k, v in again["counts"].items() if k not in ("store.opens",)}
    assert idle == {}, idle


def test_born_digital_pages_are_never_rendered_or_read_by_ocr(corpora):
    from evidence_pipeline.parser import DoclingParser

    parser = DoclingParser()
    path = corpora / "docling-tests" / "pdfs" / "normal_4pages.pdf"
    with WORK.delta() as counts:
        doc = parser.parse(path)
    assert doc.n_pages == 4
    assert counts.get("parse.pages") == 4 and counts.get("parse.prepass_pages") == 4
    assert counts.get("parse.rendered_pages", 0) == 0 and counts.get("parse.ocr_pages", 0) == 0


@pytest.mark.slow
def test_a_scanned_page_is_rendered_and_read_once(corpora):
    """The one-page scan without a text layer: OCR reads it, and it alone."""
    from evidence_pipeline.parser import DoclingParser

    parser = DoclingParser()
    with WORK.delta() as counts:
        doc = parser.parse(corpora / "clinical-protocols" / "pdfs" / "NCT06155240_Prot_SAP_000.pdf")
    assert doc.n_pages == 1 and (doc.blocks or doc.tables)
    assert counts.get("parse.ocr_pages") == 1 and counts.get("parse.rendered_pages") == 1


def test_a_count_has_a_name_and_the_worker_counts_come_back(sample_corpus):
    with pytest.raises(KeyError):
        WORK.count("parse.pagez")
    assert all("." in name for name in NAMES)
    from evidence_pipeline.parser.worker import WorkerParser
    from evidence_pipeline.settings import ParserSettings

    path = sample_corpus / "SOP-8812.pdf"
    with WorkerParser(ParserSettings(timeout_s=120)) as parser, WORK.delta() as counts:
        doc = parser.parse(path)
    # counted in the worker process, added here with the document it parsed
    assert counts.get("parse.documents") == 1 and counts.get("parse.pages") == doc.n_pages == page_count([path])
