"""The test-fast loop's parse memo: it answers only the same parse by the same parser code."""

import os
import shutil
from pathlib import Path

from evidence_pipeline.parser import DoclingParser
from evidence_pipeline.settings import ParserSettings
from evidence_pipeline.work import WORK
from evidence_pipeline_tests import parse_memo
from evidence_pipeline_tests.parse_memo import PACKAGE, code_fingerprint, install, parser_closure


def _copy_package(tmp_path: Path) -> Path:
    copy = tmp_path / "evidence_pipeline"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _edit(module: Path) -> None:
    module.write_text(module.read_text() + "\n# an edit\n")


def test_the_closure_holds_the_parser_and_what_it_imports_not_the_search_side():
    closure = parser_closure()
    assert {"evidence_pipeline.parser.docling_parser", "evidence_pipeline.parser.ocr"} <= closure
    # imported by parser modules, records at module level and dashes inside a function
    assert {"evidence_pipeline.records", "evidence_pipeline.tables", "evidence_pipeline.parser.dashes"} <= closure
    assert "evidence_pipeline" in closure  # runs on import, as the package above
    assert not {m for m in closure if m.startswith(("evidence_pipeline.retrieval", "evidence_pipeline.store"))}


def test_an_edit_to_the_parser_or_its_imports_changes_the_fingerprint_one_elsewhere_does_not(tmp_path):
    package = _copy_package(tmp_path)
    first = code_fingerprint(package)
    assert code_fingerprint(package) == first

    _edit(package / "retrieval" / "fuse.py")
    assert code_fingerprint(package) == first

    _edit(package / "parser" / "headings.py")
    second = code_fingerprint(package)
    assert second != first

    _edit(package / "records.py")
    assert code_fingerprint(package) not in (first, second)


def test_the_memo_answers_the_same_parse_of_a_corpus_file_and_nothing_else(tmp_path, sample_corpus, monkeypatch):
    monkeypatch.setattr(DoclingParser, "parse", DoclingParser.parse)  # restored after the test
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    kept = shutil.copy(sample_corpus / "SOP-8812.pdf", corpora / "SOP-8812.pdf")
    elsewhere = shutil.copy(sample_corpus / "SOP-8812.pdf", tmp_path / "SOP-8812.pdf")
    (tmp_path / "memo" / "of-other-code").mkdir(parents=True)
    install(tmp_path / "memo", corpora)
    assert not (tmp_path / "memo" / "of-other-code").exists()
    parser = DoclingParser()

    def parsed(path, **kwargs):
        with WORK.delta() as work:
            doc = parser.parse(path, **kwargs)
        return doc, work.get("parse.documents", 0)

    first, n_first = parsed(kept)
    again, n_again = parsed(kept)
    assert (n_first, n_again) == (1, 0)
    assert again == first and again.tables and again.blocks

    # other arguments, another file or other settings parse afresh
    assert parsed(kept, pages=(1, 1))[1] == 1
    assert parsed(kept, doc_id="other")[0].doc_id == "other"
    assert [parsed(elsewhere)[1] for _ in range(2)] == [1, 1]
    parser = DoclingParser(ParserSettings(ocr="off"))
    assert parsed(kept)[1] == 1
    assert len(list((tmp_path / "memo").glob("*/*.json"))) == 4

    # a test file marked parses_afresh parses what the memo holds
    here = os.environ["PYTEST_CURRENT_TEST"].split("::", 1)[0]
    monkeypatch.setattr(parse_memo, "AFRESH_FILES", {here})
    assert parsed(kept)[1] == 1
