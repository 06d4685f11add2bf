"""Two documents of the generated sample corpus, indexed once per test session, with the
generator's questions about them: the store the query surfaces (command line, retrievers,
MCP server) are tested on. Registered in conftest (``sample_store``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from evidence_pipeline.settings import StoreSettings

DOCS = ("SOP-8812", "SOP-MFG-231")


class SampleStore(NamedTuple):
    settings: StoreSettings
    questions: list[dict]  # the generator's questions about DOCS (truth/questions.jsonl)

    def table_questions(self, doc_id: str = DOCS[0]) -> list[tuple[str, str]]:
        """(question, caption of the table that answers it) for the questions about ``doc_id``
        whose answer must come with a table caption, in the generator's order."""
        return [
            (q["question"], q["must_include"][0])
            for q in self.questions
            if q["doc_id"] == doc_id and q["must_include"] and q["must_include"][0].startswith("Table ")
        ]


@pytest.fixture(scope="session")
def sample_store(sample_corpus: Path, parse_cached, tmp_path_factory) -> SampleStore:
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.pipeline import ingest_parsed
    from evidence_pipeline.store import open_store

    settings = StoreSettings(path=str(tmp_path_factory.mktemp("sample-store") / "store"))
    with open_store(settings) as store:
        for doc_id in DOCS:
            ingest_parsed(parse_cached(sample_corpus / f"{doc_id}.pdf"), store, Embedder(), token_counter(None))
    lines = (sample_corpus.parent / "truth" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [q for q in map(json.loads, filter(None, lines)) if q["doc_id"] in DOCS]
    return SampleStore(settings, questions)
