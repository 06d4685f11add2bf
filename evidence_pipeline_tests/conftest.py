import fcntl
import os
from pathlib import Path

import pytest

# One cache of exported ONNX models for every test and the processes they start (tests that
# point EVIDENCE_DATA_DIR elsewhere would otherwise export the embedding model again each).
# `prepared_model` below fills it before the first test, so no test sees a first run's export.
os.environ.setdefault("EVIDENCE_MODEL_CACHE", str(Path(__file__).resolve().parents[1] / "data" / "cache" / "models"))

# One batched Dagster ingest shared by the orchestration and check tests (session scope).
from evidence_pipeline_tests.dagster_env import batched_env  # noqa: F401

# The generated SOP corpus ingested undisturbed: what the concurrency and crash tests compare with.
from evidence_pipeline_tests.ingest_env import sop_reference  # noqa: F401

# The ONNX variants exported once, and one SOP's children: the embedding tests' inputs.
from evidence_pipeline_tests.onnx_models import onnx_cache, sample_texts  # noqa: F401

# Two sample documents indexed once, for the query surfaces (CLI, retrievers, MCP).
from evidence_pipeline_tests.sample_store import sample_store  # noqa: F401

# The shared corpora beside the clone (../shared). EVIDENCE_TEST_SHARED names another folder;
# a missing one runs the suite as a clone without them (`make test-noshared`): their tests skip.
SHARED = Path(os.environ.get("EVIDENCE_TEST_SHARED") or Path(__file__).resolve().parents[2] / "shared")
CORPORA = SHARED / "corpora"


def pytest_configure(config):
    # `make test-fast`: parses of the shared corpora answered from a memo kept by code fingerprint
    if os.environ.get("EVIDENCE_TEST_PARSE_MEMO"):
        from evidence_pipeline_tests.parse_memo import install

        install(Path(os.environ["EVIDENCE_TEST_PARSE_MEMO"]), CORPORA)


@pytest.fixture(scope="session", autouse=True)
def prepared_model() -> Path:
    """The default embedding model, prepared in ``EVIDENCE_MODEL_CACHE`` before any test runs.

    Every test then finds the model as an installed machine has it (``make install`` prepares it
    too), whichever test runs first; the first-run path itself is tested with an empty cache of
    its own. Workers of one run take turns on a lock file, so the model is prepared once.
    """
    from evidence_pipeline.embedding import Embedder

    cache = Path(os.environ["EVIDENCE_MODEL_CACHE"])
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".prepare.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            Embedder().load()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return cache


@pytest.fixture(scope="session")
def sample_corpus(tmp_path_factory) -> Path:
    """The generated SOP corpus, written once per test session."""
    from evidence_pipeline.tools.samples.corpus import generate_corpus

    out = tmp_path_factory.mktemp("samples") / "corpus"
    generate_corpus(out)
    return out


@pytest.fixture(scope="session")
def corpora() -> Path:
    if not CORPORA.is_dir():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    return CORPORA


@pytest.fixture(scope="session")
def parse_cached():
    """Parse a file once per test session, whichever test module asks first."""
    from evidence_pipeline.parser import DoclingParser

    parser = DoclingParser()
    cache: dict[Path, object] = {}

    def parse(path: Path):
        path = Path(path)
        if path not in cache:
            cache[path] = parser.parse(path)
        return cache[path]

    return parse


# Files whose tests start processes, ingest whole corpora, drive a browser or run a bench: marked
# `slow`, so `make test-fast` (-m 'not slow') stays an edit-test loop. `make test` runs them all.
SLOW_FILES = {
    "test_assets.py",
    "test_bench.py",
    "test_bench_ingest.py",
    "test_celery_backfill.py",
    "test_contract.py",
    "test_crash_safety.py",
    "test_embedding_onnx.py",
    "test_embedding_quant.py",
    "test_evaluation_cache.py",
    "test_evaluation_eval.py",
    "test_evaluation_runner.py",
    "test_orchestration.py",
    "test_orchestration_batch.py",
    "test_parser_ocr.py",
    "test_parser_quality_robustness.py",
    "test_parser_read_ahead.py",
    "test_parser_worker.py",
    "test_postgres_instance.py",
    "test_schedules.py",
    "test_search_page.py",
    "test_store_concurrency.py",
    "test_store_index.py",
    "test_store_reader.py",
    "test_ui.py",
    "test_work_counters.py",
}


# Single tests elsewhere that OCR a whole scanned page, parse many files or under load, or ingest
# through Dagster from the command line.
SLOW_TESTS = {
    "test_a_scanned_pdf_is_read_by_ocr_and_passes_the_check",
    "test_with_ocr_off_a_scanned_pdf_is_a_warning_and_a_failing_check",
    "test_scanned_page_without_text",
    "test_the_command_prints_each_file_and_the_mean",
    "test_mutated_pdfs_give_a_document_or_an_error_naming_the_file",
    "test_parse_is_the_same_under_load_other_threads_and_another_order",
    "test_ingest_with_one_bad_file_exits_1_with_one_line_and_no_trace",
    "test_api_key_stays_out_of_cli_output_and_the_dagster_event_log",
}

# Fixtures that ingest a corpus through Dagster: every test that asks for one is slow.
SLOW_FIXTURES = {"batched_env"}


def pytest_collection_modifyitems(items):
    from evidence_pipeline_tests.parse_memo import AFRESH_FILES

    for item in items:
        if item.get_closest_marker("parses_afresh"):
            AFRESH_FILES.add(item.nodeid.split("::", 1)[0])
        slow_fixture = SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        if item.path.name in SLOW_FILES or item.originalname in SLOW_TESTS or slow_fixture:
            item.add_marker(pytest.mark.slow)
