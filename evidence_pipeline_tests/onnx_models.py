"""The ONNX variants of the packaged model exported once per test run, and the texts ingest
embeds for one generated SOP: shared by the embedding tests (registered in conftest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidence_pipeline.embedding import resolve_model
from evidence_pipeline.embedding_onnx import ONNX_VARIANTS, ensure_exported
from evidence_pipeline_tests.run_shared import made_once

VARIANTS = ONNX_VARIANTS


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory) -> Path:
    """Every variant exported once per test run (``run_shared.made_once``), into a cache of the
    run's own, with the Hugging Face hub switched off: the export reads the packaged folder and
    nothing else."""
    with made_once(tmp_path_factory, "onnx-models") as (cache, made), pytest.MonkeyPatch.context() as mp:
        if not made:
            mp.setenv("HF_HUB_OFFLINE", "1")
            mp.setenv("TRANSFORMERS_OFFLINE", "1")
            for variant in VARIANTS:
                ensure_exported(resolve_model(None), variant, cache, log=lambda _: None)
    return cache


def torch_vectors_of(texts: list[str]):
    """The reference vectors: sentence-transformers itself, fp32 on torch (what the ONNX export
    must reproduce, and what ``Embedder`` falls back to where ONNX cannot run)."""
    from evidence_pipeline.embedding import _sentence_transformer

    model = _sentence_transformer(resolve_model(None))
    return model.encode(list(texts), batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)


@pytest.fixture(scope="session")
def sample_texts(sample_corpus, parse_cached) -> list[str]:
    """What ingest embeds for one generated SOP: its children's texts (rows, captions, context)."""
    from evidence_pipeline import pipeline
    from evidence_pipeline.embedding import token_counter

    counter = token_counter(None)
    doc = parse_cached(sample_corpus / "SOP-8812.pdf")
    units = pipeline.document_units(doc, pipeline.PipelineOptions(), counter)
    return [c.embed_text for c in pipeline.children_of(units, counter)]
