"""Asset checks: what must hold for every ingested document.

The checks run in the same run as the assets they check (they are part of the ingest
job) and evaluate exactly the documents that run materialized: one after a sensor or
CLI run, a batch after a backfill run. Launched on their own (UI: "Execute checks"),
they evaluate every document that has been indexed. Metadata names failing documents.

Each rule is a plain function over records or store statistics, tested without
Dagster; the checks gather the inputs and report.
"""


from collections.abc import Iterable, Mapping
from typing import Any

import dagster as dg

from evidence_pipeline.orchestration.assets import STORE_POOL, documents, evidence_units, qdrant_points, split_units
from evidence_pipeline.orchestration.history import latest_metadata
from evidence_pipeline.orchestration.resources import StoreResource
from evidence_pipeline.records import EvidenceUnit
from evidence_pipeline.store.base import VectorStats

# -- rules -------------------------------------------------------------------------


def pieces_missing_header(units: Iterable[EvidenceUnit]) -> list[str]:
    """Unit ids of split table pieces that lost the header rows their table has."""
    by_parent: dict[str, list[EvidenceUnit]] = {}
    for unit in units:
        if unit.kind == "table" and unit.n_pieces > 1:
            by_parent.setdefault(unit.parent_id, []).append(unit)
    missing = []
    for pieces in by_parent.values():
        header = next((p.header for p in pieces if p.header), None)
        if header:
            missing += [p.unit_id for p in pieces if p.header != header]
    return missing


def empty_document_problems(units: int, warnings: Iterable[str]) -> list[str]:
    """A document that gave no evidence unit is not a success: nothing of it can be found.
    The reason is the parser's own word when it gave one (a scan: "no text layer: needs OCR")."""
    if units:
        return []
    warnings = list(warnings)
    reasons = [w for w in warnings if "needs OCR" in w] or [w for w in warnings if "text layer" in w] or warnings
    return [f"0 evidence units: {'; '.join(reasons) if reasons else 'the parser found no text or table'}"]


def parsed_warnings(metadata: Mapping[str, Any]) -> list[str]:
    """The warnings a ``parsed_docs`` materialization recorded (its markdown list)."""
    text = str(metadata.get("warnings", "") or "")
    lines = [line[2:].strip() for line in text.splitlines() if line.startswith("- ")]
    return [line for line in lines if line]


def parent_problems(stats: VectorStats) -> list[str]:
    problems = []
    if stats.parent_id < stats.points:
        problems.append(f"{stats.points - stats.parent_id} points without parent_id")
    if stats.parent_text < stats.points:
        problems.append(f"{stats.points - stats.parent_text} points without parent_text")
    return problems


def vector_problems(stats: VectorStats) -> list[str]:
    problems = []
    if stats.dense < stats.points:
        problems.append(f"{stats.points - stats.dense} points without a dense vector")
    if stats.sparse < stats.points:
        problems.append(f"{stats.points - stats.sparse} points without a BM25 vector")
    return problems


def count_problems(points: int, children: int | None) -> list[str]:
    if children is None:
        return ["no child_embeddings materialization"]
    return [] if points == children else [f"{points} points in the store, {children} children materialized"]


# -- gathering ---------------------------------------------------------------------


def _keys(context: dg.AssetCheckExecutionContext) -> list[str] | None:
    """The partitions of this run, or None when the check runs outside a partitioned run."""
    op = context.op_execution_context
    if op.has_partition_key or op.has_partition_key_range:
        return list(op.partition_keys)
    return None


def _indexed(context: dg.AssetCheckExecutionContext) -> dict[str, dict[str, Any]]:
    """partition key -> latest qdrant_points metadata, for the run's partitions or all."""
    keys = _keys(context)
    if keys is None:
        keys = list(context.instance.get_dynamic_partitions(documents.name))
    return latest_metadata(context.instance, "qdrant_points", keys)


