"""The search page in headless Chromium, against `evidence-pipeline serve` in its own process.

The page runs the question given in its URL (``/?q=...``) as the query box's Enter does
(the form's submit handler and the initial load call the same ``run``). Chromium's
``--dump-dom`` returns the page after the search rendered; the first result must be the
table ``evidence_pipeline.search`` ranks first, rendered as a table with the matched row
marked. ``&show=N`` then opens result N's page view: the page image with the unit's box and
the matched row's box drawn over it, which must cover the answer's characters as pdfium finds
them on the page. Set EVIDENCE_UI_SCREENSHOTS=<dir> to keep the screenshots (docs/search-page.png,
docs/page-view.png).
"""

import contextlib
import json
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
from evidence_pipeline_tests.page_text import PageText, inside

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install -y chromium); .ci/run installs it")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _serving(store_path: str, root: Path):
    """``evidence-pipeline serve`` on the store at ``store_path``, in its own process, until the block ends."""
    port = _free_port()
    env = {**os.environ, "EVIDENCE_STORE_PATH": store_path, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
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


@pytest.fixture(scope="module")
def server(corpus_store, tmp_path_factory):
    with _serving(corpus_store.path, tmp_path_factory.mktemp("serve")) as served:
        yield served


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


def _row_question(corpus_store):
    """The first sample question whose best parent is a table matched by one of its rows, and that hit."""
    from evidence_pipeline.retrieval import search

    for question in sop_questions():
        expected = search(question["question"], k=5, store_settings=corpus_store)[0]
        if expected.unit_kind == "table" and " | " in expected.matched_text:
            return question, expected
    pytest.fail("no sample question is answered by a table row")


def _keep(shot: Path) -> None:
    keep = os.environ.get("EVIDENCE_UI_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)


def test_page_shows_the_expected_table_first(server, corpus_store):
    question, expected = _row_question(corpus_store)
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
    # The documents list: each document's ingest time in a short form, the stored UTC value as its title.
    with urllib.request.urlopen(f"{server['url']}/documents", timeout=30) as r:
        times = {d["ingested_at"] for d in json.load(r)}
    cells = dict(re.findall(r'<td title="([^"]+)">([^<]*)</td>', dom))
    assert times and None not in times and set(cells) == times
    assert all(shown and shown != iso for iso, shown in cells.items())
    assert shot.stat().st_size > 20_000
    _keep(shot)


class _PageView(HTMLParser):
    """The page view dialog of the dumped page: its state, its figures' pages and images, and
    the boxes drawn over them (class, page and the CSS percentages of the frame)."""

    def __init__(self):
        super().__init__()
        self.state: str | None = None
        self.images: list[str] = []
        self.boxes: list[dict] = []
        self._in_dialog = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "dialog" and a.get("id") == "pageview":
            self._in_dialog, self.state = True, a.get("data-state")
        elif self._in_dialog and tag == "img":
            self.images.append(a.get("src") or "")
        elif self._in_dialog and tag == "div" and a.get("class") in ("box", "rowbox"):
            style = dict(re.findall(r"([a-z]+):\s*([\d.]+)%", a.get("style") or ""))
            self.boxes.append({"class": a["class"], "page": int(a["data-page"]), **{k: float(v) for k, v in style.items()}})

    def handle_endtag(self, tag):
        if tag == "dialog":
            self._in_dialog = False


def _drawn_in_points(drawn: dict, page_width: float, page_height: float) -> tuple[float, float, float, float]:
    """(l, t, r, b) in PDF points from the page's top-left corner of a box drawn in percentages."""
    l, t = drawn["left"] * page_width / 100, drawn["top"] * page_height / 100
    return l, t, l + drawn["width"] * page_width / 100, t + drawn["height"] * page_height / 100


def test_page_view_draws_the_matched_row_over_the_answer(server, corpus_store, sample_corpus):
    question, expected = _row_question(corpus_store)
    row_box = expected.row_box
    assert row_box is not None and expected.boxes, "the hit carries no page geometry"
    shot = server["root"] / "page-view.png"
    url = f"{server['url']}/?{urlencode({'q': question['question'], 'show': 1})}"
    view = _PageView()
    view.feed(_chromium(url, server["root"] / "profile-view", shot))
    assert view.state == "loaded" and view.images and all(src.startswith("blob:") for src in view.images)
    assert sorted(b["page"] for b in view.boxes if b["class"] == "box") == sorted(b.page for b in expected.boxes)
    drawn_row = next(b for b in view.boxes if b["class"] == "rowbox")
    drawn_unit = next(b for b in view.boxes if b["class"] == "box" and b["page"] == row_box.page)
    row = _drawn_in_points(drawn_row, row_box.page_width, row_box.page_height)
    unit = _drawn_in_points(drawn_unit, row_box.page_width, row_box.page_height)
    assert inside(row, unit) and row[3] - row[1] < (unit[3] - unit[1]) / 2  # one row of the table, not the table

    with PageText(sample_corpus / f"{expected.doc_id}.pdf", row_box.page) as page:
        assert (page.width, page.height) == pytest.approx((row_box.page_width, row_box.page_height), abs=0.5)
        for text in [expected.matched_text.split(" | ")[0], *question["answers"]]:  # the row header and the answer
            assert any(inside(where, row) for where in page.printed_at(text)), (text, row)
        # Every word and number printed inside the drawn row is in the matched row's sentence:
        # the box holds that row and no other.
        printed = page.words_in(row)
        assert printed and all(word in expected.matched_text for word in printed), printed
    assert shot.stat().st_size > 20_000
    _keep(shot)


FILING = "2023 Q1 MSFT"  # pages 40-42: the MD&A's operating expense tables, one row per line item
FILING_QUESTION = "Sales and marketing percentage change"


@pytest.fixture(scope="module")
def filing_server(corpora, tmp_path_factory):
    """The page served on three pages of a real 10-Q (the shared corpus; skipped without it)."""
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.pipeline import ingest_parsed
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store

    pdf = corpora / "sec-10q-dev" / "pdfs" / f"{FILING}.pdf"
    root = tmp_path_factory.mktemp("filing-serve")
    settings = StoreSettings(path=str(root / "store"))
    with open_store(settings) as store:
        ingest_parsed(DoclingParser().parse(pdf, pages=(40, 42)), store, Embedder(), token_counter(None))
    with _serving(settings.path, root) as served:
        yield {**served, "pdf": pdf, "settings": settings}


def test_page_view_of_a_real_filing_draws_the_row_over_its_figures(filing_server):
    from evidence_pipeline.retrieval import search

    expected = search(FILING_QUESTION, k=3, store_settings=filing_server["settings"])[0]
    row_box = expected.row_box
    assert expected.doc_id == FILING and row_box is not None and " | " in expected.matched_text, expected.matched_text
    shot = filing_server["root"] / "page-view-filing.png"
    url = f"{filing_server['url']}/?{urlencode({'q': FILING_QUESTION, 'show': 1})}"
    view = _PageView()
    view.feed(_chromium(url, filing_server["root"] / "profile", shot))
    assert view.state == "loaded" and view.images
    row = _drawn_in_points(next(b for b in view.boxes if b["class"] == "rowbox"), row_box.page_width, row_box.page_height)
    with PageText(filing_server["pdf"], row_box.page) as page:
        head = expected.matched_text.split(" | ")[0]
        figures = re.findall(r": \$?([\d,.]+)", expected.matched_text.split(" | ")[1])  # each cell's value
        assert figures
        for text in [head, *figures]:  # the row's label and every figure in it lie inside the drawn row
            assert any(inside(where, row) for where in page.printed_at(text)), (text, row)
        printed = page.words_in(row)
        assert printed and all(word in expected.matched_text for word in printed), printed  # and no other row
    _keep(shot)


def test_the_document_filter_keeps_the_results_to_that_document(server, corpus_store):
    from evidence_pipeline.retrieval import search

    question, expected = _row_question(corpus_store)
    other = next(q["doc_id"] for q in sop_questions() if q["doc_id"] != expected.doc_id)
    wanted = [h.parent_id for h in search(question["question"], k=5, store_settings=corpus_store, doc_ids=[other])]
    url = f"{server['url']}/?{urlencode({'q': question['question'], 'doc_id': other})}"
    dom = _chromium(url, server["root"] / "profile-filter", server["root"] / "filtered.png")
    assert 'data-state="done"' in dom, dom[-2000:]
    page = _Results()
    page.feed(dom)
    # The question's own table is gone: the page shows what search gives within the chosen document.
    assert [r["parent_id"] for r in page.results] == wanted and wanted
    assert expected.parent_id not in wanted and all(p.startswith(other) for p in wanted)
