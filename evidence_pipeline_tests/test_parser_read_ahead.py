"""The worker parser's read-ahead: the next planned document is parsed while the caller works
on this one; the caller still gets exactly what a plain parse gives."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from evidence_pipeline.parser.worker import ReadAhead, WorkerParser, _ahead_key
from evidence_pipeline.settings import ParserSettings


def test_read_ahead_follows_the_plan_in_order(tmp_path):
    files = []
    for name in ("a.pdf", "b.pdf", "c.pdf"):
        (tmp_path / name).write_bytes(name.encode())
        files.append(_ahead_key(tmp_path / name, name[0]))
    parsed, release = [], threading.Event()

    def parse_now(path: Path, doc_id, pages):
        release.wait(10)
        parsed.append(doc_id)
        return ("ok", doc_id)

    ahead = ReadAhead()
    ahead.plan(files)
    ahead.next_after(files[0], parse_now)  # "a" was parsed by the caller: "b" starts in the background
    ahead.next_after(files[0], parse_now)  # one parse ahead at most
    assert ahead.take(files[2]) is None  # asked out of order: the caller parses it itself
    release.set()
    future = ahead.take(files[1])
    assert future.result(10) == ("ok", "b") and parsed == ["b"]
    assert ahead.take(files[1]) is None  # taken once
    ahead.next_after(files[2], parse_now)  # the last planned document: nothing further
    assert ahead.take(files[2]) is None and parsed == ["b"]
    # A file that changed after it was planned is not the planned document any more.
    ahead.next_after(files[0], parse_now)
    (tmp_path / "b.pdf").write_bytes(b"changed, longer")
    assert ahead.take(_ahead_key(tmp_path / "b.pdf", "b")) is None
    ahead.plan([])  # the end of the batch drops what nobody asked for
    assert ahead.take(files[1]) is None


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
