"""Asset checks: the rules on hand-made records, and every check passing and failing on a real ingest."""

import pickle
from pathlib import Path

import dagster as dg
import pytest

from evidence_pipeline import pipeline
from evidence_pipeline.embedding import token_counter
from evidence_pipeline.orchestration.checks import (
    count_problems,
    empty_document_problems,
    parent_problems,
    pieces_missing_header,
    vector_problems,
)
from evidence_pipeline.orchestration.definitions import build_definitions
from evidence_pipeline.orchestration.partition_ranges import range_tags
from evidence_pipeline.orchestration.resources import StoreResource
from evidence_pipeline.orchestration.runner import ingest_paths
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import Point, SparseVector, VectorStats, point_id
from evidence_pipeline_tests.conftest import CORPORA
from evidence_pipeline_tests.dagster_env import KEYS
from evidence_pipeline_tests.docs import lnp_doc

CHECK_NAMES = {
    "points_have_parents",
    "points_have_both_vectors",
    "point_count_matches_children",
    "split_pieces_keep_header",
    "document_has_units",
}
SCAN = CORPORA / "clinical-protocols" / "pdfs" / "NCT06155240_Prot_SAP_000.pdf"


def split_lnp(extra_rows=30, budget=120):
    counter = token_counter(None)
    options = pipeline.PipelineOptions(max_parent_tokens=budget)
    return pipeline.split_evidence_units(pipeline.evidence_units(lnp_doc(extra_rows), options, counter), options, counter)


def test_split_pieces_keep_their_header_rule():
    units = split_lnp()
    pieces = [u for u in units if u.kind == "table"]
    assert len(pieces) > 1 and all(p.header for p in pieces)
    assert pieces_missing_header(units) == []
    broken = [u.model_copy(update={"header": []}) if u.piece == 1 and u.kind == "table" else u for u in units]
    assert pieces_missing_header(broken) == [pieces[1].unit_id]


def test_store_rules():
    ok = VectorStats(points=4, dense=4, sparse=4, parent_id=4, parent_text=4)
    assert parent_problems(ok) == [] and vector_problems(ok) == []
    bad = VectorStats(points=4, dense=3, sparse=2, parent_id=4, parent_text=1)
    assert parent_problems(bad) == ["3 points without parent_text"]
    assert vector_problems(bad) == ["1 points without a dense vector", "2 points without a BM25 vector"]
    assert count_problems(5, 5) == []
    assert count_problems(6, 5) == ["6 points in the store, 5 children materialized"]
    assert count_problems(0, None) == ["no child_embeddings materialization"]


def evaluations(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, dict]]:
    """check name -> partition -> {passed, problems}: each result belongs to one document."""
    out: dict[str, dict[str, dict]] = {}
    for event in result.all_events:
        if event.event_type_value == "ASSET_CHECK_EVALUATION":
            data = event.event_specific_data
            out.setdefault(data.check_name, {})[data.partition] = {
                "passed": data.passed,
                **{k: v.value for k, v in data.metadata.items()},
            }
    return out


def test_every_check_passes_in_the_ingest_run_once_per_document(batched_env):
    found = evaluations(batched_env["result"])
    assert set(found) == CHECK_NAMES
    for name, by_partition in found.items():
        assert sorted(by_partition) == sorted(KEYS), name
        assert all(e["passed"] for e in by_partition.values()), (name, by_partition)
    # The instance keeps the result on the document's partition.
    record = batched_env["instance"].event_log_storage.get_latest_asset_check_execution_by_key(
        [dg.AssetCheckKey(dg.AssetKey("qdrant_points"), "point_count_matches_children")]
    )
    assert record


