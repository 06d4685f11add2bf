"""The worker parser's read-ahead: the next planned document is parsed while the caller works
on this one; the caller still gets exactly what a plain parse gives."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from evidence_pipeline.parser.worker import ReadAhead, WorkerParser, _ahead_key
from evidence_pipeline.settings import ParserSettings

pytestmark = pytest.mark.parses_afresh  # compares parses or counts the parser's work (parse_memo)


def test_read_ahead_follows_the_plan_in_order(tmp_path):
    files = []
    for name in ("a.pdf", "b.pdf", "c.pdf", "d.pdf"):
        (tmp_path / name).write_bytes(name.encode())
        files.append(_ahead_key(tmp_path / name, name[0]))
    parsed, release = [], threading.Event()

    def parse_now(path: Path, doc_id, pages):
        release.wait(10)
        parsed.append(doc_id)
        return ("ok", doc_id)

    ahead = ReadAhead(depth=2)
    ahead.plan(files, parse_now)  # "a" starts at once, in the background
    release.set()
    assert ahead.take(files[0]).result(10) == ("ok", "a")
    assert ahead.take(files[0]) is None  # taken once
    future = ahead.take(files[1])
    assert future.result(10) == ("ok", "b")
    # At most two parsed documents wait: "c" and "d" are parsed ahead, and nothing else.
    deadline = time.monotonic() + 10
    while parsed != ["a", "b", "c", "d"] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert parsed == ["a", "b", "c", "d"]
    # A file that changed after it was planned is not the planned document any more.
    (tmp_path / "c.pdf").write_bytes(b"changed, longer")
    assert ahead.take(_ahead_key(tmp_path / "c.pdf", "c")) is None
    ahead.plan([])  # the end of the batch drops what nobody asked for
    assert ahead.take(files[3]) is None


def test_read_ahead_skips_what_the_caller_parsed_itself(tmp_path):
    files = []
    for name in ("a.pdf", "b.pdf", "c.pdf"):
        (tmp_path / name).write_bytes(name.encode())
        files.append(_ahead_key(tmp_path / name, name[0]))
    parsed, release = [], threading.Event()

    def parse_now(path: Path, doc_id, pages):
        release.wait(10)
        parsed.append(doc_id)
        return ("ok", doc_id)

    ahead = ReadAhead(depth=1)
    ahead.plan(files, parse_now)  # "a" is being parsed ahead
    assert ahead.take(files[2]) is None  # asked out of order: the caller parses "c" itself
    release.set()
    assert ahead.take(files[0]) is None  # passed over by the caller: dropped
    deadline = time.monotonic() + 10
    while parsed != ["a"] and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    assert parsed == ["a"]  # neither "b" nor "c" is read ahead after the caller went past them


def test_a_read_ahead_parse_equals_a_plain_parse(sample_corpus, tmp_path):
    docs = [sample_corpus / "SOP-8812.pdf", sample_corpus / "SOP-QA-007.pdf", sample_corpus / "SOP-QC-415.pdf"]
    changed = tmp_path / docs[2].name
    shutil.copy(docs[2], changed)
    with WorkerParser(ParserSettings(timeout_s=120)) as parser:
        plain = [parser.parse(docs[1], doc_id="SOP-QA-007"), parser.parse(changed, doc_id="SOP-QC-415")]
        parser.read_ahead([(docs[0], "SOP-8812"), (docs[1], "SOP-QA-007"), (changed, "SOP-QC-415")])
        parser.parse(docs[0], doc_id="SOP-8812")
        assert parser.parse(docs[1], doc_id="SOP-QA-007") == plain[0]
        # Changed while it was being read ahead: parsed again, from its new bytes.
        shutil.copy(docs[0], changed)
        again = parser.parse(changed, doc_id="SOP-QC-415")
        assert again != plain[1] and again.content_hash == parser.parse(docs[0], doc_id="SOP-QC-415").content_hash
        parser.read_ahead([])
