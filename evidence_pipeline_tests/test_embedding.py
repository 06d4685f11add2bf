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


def _child(i: int, prefix: str, text: str):
    from evidence_pipeline.records import ChildUnit

    return ChildUnit(child_id=f"u-c{i}", unit_id="u", parent_id="u", doc_id="SOP-1", kind="row", text=text, prefix=prefix)


def test_a_child_vector_mixes_its_prefix_and_text_by_word_pieces_and_embeds_a_shared_prefix_once():
    class Counting(Embedder):
        def _embed(self, texts):
            self.seen.extend(texts)
            return super()._embed(texts)

    embedder = Counting()
    embedder.seen = []
    prefix = "SOP-1 LNP Formulation | 6 Process parameters | Table 3: Mixing conditions"
    children = [
        _child(0, prefix, "Aqueous Phase 1 | Flow rate (mL/min) / Max: 1.8"),
        _child(1, prefix, "Lipid Phase | Flow rate (mL/min) / Max: 0.6"),
        _child(2, "", "Store the vials at 2 to 8 degrees Celsius."),
    ]
    vectors = embedder.embed_children(children)
    assert sorted(embedder.seen) == sorted([c.text for c in children] + [prefix])  # the prefix once, not twice

    counter = token_counter(None)
    p, t = embedder.embed([prefix])[0], embedder.embed([children[0].text])[0]
    w = counter.count(prefix) / (counter.count(prefix) + counter.count(children[0].text))
    expected = w * p + (1 - w) * t
    assert np.allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-6)
    assert np.allclose(vectors[2], embedder.embed([children[2].text])[0], atol=1e-6)  # no prefix: the text's vector
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # The mix still stands for prefix and text: closer to the whole text's vector than either part alone.
    whole = embedder.embed([children[0].embed_text])[0]
    assert float(vectors[0] @ whole) > max(float(p @ whole), float(t @ whole))
    assert embedder.embed_children([]).shape == (0, embedder.dim)


def test_joint_child_vectors_embed_the_whole_text():
    from evidence_pipeline.settings import EmbeddingSettings

    joint = Embedder(EmbeddingSettings(child_vectors="joint"))
    children = [_child(0, "SOP-1 LNP Formulation | Table 3", "Aqueous Phase 1 | Max: 1.8")]
    assert np.allclose(joint.embed_children(children), joint.embed([children[0].embed_text]), atol=1e-6)
    assert joint.vectors_id == f"{joint.model_id}+joint" and Embedder().vectors_id == Embedder().model_id


def test_child_vectors_setting_from_the_environment(monkeypatch):
    import pytest

    from evidence_pipeline.orchestration.resources import EmbedderResource
    from evidence_pipeline.settings import EmbeddingSettings, SettingsError

    monkeypatch.delenv("EVIDENCE_CHILD_VECTORS", raising=False)
    assert EmbeddingSettings.from_env().child_vectors == "mixed"
    monkeypatch.setenv("EVIDENCE_CHILD_VECTORS", "joint")
    assert EmbeddingSettings.from_env().child_vectors == "joint"
    assert EmbedderResource.from_env().embedder().vectors_id.endswith("+joint")  # a store re-embeds on a switch
    monkeypatch.setenv("EVIDENCE_CHILD_VECTORS", "average")
    with pytest.raises(SettingsError) as err:
        EmbeddingSettings.from_env()
    assert str(err.value) == "EVIDENCE_CHILD_VECTORS='average': expected one of mixed, joint"


def test_an_embedding_leaves_one_core_to_a_busy_parser_and_takes_it_back_after(monkeypatch):
    from evidence_pipeline import embedding
    from evidence_pipeline.settings import EmbeddingSettings

    busy = [True]
    monkeypatch.setattr(embedding, "_cores", lambda: 4)
    assert embedding.embedding_lanes() == 4  # no parser beside it: every core
    embedding.share_cores_with_parser(lambda: busy[0])
    try:
        assert embedding.embedding_lanes() == 3  # the parser holds one core while it parses
        assert embedding.embedding_lanes(2) == 2  # an explicit setting caps the lanes
        busy[0] = False
        assert embedding.embedding_lanes() == 4  # between two parses, every core
    finally:
        embedding.share_cores_with_parser(False)
    monkeypatch.setattr(embedding, "_cores", lambda: 1)
    embedding.share_cores_with_parser(True)
    try:
        assert embedding.embedding_lanes() == 1  # never fewer than one
    finally:
        embedding.share_cores_with_parser(None)
    # One session on one thread per run, whatever the lanes: batches run side by side instead.
    session = Embedder(EmbeddingSettings(threads=2)).model.session
    assert session.get_session_options().intra_op_num_threads == 1


def test_vectors_do_not_depend_on_how_many_batches_run_at_once(monkeypatch):
    from evidence_pipeline import embedding_onnx

    texts = [f"Aqueous Phase {i} | Flow rate (mL/min) / Max: {i}.8 at {20 + i} degrees" for i in range(40)]
    encoder = Embedder().model
    monkeypatch.setattr(encoder, "_memo", None)  # every call runs the model
    one = encoder.encode(texts, lanes=1)
    two = encoder.encode(texts, lanes=2)
    switching = iter([1, 2, 2, 1, 2] * 10)
    mixed = encoder.encode(texts, lanes=lambda: next(switching))
    assert np.array_equal(one, two) and np.array_equal(one, mixed)
    assert embedding_onnx.BATCH_SIZE < len(texts)  # several batches, so lanes mattered


def test_bad_thread_setting_is_one_line(monkeypatch):
    import pytest

    from evidence_pipeline.settings import EmbeddingSettings, SettingsError

    monkeypatch.setenv("EVIDENCE_EMBED_THREADS", "0")
    with pytest.raises(SettingsError) as err:
        EmbeddingSettings.from_env()
    assert str(err.value) == "EVIDENCE_EMBED_THREADS='0': must be at least 1"  # settings._env_number's line
    monkeypatch.setenv("EVIDENCE_EMBED_THREADS", "2")
    assert EmbeddingSettings.from_env().threads == 2
