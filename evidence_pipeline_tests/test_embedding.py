"""The embedding model's window, word-piece counting and embeddings (the packaged all-MiniLM-L6-v2)."""

import json

import numpy as np

from evidence_pipeline.embedding import (
    DEFAULT_MAX_SEQ_LENGTH,
    Embedder,
    max_seq_length,
    resolve_model,
    token_counter,
)


def test_window_comes_from_the_model_folder(tmp_path):
    packaged = resolve_model(None)
    assert max_seq_length(packaged) == 256  # sentence_bert_config.json of all-MiniLM-L6-v2
    (tmp_path / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    assert max_seq_length(str(tmp_path)) == 128
    assert max_seq_length(str(tmp_path / "no-config")) == DEFAULT_MAX_SEQ_LENGTH


def test_counter_leaves_room_for_the_special_tokens():
    counter = token_counter(None)
    assert counter.max_tokens == max_seq_length(counter.model_path) - 2 == 254
    assert counter.count("") == 0 and counter.count("flow rate") == 2  # two whole-word pieces, no [CLS]/[SEP]
    assert counter.counts(["flow rate", "", "mL/min"]) == [counter.count("flow rate"), 0, counter.count("mL/min")]


def test_head_cuts_at_a_word_boundary_within_the_budget():
    counter = token_counter(None)
    text = "The maximum flow rate of the aqueous phase is 36 mL/min during LNP mixing."
    head, rest = counter.head(text, 8)
    assert counter.count(head) <= 8 < counter.count(head + " " + rest.split()[0])
    assert f"{head} {rest}" == text


def test_embeddings_are_normalised_and_rank_the_paraphrase_first():
    embedder = Embedder()
    docs = ["The aqueous phase flows at 36 mL/min.", "Store the vials at 2 to 8 degrees Celsius."]
    vectors = embedder.embed(docs)
    assert vectors.shape == (2, embedder.dim) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("What is the flow rate of the aqueous phase?")
    assert int(np.argmax(vectors @ query)) == 0
    assert embedder.embed([]).shape == (0, embedder.dim)


def test_a_repeated_text_is_embedded_once_and_returned_at_every_place():
    class Counting(Embedder):
        def _embed(self, texts):
            self.seen.append(list(texts))
            return super()._embed(texts)

    embedder = Counting()
    embedder.seen = []
    texts = ["Aqueous Phase 1 | Max: 1.8", "Store at 2 to 8 °C.", "Aqueous Phase 1 | Max: 1.8"]
    vectors = embedder.embed(texts)
    assert embedder.seen == [texts[:2]]
    assert vectors.shape == (3, embedder.dim) and np.array_equal(vectors[0], vectors[2])
    assert np.allclose(vectors[:2], embedder.embed(texts[:2]), atol=1e-6)
