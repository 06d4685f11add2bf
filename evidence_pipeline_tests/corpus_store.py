"""Every document of the generated SOP corpus ingested once per test session into an embedded Edge store.

Parses through the session's ``parse_cached`` (a module that parsed the corpus before
pays nothing here) and ingests in process with the core pipeline: no Dagster run.
Import the fixture into a test module: ``from evidence_pipeline_tests.corpus_store import corpus_store``.
(``sample_store`` holds two documents; the service and the contract tests need all six.)
"""

import json
from pathlib import Path

import pytest

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "questions" / "sop.jsonl"


def sop_questions() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def corpus_store(sample_corpus: Path, parse_cached, tmp_path_factory):
    """StoreSettings of an Edge store holding every document of the sample corpus."""
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.pipeline import ingest_parsed
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store

    settings = StoreSettings(path=str(tmp_path_factory.mktemp("sample-store") / "store"))
    embedder, counter = Embedder(), token_counter(None)
    with open_store(settings) as store:
        for pdf in sorted(sample_corpus.glob("*.pdf")):
            ingest_parsed(parse_cached(pdf), store, embedder, counter)
    return settings
