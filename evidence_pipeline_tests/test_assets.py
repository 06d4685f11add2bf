"""The document assets called directly with ``build_asset_context``, one document at a time."""

import dagster as dg
import pytest

from evidence_pipeline import pipeline
from evidence_pipeline.embedding import token_counter
from evidence_pipeline.orchestration.assets import (
    ChildEmbeddings,
    bm25_index,
    child_embeddings,
    evidence_units,
    split_units,
)
from evidence_pipeline.orchestration.resources import EmbedderResource, PipelineOptionsResource

KEY = "calibration"
ROWS = "\n".join(
    f"| Probe {i:03d} | {20 + i % 7}.{i % 10} | {30 + i % 5}.{i % 3} | Calibrated by team {i % 4} on line {i % 9} |" for i in range(40)
)
MD = (
    "# Calibration log\n\n## 1 Scope\n\n"
    + "\n\n".join(f"Paragraph {i} of the scope says which probes of line {i % 9} are calibrated and by whom." for i in range(12))
    + "\n\n## 2 Results\n\nThe table lists every probe.\n\n"
    f"Table 1: Probe calibration\n\n| Probe | Low (C) | High (C) | Notes |\n|---|---|---|---|\n{ROWS}\n\nAll probes passed.\n"
)


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    from evidence_pipeline.parser import DoclingParser

    path = tmp_path_factory.mktemp("assets") / f"{KEY}.md"
    path.write_text(MD)
    return DoclingParser().parse(path)


BUDGET = 400


@pytest.fixture(scope="module")
def context():
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("documents", [KEY])
        yield lambda: dg.build_asset_context(partition_key=KEY, instance=instance)


@pytest.fixture(scope="module")
def staged(doc, context):
    # A parent budget the 40-row table exceeds, so that split_units has pieces to make.
    embedder, options = EmbedderResource(), PipelineOptionsResource(max_parent_tokens=BUDGET)
    units = evidence_units(context(), parsed_docs=doc, embedder=embedder, pipeline_options=options)
    pieces = split_units(context(), evidence_units=units, embedder=embedder, pipeline_options=options)
    embed_context, bm25_context = context(), context()
    embedded = child_embeddings(embed_context, split_units=pieces, embedder=embedder)
    sparse = bm25_index(bm25_context, child_embeddings=embedded)
    # What each materialization records for the document (shown in the UI, read by the checks).
    metadata = {"child_embeddings": embed_context.get_output_metadata("result"), "bm25_index": bm25_context.get_output_metadata("result")}
    return units, pieces, embedded, sparse, metadata


def test_units_and_split_follow_the_core(doc, staged):
    units, pieces, _, _, _ = staged
    counter, options = token_counter(None), pipeline.PipelineOptions(max_parent_tokens=BUDGET)
    assert units == pipeline.evidence_units(doc, options, counter)
    assert pieces == pipeline.document_units(doc, options, counter)
    table = [u for u in units if u.kind == "table"]
    assert len(table) == 1 and table[0].caption == "Table 1: Probe calibration" and len(table[0].rows) == 40
    # 40 rows exceed the parent budget: the table is split, each piece keeps the header.
    split = [u for u in pieces if u.kind == "table"]
    assert len(split) > 1 and all(p.header == table[0].header for p in split)
    assert sum(len(p.rows) for p in split) == 40


def test_bm25_encodes_the_children_child_embeddings_embedded(staged):
    _, pieces, embedded, sparse, metadata = staged
    assert isinstance(embedded, ChildEmbeddings)
    assert embedded.children == pipeline.children_of(pieces, token_counter(None))
    assert len(embedded.vectors) == len(embedded.children) == len(sparse)
    assert sparse == pipeline.sparse_vectors(embedded.children)
    assert metadata["child_embeddings"]["children"] == metadata["bm25_index"]["children"] == len(sparse)
    assert metadata["child_embeddings"]["dim"] == embedded.vectors.shape[1]


def test_unit_options_come_from_the_resource(doc, context):
    embedder = EmbedderResource()
    default = evidence_units(context(), parsed_docs=doc, embedder=embedder, pipeline_options=PipelineOptionsResource())
    small = evidence_units(
        context(), parsed_docs=doc, embedder=embedder, pipeline_options=PipelineOptionsResource(units={"section_chunk_tokens": 60})
    )
    sections = lambda units: [u for u in units if u.kind == "section"]  # noqa: E731
    assert len(sections(small)) > len(sections(default))
    assert PipelineOptionsResource(units={"section_chunk_tokens": 60}).options() == pipeline.PipelineOptions(
        units=pipeline.UnitOptions(section_chunk_tokens=60)
    )
