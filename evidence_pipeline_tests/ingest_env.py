"""The generated SOP corpus ingested once, undisturbed, as the CLI ingests it: the reference
store that the concurrency and crash tests compare their stores with.

Import the fixture in conftest (``from evidence_pipeline_tests.ingest_env import sop_reference``).
"""

from pathlib import Path

import pytest

from evidence_pipeline.benchmark.concurrency import run_ingest
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline.store.fingerprint import store_fingerprint


@pytest.fixture(scope="session")
def sop_reference(sample_corpus: Path, tmp_path_factory) -> dict:
    paths = sorted(sample_corpus.glob("*.pdf"))
    store = StoreSettings(path=str(tmp_path_factory.mktemp("reference") / "store"))
    run = run_ingest(Path(store.path), paths, timeout_s=600)
    assert run.failures == [] and run.documents == len(paths), run.failures
    with open_store(store) as s:
        fingerprint = store_fingerprint(s)
        by_doc = {doc_id: s.count(doc_id) for doc_id in s.document_hashes()}
    return {"paths": paths, "store": store, "fingerprint": fingerprint, "points_by_doc": by_doc}
