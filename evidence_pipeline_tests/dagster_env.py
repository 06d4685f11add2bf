"""A small corpus ingested through Dagster in ONE batched run, shared by the orchestration tests.

Markdown documents parse in well under a second each (Docling's simple pipeline), so
the run costs mostly the one model load. Import the fixture into a test module:
``from evidence_pipeline_tests.dagster_env import batched_env``.
"""

from pathlib import Path

import dagster as dg
import pytest

from evidence_pipeline.orchestration.definitions import build_definitions
from evidence_pipeline.orchestration.partition_ranges import range_tags
from evidence_pipeline.orchestration.resources import CorpusResource, PipelineOptionsResource, StoreResource
from evidence_pipeline.settings import StoreSettings

KEYS = ["calibration", "limits", "empty-notes"]


def write_corpus(corpus: Path) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    rows = "\n".join(
        f"| Probe {i:03d} | {20 + i % 7}.{i % 10} | {30 + i % 5}.{i % 3} | Calibrated by team {i % 4} on line {i % 9} |" for i in range(40)
    )
    (corpus / "calibration.md").write_text(
        "# Calibration log\n\n## 2 Results\n\nThe table lists every probe.\n\n"
        f"| Probe | Low (C) | High (C) | Notes |\n|---|---|---|---|\n{rows}\n\nAll probes passed.\n"
    )
    (corpus / "limits.md").write_text(
        "# Storage limits\n\n## 1 Scope\n\nApplies to the cold room. Check daily.\n\n"
        "| Item | Min | Max |\n|---|---|---|\n| Temperature (C) | 2 | 8 |\n| Humidity (%) | 30 | 60 |\n\n"
        "Record every excursion in the log.\n"
    )
    (corpus / "empty-notes.md").write_text("# Notes\n\nNothing to report this week. The next review is in May.\n")


@pytest.fixture(scope="session")
def batched_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("batched")
    corpus = root / "corpus"
    write_corpus(corpus)
    store = StoreSettings(path=str(root / "store"))
    # A parent budget the 40-row calibration table exceeds, so the batch has a split table.
    defs = build_definitions(
        {
            "store": StoreResource(path=store.path),
            "corpus": CorpusResource(root=str(corpus)),
            "pipeline_options": PipelineOptionsResource(max_parent_tokens=400),
        }
    )
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("documents", KEYS)
        result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=instance,
            tags=range_tags(KEYS[0], KEYS[-1]),
        )
        yield {"root": root, "corpus": corpus, "store": store, "defs": defs, "instance": instance, "result": result}
