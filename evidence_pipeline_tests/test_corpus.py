from pathlib import Path

import pytest

from evidence_pipeline.corpus import (
    MAX_KEY_LENGTH,
    doc_id_for,
    doc_id_from_key,
    expand_paths,
    find_document,
    iter_documents,
    partition_key,
    scan,
)


@pytest.mark.parametrize(
    "name",
    ["SOP-QA-070", "a,b", "x...y", "sp ace", "ünïcödé", "50%", "[draft]", "a" * 240, "tab\tname"],
)
def test_keys_are_safe_stable_and_map_back(tmp_path: Path, name: str):
    path = tmp_path / f"{name}.pdf"
    path.write_bytes(b"%PDF-1.4")
    key = partition_key(doc_id_for(path))
    assert key == partition_key(doc_id_for(path))
    assert "," not in key and "..." not in key and "\t" not in key and len(key) <= MAX_KEY_LENGTH
    assert find_document(tmp_path, key) == path


def test_distinct_long_names_get_distinct_keys():
    assert partition_key("a" * 300 + "1") != partition_key("a" * 300 + "2")


def test_iter_documents_recurses_and_skips_hidden_and_unsupported(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    for rel in ["a.pdf", "sub/b.docx", "sub/c.txt", ".hidden/d.pdf", "e.MD"]:
        (tmp_path / rel).write_text("x")
    assert [p.relative_to(tmp_path).as_posix() for p in iter_documents(tmp_path)] == ["a.pdf", "e.MD", "sub/b.docx"]
    assert expand_paths([tmp_path / "sub", tmp_path / "a.pdf"]) == [tmp_path / "sub/b.docx", tmp_path / "a.pdf"]


def test_the_corpus_offers_exactly_what_the_parser_reads(tmp_path: Path):
    from evidence_pipeline.errors import ParseError
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.parser_port import SUPPORTED_SUFFIXES

    for i, suffix in enumerate([*SUPPORTED_SUFFIXES, ".txt", ".doc"]):
        (tmp_path / f"f{i}{suffix}").write_text("x")
    found = {p.suffix for p in iter_documents(tmp_path)}
    assert found == set(SUPPORTED_SUFFIXES)
    with pytest.raises(ParseError, match="unsupported file type '.txt'"):
        DoclingParser().parse(tmp_path / f"f{len(SUPPORTED_SUFFIXES)}.txt")


@pytest.mark.parametrize("name", ["SOP-QA-070", "a,b", "x...y", "50%", "[draft]", "ünïcödé", "tab\tname", "a%2C"])
def test_doc_id_comes_back_from_its_key(name: str):
    assert doc_id_from_key(partition_key(name)) == name


def test_shortened_keys_do_not_pretend_to_decode():
    assert doc_id_from_key(partition_key("a" * 240)) is None


def test_scan_maps_keys_to_files_and_reports_duplicate_ids(tmp_path: Path):
    for rel in ["x/a.pdf", "y/a.md", "b,c.md", "long " + "n" * 200 + ".md"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    found = scan(tmp_path)
    assert found.paths["a"] == tmp_path / "x/a.pdf"
    assert found.duplicates == [tmp_path / "y/a.md"]
    assert found.paths["b%2Cc"] == tmp_path / "b,c.md"
    assert {find_document(tmp_path, k) for k in found.paths} == set(found.paths.values())
