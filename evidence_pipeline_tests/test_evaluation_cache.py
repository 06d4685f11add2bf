"""eval --cache: a second run reads parses and embeddings back and prints the same figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidence_pipeline.evaluation.cache import EmbeddingCache
from evidence_pipeline.evaluation.questions import load_questions
from evidence_pipeline.evaluation.runner import evaluate

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "questions" / "sop.jsonl"


def test_second_run_parses_and_embeds_nothing_and_scores_the_same(sample_corpus: Path, tmp_path: Path, monkeypatch):
    paths = sorted(sample_corpus.glob("*.pdf"))[:2]
    questions = load_questions(QUESTIONS)
    systems = ["hybridchunker", "full"]
    first = evaluate(paths, questions, systems, cache=tmp_path, log=lambda _m: None)
    assert len(list((tmp_path / "parsed").rglob("*.docling.json"))) == 2

    from evidence_pipeline.embedding import Embedder
    from evidence_pipeline.parser.baseline_chunks import ConvertingParser

    def refuse(*_a, **_k):
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(ConvertingParser, "convert", refuse)
    embedded: list[int] = []
    real_embed = Embedder.embed
    monkeypatch.setattr(Embedder, "embed", lambda self, texts: embedded.append(len(texts)) or real_embed(self, texts))
    second = evaluate(paths, questions, systems, cache=tmp_path, log=lambda _m: None)
    assert second["systems"] == first["systems"]
    # neither the documents' chunks nor the questions are embedded again
    assert embedded == []


def test_embedding_cache_keys_by_model(tmp_path: Path):
    a = EmbeddingCache(tmp_path, "model-a")
    b = EmbeddingCache(tmp_path, "model-b")
    key = a.key("Aqueous Phase 1")
    a.put_many({key: [0.5, 0.25]})
    assert a.get_many([key])[key].tolist() == [0.5, 0.25]
    assert b.get_many([key]) == {}
    a.close(), b.close()


@pytest.mark.parametrize("renamed", ["SOP-COPY"])
def test_same_bytes_under_another_name_keep_their_own_id(sample_corpus: Path, tmp_path: Path, renamed: str):
    from evidence_pipeline.evaluation.runner import parse_documents

    source = sorted(sample_corpus.glob("*.pdf"))[0]
    copy = tmp_path / "docs" / f"{renamed}.pdf"
    copy.parent.mkdir()
    copy.write_bytes(source.read_bytes())
    cache = tmp_path / "cache"
    (original,) = parse_documents([source], with_docling=False, cache=cache)
    (again,) = parse_documents([copy], with_docling=False, cache=cache)
    assert again.parsed.doc_id == renamed
    assert again.parsed.blocks == original.parsed.blocks
