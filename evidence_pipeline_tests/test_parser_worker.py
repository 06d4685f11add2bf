"""The worker-process parser: same output as the inline parser; limits and crashes fail one document alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evidence_pipeline.errors import ParseError
from evidence_pipeline.orchestration.resources import ParserResource
from evidence_pipeline.parser import DoclingParser, make_parser
from evidence_pipeline.parser.worker import WorkerParser
from evidence_pipeline.settings import ParserSettings
from evidence_pipeline_tests.hostile_docs import one_line_cell_pdf

pytestmark = pytest.mark.parses_afresh  # compares parses or counts the parser's work (parse_memo)

PROTOCOL = ("clinical-protocols", "NCT06152900_Prot_SAP_000.pdf")  # 35 pages: about 2.5 s to parse, RSS +400 MB
LONG_10K = ("financebench-dev", "3M_2018_10K.pdf")  # 160 pages


def _corpus_pdf(corpora: Path, where: tuple[str, str]) -> Path:
    return corpora / where[0] / "pdfs" / where[1]


def _gone(pid: int) -> bool:
    """No process (not even a zombie) with this id."""
    return not Path(f"/proc/{pid}").exists()


@pytest.fixture(scope="module")
def worker():
    with WorkerParser(ParserSettings(timeout_s=120)) as parser:
        yield parser


def test_a_parse_through_the_worker_equals_the_inline_parse(worker, sample_corpus):
    inline = DoclingParser()
    assert worker.name == inline.name
    for name in ("SOP-8812.pdf", "SOP-ENG-114.pdf"):
        pdf = sample_corpus / name
        assert worker.parse(pdf).model_dump_json() == inline.parse(pdf).model_dump_json()
    piece = worker.parse(sample_corpus / "SOP-8812.pdf", doc_id="lnp", pages=(2, 2))
    assert (piece.doc_id, piece.n_pages) == ("lnp", 1)


def test_missing_and_unsupported_files_fail_without_touching_the_worker(worker, tmp_path):
    pid = worker.pid
    with pytest.raises(ParseError, match="file not found"):
        worker.parse(tmp_path / "missing.pdf")
    (tmp_path / "notes.txt").write_text("plain text")
    with pytest.raises(ParseError, match="unsupported file type"):
        worker.parse(tmp_path / "notes.txt")
    assert worker.pid == pid


def test_killing_the_worker_mid_parse_fails_that_document_and_the_next_one_parses(worker, corpora, sample_corpus):
    worker.parse(sample_corpus / "SOP-QA-007.pdf")
    pid = worker.pid
    protocol = _corpus_pdf(corpora, PROTOCOL)
    threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
    started = time.monotonic()
    with pytest.raises(ParseError) as err:
        worker.parse(protocol)
    assert time.monotonic() - started < 30
    assert err.value.path == str(protocol) and "parser process died (SIGKILL" in err.value.reason
    assert _gone(pid)  # killed and reaped
    assert worker.parse(sample_corpus / "SOP-QA-007.pdf").doc_id == "SOP-QA-007"
    assert worker.pid not in (None, pid)


def test_time_and_page_limits_fail_one_document_each(corpora, sample_corpus, tmp_path):
    small = sample_corpus / "SOP-QA-007.pdf"
    protocol, long_10k = _corpus_pdf(corpora, PROTOCOL), _corpus_pdf(corpora, LONG_10K)
    hostile = one_line_cell_pdf(tmp_path / "one-line-cell.pdf", 1_000_000)
    with WorkerParser(ParserSettings(timeout_s=1.0, max_pages=40)) as parser:
        parser.start()
        first = parser.pid
        with pytest.raises(ParseError) as err:
            parser.parse(long_10k)  # refused by the up-front page count: the worker stays
        assert err.value.reason == "PDF has 160 pages (limit 40)" and parser.pid == first
        for doc in (protocol, hostile):
            started = time.monotonic()
            with pytest.raises(ParseError) as err:
                parser.parse(doc)
            assert time.monotonic() - started < 10
            assert str(err.value) == f"{doc}: parse exceeded the 1 s time limit"
            assert parser.pid is None  # the worker was killed
            assert parser.parse(small).doc_id == "SOP-QA-007"  # in a fresh worker
        assert parser.pid != first


def test_a_memory_limit_fails_the_document_that_passes_it_alone(worker, corpora, sample_corpus):
    small = sample_corpus / "SOP-QA-007.pdf"
    worker.parse(small)
    idle = worker._worker.rss_mb()
    assert idle is not None and idle > 100
    protocol = _corpus_pdf(corpora, PROTOCOL)
    limit = int(idle) + 150  # the protocol needs about 400 MB more; a small SOP about 30
    with WorkerParser(ParserSettings(max_memory_mb=limit, timeout_s=120)) as parser:
        assert parser.parse(small).doc_id == "SOP-QA-007"
        with pytest.raises(ParseError) as err:
            parser.parse(protocol)
        assert err.value.path == str(protocol)
        assert err.value.reason.startswith(f"parse exceeded the {limit} MB memory limit (worker at ")
        assert parser.parse(small).doc_id == "SOP-QA-007"


def test_the_factory_and_the_resource_choose_the_isolation(monkeypatch):
    inline = make_parser(ParserSettings(isolation="inline"))
    isolated = make_parser(ParserSettings())
    assert type(inline) is DoclingParser and type(isolated) is WorkerParser
    assert isolated.name == inline.name and isolated.pid is None  # no worker until the first document
    monkeypatch.setenv("EVIDENCE_PARSE_ISOLATION", "inline")
    monkeypatch.setenv("EVIDENCE_PARSE_TIMEOUT_S", "30")
    monkeypatch.setenv("EVIDENCE_PARSE_MAX_MEMORY_MB", "2048")
    monkeypatch.setenv("EVIDENCE_PARSE_MAX_PAGES", "12")
    resource = ParserResource.from_env()
    assert resource.settings == ParserSettings(isolation="inline", timeout_s=30, max_memory_mb=2048, max_pages=12)
    assert type(resource.parser()) is DoclingParser
    monkeypatch.setenv("EVIDENCE_PARSE_TIMEOUT_S", "soon")
    with pytest.raises(ValueError, match="EVIDENCE_PARSE_TIMEOUT_S"):
        ParserSettings.from_env()


SCRIPT = """
import json, sys
from pathlib import Path
from evidence_pipeline.parser import make_parser

