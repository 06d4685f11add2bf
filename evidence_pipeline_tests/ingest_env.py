"""The generated SOP corpus ingested once, undisturbed, as the CLI ingests it: the reference
store that the concurrency and crash tests compare their stores with (once per test run,
whichever worker asks first: ``run_shared.made_once``).

Import the fixture in conftest (``from evidence_pipeline_tests.ingest_env import sop_reference``).
"""

import json
from pathlib import Path

import pytest

from evidence_pipeline.benchmark.concurrency import run_ingest
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline.store.fingerprint import store_fingerprint
from evidence_pipeline_tests.run_shared import made_once


@pytest.fixture(scope="session")
def sop_reference(sample_corpus: Path, tmp_path_factory) -> dict:
    with made_once(tmp_path_factory, "sop-reference") as (root, made):
        record, store = root / "reference.json", StoreSettings(path=str(root / "store"))
        if not made:
            paths = sorted(sample_corpus.glob("*.pdf"))
            run = run_ingest(Path(store.path), paths, timeout_s=600)
            assert run.failures == [] and run.documents == len(paths), run.failures
            with open_store(store) as s:
                fingerprint = store_fingerprint(s)
                by_doc = {doc_id: s.count(doc_id) for doc_id in s.document_hashes()}
            record.write_text(json.dumps({"paths": [str(p) for p in paths], "fingerprint": fingerprint, "points_by_doc": by_doc}))
        made_by = json.loads(record.read_text())
    return {
        "paths": [Path(p) for p in made_by["paths"]],
        "store": store,
        "fingerprint": made_by["fingerprint"],
        "points_by_doc": made_by["points_by_doc"],
    }
