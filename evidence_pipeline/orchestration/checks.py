"""Asset checks: what must hold for every ingested document.

The checks are partitioned like the assets (Dagster 1.13 partitioned asset checks): a
result belongs to one document, and the UI shows it on that document's partition. They
run in the same run as the assets they check (they are part of the ingest job) and
evaluate exactly the documents that run materialized: one after a sensor or CLI run, a
batch after a backfill run (one evaluation per document). On their own, the
``check_documents`` job runs them over any partition or range (a backfill of it checks
every document).

Each rule is a plain function over records or store statistics, tested without
Dagster; the checks gather the inputs and report.
"""

import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import dagster as dg

from evidence_pipeline.orchestration.assets import STORE_POOL, documents, qdrant_points
from evidence_pipeline.orchestration.assets import evidence_units as evidence_units_asset
from evidence_pipeline.orchestration.assets import split_units as split_units_asset
from evidence_pipeline.orchestration.history import latest_metadata
from evidence_pipeline.orchestration.resources import StoreResource
from evidence_pipeline.records import EvidenceUnit
from evidence_pipeline.store.base import VectorStats

# A partitioned check spec is a preview feature of Dagster 1.13: it is what makes a result
# belong to one document.
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec", category=dg.PreviewWarning)

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


def _keys(context: dg.AssetCheckExecutionContext) -> list[str]:
    """The documents (partitions) of this run: its one key, or its key range."""
    return list(context.op_execution_context.partition_keys)


def _indexed(context: dg.AssetCheckExecutionContext) -> dict[str, dict[str, Any]]:
    """partition key -> latest qdrant_points metadata, for the run's indexed documents."""
    return latest_metadata(context.instance, "qdrant_points", _keys(context))


def _evaluation(asset: dg.AssetsDefinition, check: str, key: str, problems: list[str], what: str) -> dg.AssetCheckEvaluation:
    """The result of one check on one document (its partition)."""
    return dg.AssetCheckEvaluation(
        asset_key=asset.key,
        check_name=check,
        partition=key,
        passed=not problems,
        metadata={"problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in problems) or what)},
    )


def _spec(name: str, asset: dg.AssetsDefinition, description: str) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(name, asset=asset, description=description, partitions_def=documents)


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
    specs=[_spec(name, qdrant_points, text) for name, (text, _) in _STORE_RULES.items()],
    can_subset=True,
    pool=STORE_POOL,
    description="The store-side checks of qdrant_points: one store session and one scroll per document for all three.",
)
def store_checks(context: dg.AssetCheckExecutionContext, store: StoreResource):
    selected = {key.name for key in context.selected_asset_check_keys}
    indexed = _indexed(context)
    children = latest_metadata(context.instance, "child_embeddings", indexed)
    with store.open() as s:
        for key, meta in indexed.items():
            stats = s.vector_stats(meta["doc_id"])
            n = children.get(key, {}).get("children")
            problems = {
                "points_have_parents": parent_problems(stats),
                "points_have_both_vectors": vector_problems(stats),
                "point_count_matches_children": count_problems(stats.points, None if n is None else int(n)),
            }
            for name, (_, what) in _STORE_RULES.items():
                if name in selected:
                    yield _evaluation(qdrant_points, name, key, problems[name], what)


@dg.multi_asset_check(
    specs=[_spec("split_pieces_keep_header", split_units_asset, "No piece of a split table lacks the header rows of its table.")],
    ins={"split_units": dg.AssetIn(split_units_asset.key)},
    can_subset=True,  # results are yielded per document, not as the op's outputs
)
def split_pieces_keep_header(context: dg.AssetCheckExecutionContext, split_units):
    # The input is the bare list for a one-partition run, else a lazy {key: list} mapping.
    for key in _keys(context):
        units = split_units[key] if isinstance(split_units, Mapping) else split_units
        missing = pieces_missing_header(units)
        problems = [f"pieces without header: {', '.join(missing)}"] if missing else []
        yield _evaluation(split_units_asset, "split_pieces_keep_header", key, problems, "split pieces keep their header")


@dg.multi_asset_check(
    specs=[
        _spec(
            "document_has_units",
            evidence_units_asset,
            "Every ingested document gave at least one evidence unit (a scan without a text layer fails, with its reason).",
        )
    ],
    ins={"evidence_units": dg.AssetIn(evidence_units_asset.key)},
    can_subset=True,
)
def document_has_units(context: dg.AssetCheckExecutionContext, evidence_units):
    keys = _keys(context)
    parsed = latest_metadata(context.instance, "parsed_docs", keys)
    for key in keys:
        units = evidence_units[key] if isinstance(evidence_units, Mapping) else evidence_units
        content = [u for u in units if u.kind != "card"]  # the card alone means nothing was read
        problems = empty_document_problems(len(content), parsed_warnings(parsed.get(key, {})))
        yield _evaluation(evidence_units_asset, "document_has_units", key, problems, "at least one evidence unit")


CHECKS = [store_checks, split_pieces_keep_header, document_has_units]