if __name__ == "__main__":
    parser = make_parser()
    doc = parser.parse(Path(sys.argv[1]))
    print(json.dumps({"pid": parser.pid, "tables": len(doc.tables),
                      "imported": sorted(m for m in ("docling", "torch") if m in sys.modules)}))
    # no close(): the worker must still be stopped at interpreter exit
"""


def test_a_script_parses_without_importing_docling_and_leaves_no_worker_behind(sample_corpus, tmp_path):
    script = tmp_path / "parse_one.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "EVIDENCE_PARSE_ISOLATION": "process"}
    proc = subprocess.run(
        [sys.executable, str(script), str(sample_corpus / "SOP-8812.pdf")], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["tables"] == 2 and out["imported"] == []
    assert _gone(out["pid"])


def test_a_parent_that_ignores_sigterm_can_still_stop_its_worker(tmp_path):
    """Dagster maps SIGTERM to the SIGINT handler, which a shell's background job ignores; the
    worker inherits that through exec. Without its own SIGTERM handler it outlived ``terminate()``,
    and the interpreter's exit (multiprocessing joins its children) waited on it for ever."""
    script = (
        "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "from evidence_pipeline.parser.worker import WorkerParser\n"
        "parser = WorkerParser(); parser.start(); process = parser._worker.process\n"
        "process.terminate(); process.join(10); print(process.exitcode, flush=True)\n"
        "parser.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == str(-signal.SIGTERM)  # ended by SIGTERM, not still running (None)
