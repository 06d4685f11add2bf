"""The bench command end to end in its --quick form: every figure present, positive and finite.

Timings are not asserted (the machine is shared); the figures' presence and sanity are.
"""

import json
import math

from evidence_pipeline.benchmark.report import all_finite_positive, text_table
from evidence_pipeline.benchmark.runner import QUICK_STORE
from evidence_pipeline.cli import main

EXPECTED = {
    "parse.generated.pages_per_s",
    "build.units_per_s",
    "embed.children_per_s",
    *(f"embed.backend.{b}.{k}" for b in ("onnx", "onnx-int8-token") for k in ("children_per_s", "query_p50_ms")),
    f"upsert.edge.{QUICK_STORE}.points_per_s",
    f"upsert.local.{QUICK_STORE}.points_per_s",
    f"search.edge.{QUICK_STORE}.p50_ms",
    f"search.edge.{QUICK_STORE}.p95_ms",
    f"search.local.{QUICK_STORE}.p50_ms",
    f"search.local.{QUICK_STORE}.p95_ms",
    "ingest.peak_rss_mb",
    "ingest.first_s",
    "reingest.core.fraction",
    "service.search.p50_ms",
    "service.search.p95_ms",
    "search.api.sample.p50_ms",
    "search.api.sample.p95_ms",
    f"search.api.{QUICK_STORE}.p50_ms",
    f"search.api.{QUICK_STORE}.p95_ms",
    "service.search_during_ingest.p50_ms",
}


def test_quick_bench_reports_every_figure(tmp_path, capsys):
    assert main(["bench", "--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "bench.json").read_text())
    figures = {f["key"]: f for f in report["figures"]}
    assert EXPECTED <= set(figures)
    assert all_finite_positive(report)
    # Ratios against the baselines of the same run.
    for key in (
        "embed.children_per_s",
        f"upsert.edge.{QUICK_STORE}.points_per_s",
        f"search.edge.{QUICK_STORE}.p50_ms",
        "search.api.sample.p50_ms",
    ):
        assert math.isfinite(figures[key]["ratio"]) and figures[key]["ratio"] > 0
    for backend in ("onnx", "onnx-int8-token"):
        measured = report["raw"]["embed_backends"]["backends"][backend]
        assert measured["cosine_min"] >= {"onnx": 0.999, "onnx-int8-token": 0.995}[backend]
        assert math.isfinite(figures[f"embed.backend.{backend}.children_per_s"]["ratio"])
    # p95 never below p50; the unchanged re-ingest skipped every document.
    assert figures[f"search.edge.{QUICK_STORE}.p95_ms"]["value"] >= figures[f"search.edge.{QUICK_STORE}.p50_ms"]["value"]
    assert figures["service.search.p95_ms"]["value"] >= figures["service.search.p50_ms"]["value"]
    assert report["raw"]["service"]["documents"] == 2 and report["raw"]["service"]["points"] > 0
    # The search service kept answering while another process ingested, and nothing failed.
    during = report["raw"]["service_ingest"]
    assert during["failed_documents"] == [] and during["n_failed_requests"] == 0 and during["requests"] > 0
    core = report["raw"]["ingest_core"]
    assert core["skipped_first"] == 0 and core["skipped_second"] == core["documents"] == 2
    assert "| figure |" in (tmp_path / "bench.md").read_text()
    out = capsys.readouterr().out
    assert "re-ingest unchanged (core)" in out and out.strip() == text_table(report).strip()


# -- the core skip of unchanged files the re-ingest figure relies on (pipeline.ingest_file/ingest_files)

TABLE_MD = """# Mixing limits

Table 1: Flow limits

| Stream | Max flow (mL/min) |
|---|---|
| Aqueous Phase 1 | {flow} |
| Ethanol phase | 12 |

The limits apply during LNP mixing.
"""


def test_unchanged_files_are_skipped_and_changed_ones_reingested(tmp_path):
    from evidence_pipeline import pipeline
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.records import sha256_file
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store.edge import EdgeStore

    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text(TABLE_MD.format(flow=36))
    b.write_text(TABLE_MD.format(flow=48))
    parser, embedder, counter = DoclingParser(), Embedder(), token_counter(None)
    with EdgeStore(StoreSettings(path=str(tmp_path / "store"))) as store:
        first = pipeline.ingest_files([a, b], store, parser, embedder, counter)
        assert [r.skipped for r in first] == [False, False] and all(r.children > 0 for r in first)
        n = store.count()
        assert store.document_version("a")[0] == sha256_file(str(a))

        again = pipeline.ingest_files([a, b], store, parser, embedder, counter)
        assert [(r.doc_id, r.skipped) for r in again] == [("a", True), ("b", True)]
        assert store.count() == n
        assert pipeline.ingest_file(b, store, parser, embedder, counter).skipped

        a.write_text(TABLE_MD.format(flow=40))
        changed = pipeline.ingest_files([a, b], store, parser, embedder, counter)
        assert [r.skipped for r in changed] == [False, True]
        assert any("40" in p.payload["text"] for p in store.iter_points("a"))

        # Another pipeline version (other options) re-ingests; force does too.
        other = pipeline.PipelineOptions(max_parent_tokens=500)
        assert not pipeline.ingest_file(b, store, parser, embedder, counter, other).skipped
        assert not pipeline.ingest_file(b, store, parser, embedder, counter, other, force=True).skipped

        # Points that disagree on the stamp (an interrupted replace) never count as unchanged.
        points = list(store.iter_points("b"))
        mixed = [points[0].model_copy(update={"payload": {**points[0].payload, "content_hash": "old"}}), *points[1:]]
        store.replace_document("b", mixed)
        assert store.document_version("b") == ("", "")
        assert not pipeline.ingest_file(b, store, parser, embedder, counter, other).skipped


def test_the_embedding_figure_embeds_every_text_in_every_round(tmp_path):
    """The memo of the default backend would answer a later round from memory: each of our
    rounds embeds every distinct text again, as a first ingest does."""
    from evidence_pipeline import pipeline
    from evidence_pipeline.benchmark import stages
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.work import WORK

    path = tmp_path / "limits.md"
    path.write_text(TABLE_MD.format(flow=36))
    counter = token_counter(None)
    units = pipeline.document_units(DoclingParser().parse(path), pipeline.PipelineOptions(), counter)
    embedder = Embedder()
    embedded = []
    for rounds in (1, 3):
        with WORK.delta() as counts:
            measured = stages.embed([units], embedder, counter, rounds=rounds)
        embedded.append(counts.get("embed.texts", 0))
    assert measured["children"] > 1 and embedded[0] >= measured["children"]
    assert embedded[1] == 3 * embedded[0]