def test_store_checks_fail_on_a_damaged_document(batched_env):
    # A point with no BM25 vector and no parent text, not produced by any child: all three store checks fail.
    stray = Point(
        id=point_id("limits", "stray", ""),
        dense=[0.1] * 384,
        sparse=SparseVector(indices=[], values=[]),
        payload={"doc_id": "limits", "parent_id": "", "parent_text": ""},
    )
    with open_store(batched_env["store"]) as s:
        s.replace_document("limits", [*s.iter_points("limits"), stray])
    try:
        result = (
            batched_env["defs"]
            .resolve_job_def("check_documents")
            .execute_in_process(instance=batched_env["instance"], tags=range_tags(KEYS[0], KEYS[-1]), raise_on_error=False)
        )
        found = evaluations(result)
    finally:
        with open_store(batched_env["store"]) as s:
            s.replace_document("limits", [p for p in s.iter_points("limits") if p.id != stray.id])
    for name in ("points_have_parents", "points_have_both_vectors", "point_count_matches_children"):
        # Only the damaged document fails; the others pass in the same run.
        assert [k for k, e in found[name].items() if not e["passed"]] == ["limits"], name
        assert "points" in found[name]["limits"]["problems"], name
    assert all(e["passed"] for e in found["split_pieces_keep_header"].values())


def test_header_check_fails_on_a_piece_without_header(batched_env):
    path = Path(batched_env["instance"].storage_directory()) / "split_units" / "calibration"
    original = path.read_bytes()
    units = pickle.loads(original)
    assert sum(u.n_pieces > 1 for u in units) > 1, "the calibration table should be split"
    damaged = [u.model_copy(update={"header": []}) if u.n_pieces > 1 and u.piece == 1 else u for u in units]
    path.write_bytes(pickle.dumps(damaged))
    try:
        result = (
            batched_env["defs"]
            .resolve_job_def("check_documents")
            .execute_in_process(instance=batched_env["instance"], tags=range_tags(KEYS[0], KEYS[-1]), raise_on_error=False)
        )
    finally:
        path.write_bytes(original)
    found = evaluations(result)
    header = found["split_pieces_keep_header"]
    assert not header["calibration"]["passed"] and "pieces without header" in header["calibration"]["problems"]
    assert header["limits"]["passed"]
    assert all(e["passed"] for e in found["points_have_parents"].values())


def test_empty_document_rule():
    assert empty_document_problems(3, []) == []
    assert empty_document_problems(0, ["partial conversion: x", "no text layer: needs OCR (scanned PDF; OCR is off)"]) == [
        "0 evidence units: no text layer: needs OCR (scanned PDF; OCR is off)"
    ]
    assert empty_document_problems(0, []) == ["0 evidence units: the parser found no text or table"]


@pytest.mark.skipif(not SCAN.is_file(), reason="shared corpora not present")
def test_a_scanned_pdf_is_read_by_ocr_and_passes_the_check(tmp_path):
    # A one-page scan with no text layer: OCR reads it, so it gives units and no warning.
    defs = build_definitions({"store": StoreResource(path=str(tmp_path / "store"))})
    with dg.instance_for_test() as instance:
        summary = ingest_paths([SCAN], defs, instance)
        (outcome,) = summary.outcomes
        assert outcome.success and outcome.units > 1
        assert summary.warnings == []
        record = instance.get_latest_asset_check_evaluation_record(dg.AssetCheckKey(dg.AssetKey("evidence_units"), "document_has_units"))
        assert record.evaluation.passed


@pytest.mark.skipif(not SCAN.is_file(), reason="shared corpora not present")
def test_with_ocr_off_a_scanned_pdf_is_a_warning_and_a_failing_check(tmp_path, monkeypatch):
    # OCR switched off: the run succeeds, but the summary warns and the check fails.
    monkeypatch.setenv("EVIDENCE_OCR", "off")
    defs = build_definitions({"store": StoreResource(path=str(tmp_path / "store"))})
    with dg.instance_for_test() as instance:
        summary = ingest_paths([SCAN], defs, instance)
        (outcome,) = summary.outcomes
        assert outcome.success and outcome.units == 1  # its document card alone
        assert summary.warnings == [f"{SCAN}: 0 evidence units: no text layer: needs OCR (scanned PDF; OCR is off)"]
        assert "1 with warnings" in summary.line()
        record = instance.get_latest_asset_check_evaluation_record(dg.AssetCheckKey(dg.AssetKey("evidence_units"), "document_has_units"))
        evaluation = record.evaluation
        assert not evaluation.passed
        assert evaluation.partition == "NCT06155240_Prot_SAP_000"
        assert "needs OCR" in evaluation.metadata["problems"].value
