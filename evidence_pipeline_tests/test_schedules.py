"""The re-ingestion schedule: only stale documents, everything after a pipeline version bump."""

import dagster as dg
import pytest

from evidence_pipeline import pipeline
from evidence_pipeline.orchestration.definitions import build_definitions
from evidence_pipeline.orchestration.partition_ranges import RANGE_END_TAG, RANGE_START_TAG
from evidence_pipeline.orchestration.resources import (
    CorpusResource,
    EmbedderResource,
    ParserResource,
    PipelineOptionsResource,
    StoreResource,
    current_pipeline_version,
)
from evidence_pipeline.orchestration.schedules import DEFAULT_CRON, build_reingest_schedule, reingest_cron
from evidence_pipeline.records import sha256_file
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import Point, SparseVector, point_id

SCHEDULE = build_reingest_schedule()


@pytest.fixture
def env(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    paths = {}
    for name in ("a", "b", "c"):
        paths[name] = corpus / f"{name}.md"
        paths[name].write_text(f"# {name}\n\ntext of {name}")
    store = StoreSettings(path=str(tmp_path / "store"))
    resources = {
        "corpus": CorpusResource(root=str(corpus)),
        "store": StoreResource(path=store.path),
        "parser": ParserResource(),
        "embedder": EmbedderResource(),
        "pipeline_options": PipelineOptionsResource(),
    }
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("documents", ["a", "b", "c"])
        version = current_pipeline_version(ParserResource(), EmbedderResource(), PipelineOptionsResource())
        for name, path in paths.items():
            record_indexed(instance, store, name, sha256_file(str(path)), version)
        yield {"instance": instance, "paths": paths, "store": store, "resources": resources, "version": version}


def record_indexed(instance, store, key, content_hash, version):
    """What a successful run leaves: qdrant_points metadata and the document's points."""
    instance.report_runless_asset_event(
        dg.AssetMaterialization(
            "qdrant_points",
            partition=key,
            metadata={"doc_id": key, "points": 1, "content_hash": content_hash, "pipeline_version": version},
        )
    )
    point = Point(
        id=point_id(key, "c0", "p"),
        dense=[1.0, 0.0, 0.0],
        sparse=SparseVector(indices=[1], values=[1.0]),
        payload={"doc_id": key, "parent_id": "p", "parent_text": "t", "content_hash": content_hash},
    )
    with open_store(store) as s:
        s.ensure_collection(3)
        s.replace_document(key, [point])


def evaluate(env):
    with dg.build_schedule_context(instance=env["instance"], resources=env["resources"]) as context:
        result = SCHEDULE(context)
    if isinstance(result, dg.SkipReason):
        return []
    return [r.partition_key or f"{r.tags[RANGE_START_TAG]}..{r.tags[RANGE_END_TAG]}" for r in result]


def test_nothing_stale_skips(env):
    with dg.build_schedule_context(instance=env["instance"], resources=env["resources"]) as context:
        result = SCHEDULE(context)
    assert isinstance(result, dg.SkipReason) and "3 documents" in result.skip_message


def test_changed_content_is_reingested(env):
    env["paths"]["b"].write_text("# b\n\nrevised")
    assert evaluate(env) == ["b"]


def test_pipeline_version_bump_reingests_everything(env, monkeypatch):
    monkeypatch.setattr(pipeline, "PIPELINE_VERSION", pipeline.PIPELINE_VERSION + "-next")
    assert current_pipeline_version(ParserResource(), EmbedderResource(), PipelineOptionsResource()) != env["version"]
    assert evaluate(env) == ["a..c"]


def test_changed_unit_options_reingest_everything(env):
    # Unit options are Dagster config: another section chunk size is another pipeline version.
    env["resources"]["pipeline_options"] = PipelineOptionsResource(units={"section_chunk_tokens": 120})
    assert evaluate(env) == ["a..c"]


def test_failed_and_unregistered_documents_are_ingested(env):
    (env["paths"]["a"].parent / "d.md").write_text("# d\n\nnew, sensor stopped")
    assert evaluate(env) == ["d"]
    assert "d" in env["instance"].get_dynamic_partitions("documents")


def test_documents_missing_from_the_store_are_reingested(env):
    with open_store(env["store"]) as s:
        s.delete_document("a")
    assert evaluate(env) == ["a"]


def test_cron_from_environment(monkeypatch):
    monkeypatch.delenv("EVIDENCE_REINGEST_CRON", raising=False)
    assert reingest_cron() == DEFAULT_CRON
    monkeypatch.setenv("EVIDENCE_REINGEST_CRON", "*/15 * * * *")
    assert build_definitions().resolve_schedule_def("reingest_schedule").cron_schedule == "*/15 * * * *"
