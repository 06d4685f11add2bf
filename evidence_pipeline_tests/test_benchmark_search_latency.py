"""``benchmark.search_latency --store``: search() timed on a store an ingest built."""

import json

import pytest

from evidence_pipeline.benchmark.search_latency import main, sample_store
from evidence_pipeline.embedding import Embedder, token_counter
from evidence_pipeline_tests.docs import lnp_doc


def test_times_search_on_an_existing_store_with_the_given_questions(tmp_path, capsys):
    store = sample_store([lnp_doc()], Embedder(), token_counter(None), tmp_path / "store")
    questions = tmp_path / "q.jsonl"
    asked = ["What is the maximum flow rate of Aqueous Phase 1?", "Which warning applies to lipid nanoparticles?"]
    questions.write_text(
        "".join(json.dumps({"id": f"q{i}", "question": q, "doc_id": "SOP-8812", "answers": ["1.8"]}) + "\n" for i, q in enumerate(asked))
    )
    assert main(["--store", store.path, "--questions", str(questions), "--queries", "4"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["store"] == store.path
    search = got["search"]
    assert search["queries"] == 4
    for mode in ("kept", "per_call"):
        parts = search[mode]
        assert 0 < parts["embed"]["p50_ms"] and 0 < parts["store"]["p50_ms"] <= parts["store"]["max_ms"]
        assert parts["total"]["p50_ms"] <= parts["total"]["p95_ms"] <= parts["total"]["max_ms"]


def test_a_missing_store_is_one_line(tmp_path):
    (tmp_path / "q.jsonl").write_text('{"id": "q0", "question": "flow rate", "doc_id": "SOP-8812", "answers": ["1.8"]}\n')
    with pytest.raises(SystemExit) as err:
        main(["--store", str(tmp_path / "nothing"), "--questions", str(tmp_path / "q.jsonl")])
    assert str(err.value) == f"error: {tmp_path / 'nothing'}: no store there (ingest into it first)"
    with pytest.raises(SystemExit):
        main(["--store", str(tmp_path)])  # --questions is required with --store
