"""End to end through Dagster: generated PDFs -> assets -> embedded Qdrant Edge store -> search."""

import shutil
from pathlib import Path

import dagster as dg
import pytest

from evidence_pipeline.corpus import doc_id_for, partition_key
from evidence_pipeline.embedding import Embedder
from evidence_pipeline.orchestration.asset_job import ASSET_JOB_NAME, ingest_job_def
from evidence_pipeline.orchestration.definitions import build_definitions
from evidence_pipeline.orchestration.definitions import defs as module_defs
from evidence_pipeline.orchestration.resources import CorpusResource, StoreResource
from evidence_pipeline.orchestration.runner import ingest_paths
from evidence_pipeline.retrieval import search_store
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store


@pytest.fixture(scope="module")
def env(sample_corpus: Path, tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    corpus = root / "corpus"
    corpus.mkdir()
    # One run per document on this path: four documents keep it quick and still hold the
    # near-identical ids (SOP-QA-070 / SOP-QA-007) the ranking test needs.
    for doc in ("SOP-8812", "SOP-QA-070", "SOP-QA-007", "SOP-MFG-231"):
        shutil.copy(sample_corpus / f"{doc}.pdf", corpus)
    (corpus / "corrupt.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer <<>>\n%%EOF garbage")
    store = StoreSettings(path=str(root / "store"))
    defs = build_definitions({"store": StoreResource(path=store.path), "corpus": CorpusResource(root=str(corpus))})
    with dg.instance_for_test() as instance:
        summary = ingest_paths([corpus], defs, instance)
        yield {"corpus": corpus, "store": store, "defs": defs, "instance": instance, "summary": summary}


def _search(env, query, k=5):
    with open_store(env["store"]) as store:
        return search_store(store, Embedder(), query, k)


def test_definitions_load():
    assert dg.Definitions.validate_loadable(module_defs) is None
    job = ingest_job_def(module_defs)
    # One name for the pipeline: the asset job that UI backfills of the assets run too.
    assert job.name == ASSET_JOB_NAME
    assert [j.name for j in module_defs.jobs if not j.name.startswith("__")] == ["check_documents"]
    assert {s.job_name for s in [*module_defs.sensors, *module_defs.schedules]} == {ASSET_JOB_NAME}
    assert {n.name for n in job.nodes} >= {
        "raw_pdfs",
        "parsed_docs",
        "evidence_units",
        "split_units",
        "child_embeddings",
        "bm25_index",
        "qdrant_points",
        "store_checks",
    }


def test_corrupt_pdf_fails_alone_with_its_name(env):
    summary = env["summary"]
    [failure] = summary.failures
    assert failure.path.name == "corrupt.pdf"
    assert "corrupt.pdf" in failure.error
    assert summary.succeeded == len(summary.outcomes) - 1 == 4
    assert all(o.children > 0 for o in summary.outcomes if o.success)


def test_table_cell_question_returns_table_with_its_warning(env):
    hits = _search(env, "What is the maximum flow rate for Aqueous Phase 1 in SOP-8812?")
    top = hits[0]
    assert top.doc_id == "SOP-8812"
    assert top.unit_kind == "table"
    assert "Aqueous Phase 1" in top.parent_text and "1.8" in top.parent_text
    assert "cooling jacket" in top.parent_text
    assert top.caption and top.caption.startswith("Table 1")
    assert len({h.parent_id for h in hits}) == len(hits)


def test_exact_id_question_ranks_the_right_document_first(env):
    for doc_id in ("SOP-QA-070", "SOP-QA-007"):
        hits = _search(env, f"{doc_id} acceptance criteria table")
        assert hits[0].doc_id == doc_id, [h.doc_id for h in hits]


def test_reingest_leaves_ids_and_count_unchanged(env):
    path = env["corpus"] / "SOP-8812.pdf"
    with open_store(env["store"]) as store:
        before_ids, before_total = store.point_ids("SOP-8812"), store.count()
    runs_before = len(env["instance"].get_run_records())
    unchanged = ingest_paths([path], env["defs"], env["instance"])
    assert [o.unchanged for o in unchanged.outcomes] == [True]
    assert len(env["instance"].get_run_records()) == runs_before  # nothing parsed or embedded
    forced = ingest_paths([path], env["defs"], env["instance"], force=True)
    assert forced.succeeded == 1 and not forced.outcomes[0].unchanged
    assert forced.outcomes[0].children > 0
    with open_store(env["store"]) as store:
        assert store.point_ids("SOP-8812") == before_ids
        assert store.count() == before_total


def test_an_ingest_reading_ahead_embeds_beside_the_parser_then_gives_the_cores_back(env, monkeypatch):
    from evidence_pipeline import embedding
    from evidence_pipeline.orchestration import runner

    calls = []
    monkeypatch.setattr(runner, "share_cores_with_parser", lambda busy=True: calls.append(busy))
    path = env["corpus"] / "SOP-8812.pdf"
    assert ingest_paths([path], env["defs"], env["instance"], force=True).succeeded == 1
    # the worker parser reads ahead: the embedding leaves it a core while it parses, and the
    # cores are given back after the run
    parser = env["defs"].resources["parser"].parser()
    assert calls == [parser.busy, False]
    calls.clear()
    assert ingest_paths([path], env["defs"], env["instance"], force=True, read_ahead=False).succeeded == 1
    assert calls == []
    assert embedding._parser_busy is None


def test_materializations_carry_metadata(env):
    key = partition_key(doc_id_for(env["corpus"] / "SOP-8812.pdf"))
    event = env["instance"].get_latest_materialization_event(dg.AssetKey("evidence_units"))
    assert event is not None
    for asset in ("parsed_docs", "evidence_units", "child_embeddings", "qdrant_points"):
        records = (
            env["instance"]
            .fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[key]), limit=1)
            .records
        )
        assert records, asset
        assert records[0].asset_materialization.metadata, asset
    mat = (
        env["instance"]
        .fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey("qdrant_points"), asset_partitions=[key]), limit=1)
        .records[0]
        .asset_materialization
    )
    assert mat.metadata["points"].value > 10


