"""End to end through the real Dagster services: webserver + daemon, a GraphQL backfill, UI screenshots.

Starts ``dagster-webserver`` and ``dagster-daemon`` on 127.0.0.1 with a fresh
DAGSTER_HOME, registers three sample documents as partitions and launches a backfill
over them with GraphQL (as the UI's "Materialize" button does), waits for it, then
renders the asset graph and the partitions page in headless Chromium.

Set EVIDENCE_UI_SCREENSHOTS=<dir> to keep the screenshots (docs/asset-graph.png comes from here).
"""

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
MODULE = "evidence_pipeline.orchestration.definitions"
DOCS = ["SOP-8812", "SOP-QA-070", "SOP-QC-415"]
ASSETS = ["raw_pdfs", "parsed_docs", "evidence_units", "split_units", "child_embeddings", "bm25_index", "qdrant_points"]
BACKFILL_TIMEOUT_S = 300

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install -y chromium); .ci/run installs it")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, n: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:]) if path.exists() else ""


class Services:
    def __init__(self, root: Path, env: dict[str, str], port: int):
        self.root, self.env, self.port = root, env, port
        self.url = f"http://127.0.0.1:{port}"
        self.procs: list[subprocess.Popen] = []

    def start(self, name: str, *args: str) -> None:
        log = open(self.root / f"{name}.log", "w")
        # Own session = own process group: the finalizer stops the service and its code servers.
        self.procs.append(
            subprocess.Popen([str(BIN / name), *args], cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        )

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for proc in self.procs:
            try:
                proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{_tail(p)}" for p in sorted(self.root.glob("*.log")))

    def graphql(self, query: str, variables: dict | None = None) -> dict:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(f"{self.url}/graphql", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            data = json.load(response)
        assert "errors" not in data, data["errors"]
        return data["data"]


WORKSPACE = "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus locationOrLoadError { __typename ... on PythonError { message } } } } } }"


def _wait_for_location(services: Services, timeout_s: float = 180) -> str:
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        try:
            entries = services.graphql(WORKSPACE)["workspaceOrError"]["locationEntries"]
            last = entries
            if entries and entries[0]["loadStatus"] == "LOADED":
                assert entries[0]["locationOrLoadError"]["__typename"] == "RepositoryLocation", entries
                return entries[0]["name"]
        except OSError:
            pass  # not listening yet
        time.sleep(1)
    pytest.fail(f"code location not loaded after {timeout_s} s: {last}\n{services.logs()}")


@pytest.fixture(scope="module")
def ui(sample_corpus: Path, tmp_path_factory):
    root = tmp_path_factory.mktemp("ui")
    home, corpus = root / "dagster_home", root / "corpus"
    home.mkdir()
    corpus.mkdir()
    for doc in DOCS:
        shutil.copy(sample_corpus / f"{doc}.pdf", corpus)
    (home / "dagster.yaml").write_text(
        "telemetry:\n  enabled: false\nnux:\n  enabled: false\nconcurrency:\n  pools:\n    default_limit: 1\n    granularity: op\n"
    )
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "EVIDENCE_CORPUS_DIR": str(corpus),
        "EVIDENCE_STORE_PATH": str(root / "store"),
        "EVIDENCE_BACKFILL_BATCH": str(len(DOCS)),  # the whole backfill in one run: one model load
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("QDRANT_URL", None)
    # Create the sqlite storage once, before the webserver and the daemon race to migrate it.
    dg.DagsterInstance.from_config(str(home)).dispose()
    services = Services(root, env, _free_port())
    try:
        services.start("dagster-webserver", "-h", "127.0.0.1", "-p", str(services.port), "-m", MODULE)
        location = _wait_for_location(services)
        yield {"services": services, "location": location, "home": home, "root": root}
    finally:
        services.stop()


ADD_PARTITION = """
mutation($repo: RepositorySelector!, $key: String!) {
  addDynamicPartition(repositorySelector: $repo, partitionsDefName: "documents", partitionKey: $key) {
    __typename ... on PythonError { message }
  }
}"""

LAUNCH_BACKFILL = """
mutation($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message }
  }
}"""

BACKFILL_STATUS = "query($id: String!) { partitionBackfillOrError(backfillId: $id) { ... on PartitionBackfill { status } } }"


@pytest.fixture(scope="module")
def backfill(ui):
    services: Services = ui["services"]
    repo = {"repositoryLocationName": ui["location"], "repositoryName": "__repository__"}
    for key in DOCS:
        added = services.graphql(ADD_PARTITION, {"repo": repo, "key": key})["addDynamicPartition"]
        assert added["__typename"] == "AddDynamicPartitionSuccess", added
    params = {"partitionNames": DOCS, "assetSelection": [{"path": [a]} for a in ASSETS], "title": "test_ui backfill"}
    launched = services.graphql(LAUNCH_BACKFILL, {"params": params})["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    started = time.monotonic()
    # Started after the backfill exists, the daemon's first backfill iteration picks it up
    # at once instead of up to 30 s later.
    services.start("dagster-daemon", "run", "-m", MODULE)
    status = None
    while time.monotonic() - started < BACKFILL_TIMEOUT_S:
        status = services.graphql(BACKFILL_STATUS, {"id": launched["backfillId"]})["partitionBackfillOrError"]["status"]
        if status not in ("REQUESTED", "CANCELING", "FAILING"):
            break
        time.sleep(3)
    assert status in ("COMPLETED", "COMPLETED_SUCCESS"), f"backfill {status} after {time.monotonic() - started:.0f} s\n{services.logs()}"
    return {"id": launched["backfillId"], "seconds": time.monotonic() - started}


def _chromium(ui, url: str, out: Path) -> str:
    """Screenshot ``url`` into ``out`` and return the rendered DOM."""
    args = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
        f"--user-data-dir={ui['root'] / 'chromium-profile'}", "--window-size=1400,900",
        # The UI is a JavaScript app: let it fetch and lay out before the capture.
        "--virtual-time-budget=15000",
    ]  # fmt: skip
    dom = subprocess.run([*args, f"--screenshot={out}", "--dump-dom", url], check=True, capture_output=True, timeout=120, text=True).stdout
    keep = os.environ.get("EVIDENCE_UI_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(out, Path(keep) / out.name)
    return dom


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_backfill_ingests_every_document_in_one_batched_run(ui, backfill):
    instance = dg.DagsterInstance.from_config(str(ui["home"]))
    try:
        runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": backfill["id"]}))
        assert len(runs) == 1 and runs[0].status == dg.DagsterRunStatus.SUCCESS
        for key in DOCS:
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey("qdrant_points"), asset_partitions=[key]), limit=1
            ).records
            assert records and records[0].asset_materialization.metadata["points"].value > 10, key
        check = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [dg.AssetCheckKey(dg.AssetKey("qdrant_points"), "point_count_matches_children")]
        )
        assert list(check.values())[0].status.value == "SUCCEEDED"
    finally:
        instance.dispose()


def test_asset_graph_page_shows_the_assets(ui, backfill):
    out = ui["root"] / "asset-graph.png"
    dom = _chromium(ui, f"{ui['services'].url}/asset-groups", out)
    for name in ASSETS:
        assert name in dom, name
    width, height = _png_size(out)
    assert (width, height) == (1400, 900) and out.stat().st_size > 30_000


def test_partitions_page_shows_the_documents(ui, backfill):
    out = ui["root"] / "partitions.png"
    dom = _chromium(ui, f"{ui['services'].url}/assets/qdrant_points?view=partitions&partition={DOCS[0]}", out)
    assert "qdrant_points" in dom
    assert all(doc in dom for doc in DOCS), [doc for doc in DOCS if doc not in dom]
    # The selected document's materialization metadata is on the page.
    assert "pipeline_version" in dom and "content_hash" in dom
    assert out.stat().st_size > 20_000
