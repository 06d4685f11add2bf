"""The search page in headless Chromium, against `evidence-pipeline serve` in its own process.

The page runs the question given in its URL (``/?q=...``) as the query box's Enter does
(the form's submit handler and the initial load call the same ``run``). Chromium's
``--dump-dom`` returns the page after the search rendered; the first result must be the
table ``evidence_pipeline.search`` ranks first, rendered as a table with the matched row
marked. Set EVIDENCE_UI_SCREENSHOTS=<dir> to keep the screenshot (docs/search-page.png).
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlencode

import pytest

from evidence_pipeline_tests.corpus_store import corpus_store, sop_questions  # noqa: F401  (fixture)

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install -y chromium); .ci/run installs it")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(corpus_store, tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    port = _free_port()
    env = {**os.environ, "EVIDENCE_STORE_PATH": corpus_store.path, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    for var in ("QDRANT_URL", "EVIDENCE_API_KEY"):
        env.pop(var, None)
    script = BIN / "evidence-pipeline"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "evidence_pipeline.cli"]
    log = open(root / "serve.log", "w")
    proc = subprocess.Popen(
        [*cmd, "serve", "--port", str(port)], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=10) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"serve did not come up:\n{(root / 'serve.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield {"url": url, "root": root}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()


class _Results(HTMLParser):
    """The result articles of the dumped page: parent id, caption, whether a table and a marked row are inside."""

    def __init__(self):
        super().__init__()
        self.results: list[dict] = []
        self._depth = 0
        self._in_caption = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "article" and "result" in (a.get("class") or ""):
            self.results.append({"parent_id": a.get("data-parent-id"), "caption": "", "tables": 0, "hit_rows": [], "text": ""})
            self._depth = 1
            return
        if not self._depth:
            return
        if tag == "article":
            self._depth += 1
        r = self.results[-1]
        if tag == "table":
            r["tables"] += 1
        if tag == "tr" and "hit" in (a.get("class") or ""):
            r["hit_rows"].append("")
        self._in_caption = tag == "div" and a.get("class") == "caption"

    def handle_endtag(self, tag):
        if self._depth and tag == "article":
            self._depth -= 1
        if tag in ("div", "tr"):
            self._in_caption = False

    def handle_data(self, data):
        if self._depth:
            r = self.results[-1]
            r["text"] += data
            if self._in_caption:
                r["caption"] += data


def _chromium(url: str, profile: Path, screenshot: Path) -> str:
    args = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
        f"--user-data-dir={profile}", "--window-size=1280,900", "--virtual-time-budget=20000",
    ]  # fmt: skip
    subprocess.run([*args, f"--screenshot={screenshot}", url], check=True, capture_output=True, timeout=120)
    return subprocess.run([*args, "--dump-dom", url], check=True, capture_output=True, timeout=120, text=True).stdout


def test_page_shows_the_expected_table_first(server, corpus_store):
    from evidence_pipeline.retrieval import search

    # The first sample question whose best parent is a table matched by one of its rows.
    for question in sop_questions():
        expected = search(question["question"], k=5, store_settings=corpus_store)[0]
        if expected.unit_kind == "table" and " | " in expected.matched_text:
            break
    assert expected.doc_id == question["doc_id"]

    shot = server["root"] / "search-page.png"
    dom = _chromium(f"{server['url']}/?{urlencode({'q': question['question']})}", server["root"] / "profile", shot)
    assert 'data-state="done"' in dom, dom[-2000:]
    page = _Results()
    page.feed(dom)
    first = page.results[0]
    assert len(page.results) == 5
    assert first["parent_id"] == expected.parent_id
    assert first["caption"] == expected.caption
    assert first["tables"] == 1 and len(first["hit_rows"]) == 1
    assert all(answer in first["text"] for answer in question["answers"])
    # The matched row is the one the best child names (its row header opens the row sentence).
    row_head = expected.matched_text.split(" | ")[0]
    marked = re.search(r'<tr class="hit">(.*?)</tr>', dom, re.S).group(1)
    assert row_head in marked
    assert shot.stat().st_size > 20_000
    keep = os.environ.get("EVIDENCE_UI_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
