"""Batched runs (what a backfill launches): one run over a range of documents, outputs and metadata per document."""

import pickle
from pathlib import Path

import dagster as dg
import pytest

from evidence_pipeline.orchestration.assets import ASSETS, STORE_POOL, unit_preview
from evidence_pipeline.orchestration.batching import MAX_PARTITIONS_PER_RUN
from evidence_pipeline.orchestration.definitions import build_definitions
from evidence_pipeline.orchestration.definitions import defs as module_defs
from evidence_pipeline.orchestration.io import LazyPartitions, partition_path
from evidence_pipeline.orchestration.partition_ranges import range_tags
from evidence_pipeline.orchestration.resources import CorpusResource, StoreResource
from evidence_pipeline.records import sha256_file
from evidence_pipeline.store import open_store
from evidence_pipeline_tests.dagster_env import KEYS
from evidence_pipeline_tests.docs import lnp_doc


def latest(instance, asset, key):
    records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[key]), limit=1).records
    return {k: v.value for k, v in records[0].asset_materialization.metadata.items()} if records else None


def test_every_asset_is_described_grouped_batched_and_typed():
    graph = module_defs.resolve_asset_graph()
    for asset in ASSETS:
        node = graph.get(asset.key)
        assert asset.descriptions_by_key[asset.key], asset.key
        assert node.group_name == "evidence" and asset.specs_by_key[asset.key].kinds, asset.key
        policy = asset.backfill_policy
        assert policy == dg.BackfillPolicy.multi_run(MAX_PARTITIONS_PER_RUN), asset.key
    assert module_defs.resolve_assets_def("qdrant_points").op.pool == STORE_POOL


def test_one_run_materializes_each_document_with_its_own_metadata(batched_env):
    assert batched_env["result"].success
    instance, corpus = batched_env["instance"], batched_env["corpus"]
    with open_store(batched_env["store"]) as store:
        for key in KEYS:
            raw = latest(instance, "raw_pdfs", key)
            assert raw["content_hash"] == sha256_file(str(corpus / f"{key}.md"))
            points = latest(instance, "qdrant_points", key)
            assert points["doc_id"] == key and points["content_hash"] == raw["content_hash"]
            assert points["points"] == latest(instance, "child_embeddings", key)["children"] == store.count(key) > 0
    assert len({latest(instance, "qdrant_points", k)["pipeline_version"] for k in KEYS}) == 1
    assert [r.dagster_run.run_id for r in instance.get_run_records()][-1] == batched_env["result"].run_id


def test_outputs_are_stored_one_file_per_document(batched_env):
    base = Path(batched_env["instance"].storage_directory())
    for asset in ("raw_pdfs", "parsed_docs", "evidence_units", "split_units", "child_embeddings", "bm25_index"):
        assert sorted(p.name for p in (base / asset).iterdir()) == sorted(KEYS), asset
    assert pickle.loads((base / "parsed_docs" / "limits").read_bytes()).doc_id == "limits"


def test_no_partition_key_writes_outside_its_asset_folder(tmp_path):
    from upath import UPath

    folder = UPath(tmp_path) / "parsed_docs"
    assert partition_path(folder, "limits") == folder / "limits"
    assert partition_path(folder, "..") == folder / "%2E%2E"
    assert partition_path(folder, "/etc/x") == folder / "%2Fetc" / "x"


def test_a_single_document_run_reads_the_batch_outputs(batched_env):
    # Re-write one document's points from the stored stage outputs, as a retry from failure would.
    result = dg.materialize(
        ASSETS,
        selection=["qdrant_points"],
        partition_key="limits",
        instance=batched_env["instance"],
        resources=batched_env["defs"].resources,
    )
    assert result.success
    meta = latest(batched_env["instance"], "qdrant_points", "limits")
    assert meta["upserted"] == meta["points"] and meta["deleted_stale"] == 0


def test_preview_shows_caption_pages_and_first_rows():
    from evidence_pipeline import pipeline
    from evidence_pipeline.embedding import token_counter

    units = pipeline.evidence_units(lnp_doc(), pipeline.PipelineOptions(), token_counter(None))
    text = unit_preview(units)
    assert "**Table 1: Pump flow rate limits**" in text and "pages 2" in text
    assert "| Aqueous Phase 1 | 0.6 | 1.8 | 1.1 | 2.4* |" in text


def test_inputs_of_a_batch_load_one_document_at_a_time():
    loads = []
    lazy = LazyPartitions(["a", "b"], lambda key: loads.append(key) or key.upper())
    assert list(lazy) == ["a", "b"] and loads == []
    assert lazy["b"] == "B" and loads == ["b"]
    with pytest.raises(KeyError):
        lazy["c"]


def test_a_failing_document_fails_its_batch_naming_every_bad_file(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a-broken.pdf").write_bytes(b"%PDF-1.7\nnot really a pdf")
    (corpus / "b-fine.md").write_text("# Fine\n\nA short note.")
    defs = build_definitions({"store": StoreResource(path=str(tmp_path / "store")), "corpus": CorpusResource(root=str(corpus))})
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("documents", ["a-broken", "b-fine"])
        result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=instance,
            tags=range_tags("a-broken", "b-fine"),
            raise_on_error=False,
        )
    assert not result.success
    [failure] = [e for e in result.all_events if e.is_step_failure]
    assert failure.step_key == "parsed_docs"
    description = failure.step_failure_data.user_failure_data.description
    assert description.startswith("1 of 2 documents failed") and "a-broken.pdf" in description


def test_metadata_for_a_document_outside_the_run_is_refused():
    from evidence_pipeline.orchestration.batching import record_metadata

    with pytest.raises(dg.DagsterInvariantViolationError, match="'c'"):
        record_metadata(dg.build_asset_context(), ["a", "b"], "c", {"points": 1})
