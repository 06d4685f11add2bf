from pathlib import Path

import pytest

from evidence_pipeline.corpus import MAX_KEY_LENGTH, doc_id_for, expand_paths, find_document, iter_documents, partition_key


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
