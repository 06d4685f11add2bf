"""``evidence-pipeline bench --ingest DIR``: the end-to-end ingest and the search on its store are
reported, every figure present and finite. Speeds are not asserted (the machine is shared); the
work the ingest did is (``test_work_counters`` asserts it in detail)."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from evidence_pipeline.cli import main


@pytest.mark.slow
def test_the_bench_ingests_end_to_end_then_searches_that_store(sample_corpus, tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("SOP-8812.pdf", "SOP-QA-007.pdf"):
        shutil.copy(sample_corpus / name, folder / name)
    out = tmp_path / "bench"
    assert main(["bench", "--ingest", str(folder), "--ingest-only", "--out", str(out)]) == 0
    report = json.loads((out / "bench.json").read_text())
    figures = {f["key"]: f for f in report["figures"]}
    for key in ("ingest.e2e.pages_per_s", "ingest.e2e.cpu_s_per_page", "ingest.e2e.cpu.parse", "ingest.e2e.cpu.embed",
                "ingest.e2e.cpu.upsert", "ingest.e2e.cpu.dagster_and_rest", "ingest.e2e.peak_rss_mb",
                "search.e2e.p50_ms", "search.e2e.p95_ms"):  # fmt: skip
        assert key in figures and math.isfinite(figures[key]["value"]) and figures[key]["value"] > 0, key
    raw = report["raw"]["ingest_e2e"]
    assert raw["documents"] == 2 and raw["work"]["dagster.runs"] == 2 and raw["work"]["embed.sessions"] == 1
    assert raw["search"]["p95_ms"] >= raw["search"]["p50_ms"]
    assert set(raw["search"]["stages"]) == {"embedding", "routing", "candidates", "named rows", "expand"}
    assert "evidence-pipeline ingest, cold, end to end" in capsys.readouterr().out
    assert main(["bench", "--ingest-only"]) == 2  # needs --ingest DIR


def test_search_alone_on_a_kept_store(sample_store, capsys):
    from evidence_pipeline.benchmark import ingest_e2e

    assert ingest_e2e.main(["--store", sample_store.settings.path, "--rounds", "1"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["queries"] == len(ingest_e2e.queries()) and got["rounds"] == 1
    assert 0 < got["p50_ms"] <= got["p95_ms"]
    for argv in ([], ["folder", "--store", sample_store.settings.path]):  # one of the two, never both
        with pytest.raises(SystemExit):
            ingest_e2e.main(argv)