def _result(problems: Mapping[str, list[str]], checked: int, what: str) -> dg.AssetCheckResult:
    failing = {k: p for k, p in problems.items() if p}
    text = "\n".join(f"- `{k}`: {'; '.join(p)}" for k, p in sorted(failing.items())[:50])
    return dg.AssetCheckResult(
        passed=not failing,
        metadata={
            "documents_checked": checked,
            "documents_failing": len(failing),
            "failures": dg.MetadataValue.md(text or f"every document: {what}"),
        },
    )


# -- checks ------------------------------------------------------------------------


_STORE_RULES: dict[str, tuple[str, str]] = {
    "points_have_parents": (
        "Every point in the store has a parent_id and a non-empty parent_text (a hit must expand to its evidence).",
        "all points have parent_id and parent_text",
    ),
    "points_have_both_vectors": (
        "Every point has both vectors: dense and a non-empty BM25 sparse vector.",
        "all points have dense and BM25 vectors",
    ),
    "point_count_matches_children": (
        "The store holds exactly one point per materialized child of the document (no stale or missing points).",
        "point count equals children",
    ),
}


@dg.multi_asset_check(
    specs=[dg.AssetCheckSpec(name, asset=qdrant_points, description=text) for name, (text, _) in _STORE_RULES.items()],
    can_subset=True,
    pool=STORE_POOL,
    description="The store-side checks of qdrant_points: one store session and one scroll per document for all three.",
)
def store_checks(context: dg.AssetCheckExecutionContext, store: StoreResource):
    selected = {key.name for key in context.selected_asset_check_keys}
    indexed = _indexed(context)
    children = latest_metadata(context.instance, "child_embeddings", indexed)
    problems: dict[str, dict[str, list[str]]] = {name: {} for name in _STORE_RULES}
    with store.open() as s:
        for key, meta in indexed.items():
            stats = s.vector_stats(meta["doc_id"])
            n = children.get(key, {}).get("children")
            problems["points_have_parents"][key] = parent_problems(stats)
            problems["points_have_both_vectors"][key] = vector_problems(stats)
            problems["point_count_matches_children"][key] = count_problems(stats.points, None if n is None else int(n))
    for name, (_, what) in _STORE_RULES.items():
        if name in selected:
            result = _result(problems[name], len(indexed), what)
            yield dg.AssetCheckResult(
                asset_key=qdrant_points.key, check_name=name, passed=result.passed, metadata=result.metadata
            )


@dg.asset_check(
    asset=split_units,
    description="No piece of a split table lacks the header rows of its table.",
)
def split_pieces_keep_header(context: dg.AssetCheckExecutionContext, split_units) -> dg.AssetCheckResult:
    keys = _keys(context)
    if keys is None:  # run on its own: every document that has split units
        keys = list(latest_metadata(context.instance, "split_units", context.instance.get_dynamic_partitions(documents.name)))
    # The input is the bare list for a one-partition run, else a lazy {key: list} mapping
    # (for an unpartitioned check, of every partition: only the run's are read).
    problems: dict[str, list[str]] = {}
    for key in keys:
        units = split_units[key] if isinstance(split_units, Mapping) else split_units
        missing = pieces_missing_header(units)
        problems[key] = [f"pieces without header: {', '.join(missing)}"] if missing else []
    return _result(problems, len(problems), "split pieces keep their header")


@dg.asset_check(
    asset=evidence_units,
    description="Every ingested document gave at least one evidence unit (a scan without a text layer fails, with its reason).",
)
def document_has_units(context: dg.AssetCheckExecutionContext, evidence_units) -> dg.AssetCheckResult:
    keys = _keys(context)
    if keys is None:
        keys = list(latest_metadata(context.instance, "evidence_units", context.instance.get_dynamic_partitions(documents.name)))
    parsed = latest_metadata(context.instance, "parsed_docs", keys)
    problems: dict[str, list[str]] = {}
    for key in keys:
        units = evidence_units[key] if isinstance(evidence_units, Mapping) else evidence_units
        content = [u for u in units if u.kind != "card"]  # the card alone means nothing was read
        problems[key] = empty_document_problems(len(content), parsed_warnings(parsed.get(key, {})))
    return _result(problems, len(problems), "at least one evidence unit")


CHECKS = [store_checks, split_pieces_keep_header, document_has_units]