def test_document_outside_the_corpus_rematerializes_from_its_recorded_path(tmp_path):
    """`ingest /elsewhere/x.md` records the path; a run from the UI or the schedule (no
    config) reads it from there, and refuses with the reason once that file is gone."""
    from evidence_pipeline.orchestration.assets import raw_pdfs
    from evidence_pipeline.orchestration.history import latest_metadata

    (tmp_path / "corpus").mkdir()
    source = tmp_path / "elsewhere" / "outside.md"
    source.parent.mkdir()
    source.write_text("# Outside\n\nA document kept outside the corpus folder.\n")
    resources = {"corpus": CorpusResource(root=str(tmp_path / "corpus"))}
    key = partition_key(doc_id_for(source))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("documents", [key])
        config = {"ops": {"raw_pdfs": {"config": {"path": str(source)}}}}
        assert dg.materialize([raw_pdfs], partition_key=key, instance=instance, resources=resources, run_config=config).success
        # As the UI or the schedule launch it: no path in the config.
        again = dg.materialize([raw_pdfs], partition_key=key, instance=instance, resources=resources)
        assert again.success
        assert latest_metadata(instance, "raw_pdfs", [key])[key]["source_path"] == str(source)
        source.unlink()
        gone = dg.materialize([raw_pdfs], partition_key=key, instance=instance, resources=resources, raise_on_error=False)
        assert not gone.success
        [failure] = [e for e in gone.all_events if e.is_step_failure]
        description = failure.step_failure_data.user_failure_data.description
        assert description == (
            f"partition {key!r}: no such file in corpus folder {tmp_path / 'corpus'}, and its recorded source {source} is gone"
        )
        # A key never materialized keeps the plain reason.
        instance.add_dynamic_partitions("documents", ["never-seen"])
        unknown = dg.materialize([raw_pdfs], partition_key="never-seen", instance=instance, resources=resources, raise_on_error=False)
        [failure] = [e for e in unknown.all_events if e.is_step_failure]
        assert failure.step_failure_data.user_failure_data.description.endswith(f"no such file in corpus folder {tmp_path / 'corpus'}")
