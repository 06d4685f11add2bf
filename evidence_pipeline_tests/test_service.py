"""The search service through FastAPI's TestClient, on the sample corpus's store."""

import hashlib
import json
import re
import shutil
import struct
from datetime import UTC, datetime
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from fastapi.testclient import TestClient

from evidence_pipeline import cli
from evidence_pipeline.bm25_query import TOKENIZER_VERSION
from evidence_pipeline.service.app import MAX_K, MAX_QUERY_CHARS, create_app
from evidence_pipeline.service.sources import PAGE_WIDTH_PX
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline.store.base import INGEST_RECORDS, Point, point_id
from evidence_pipeline.store.reader import let_go
from evidence_pipeline_tests.corpus_store import corpus_store, sop_questions  # noqa: F401  (fixture)
from evidence_pipeline_tests.page_text import PageText, inside
from evidence_pipeline_tests.test_store import DIM, make_points

KEY = "svc-test-key-7d1e"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def client(corpus_store):
    with TestClient(create_app(store=corpus_store, api_key="")) as c:
        yield c


def _cli_out(capsys, monkeypatch, store: StoreSettings, *argv: str) -> str:
    monkeypatch.setenv("EVIDENCE_STORE_PATH", store.path)
    monkeypatch.delenv("QDRANT_URL", raising=False)
    capsys.readouterr()
    assert cli.main(["search", *argv]) == 0
    return capsys.readouterr().out


def _cli_json(capsys, monkeypatch, store: StoreSettings, *argv: str) -> list[dict]:
    return json.loads(_cli_out(capsys, monkeypatch, store, *argv, "--json"))


@pytest.mark.parametrize(
    "params",
    [
        {"k": None, "token_budget": None, "doc_id": None},
        {"k": 3, "token_budget": None, "doc_id": None},
        {"k": None, "token_budget": 600, "doc_id": None},
    ],
)
def test_search_returns_what_search_json_prints(client, corpus_store, capsys, monkeypatch, params):
    question = sop_questions()[0]["question"]
    argv = [question]
    if params["k"]:
        argv += ["--k", str(params["k"])]
    if params["token_budget"]:
        argv += ["--token-budget", str(params["token_budget"])]
    expected = _cli_json(capsys, monkeypatch, corpus_store, *argv)
    query = {"q": question, **{k: v for k, v in params.items() if v is not None}}
    response = client.get("/search", params=query)
    assert response.status_code == 200
    assert response.json() == expected
    assert expected and expected[0]["doc_id"] == sop_questions()[0]["doc_id"]


def test_search_restricted_to_a_document(client):
    question = sop_questions()[0]["question"]
    everywhere = client.get("/search", params={"q": question, "k": 10}).json()
    other = next(h["doc_id"] for h in everywhere if h["doc_id"] != everywhere[0]["doc_id"])
    hits = client.get("/search", params={"q": question, "k": 10, "doc_id": other}).json()
    assert hits and {h["doc_id"] for h in hits} == {other}


def test_documents_lists_every_document_with_counts_and_versions(client, corpus_store, sample_corpus):
    docs = client.get("/documents").json()
    assert [d["doc_id"] for d in docs] == sorted(p.stem for p in sample_corpus.glob("*.pdf"))
    with open_store(corpus_store) as store:
        assert sum(d["points"] for d in docs) == store.count()
        assert all(d["points"] == store.count(d["doc_id"]) for d in docs)
        assert all(store.document_version(d["doc_id"]) == (d["content_hash"], d["pipeline_version"]) for d in docs)
        recorded = store.ingest_records()
    for d in docs:
        # Ingested after its file was written, before now: the store's record of it, in UTC.
        pdf = sample_corpus / f"{d['doc_id']}.pdf"
        assert d["ingested_at"] == recorded[d["doc_id"]].ingested_at and d["ingested_at"].endswith("Z")
        assert datetime.fromtimestamp(pdf.stat().st_mtime, UTC) <= datetime.fromisoformat(d["ingested_at"]) <= datetime.now(UTC)
    for d in docs:
        pdf = sample_corpus / f"{d['doc_id']}.pdf"
        assert d["content_hash"] == hashlib.sha256(pdf.read_bytes()).hexdigest()
        assert 0 < d["parents"] < d["points"] and d["doc_title"]
        assert d["bm25_tokenizer"] == TOKENIZER_VERSION
        assert d["source"] == str(pdf)
        assert {"doc_type", "period_end", "fiscal_year"} <= d.keys()


def test_documents_of_a_store_written_before_the_ingest_records_have_no_time(tmp_path):
    settings = StoreSettings(path=str(tmp_path / "store"))
    with open_store(settings) as store:
        store.ensure_collection(DIM)
        store.replace_document("a", make_points("a", {"a/p1": ["one", "two"]}))
    shutil.rmtree(Path(settings.path) / INGEST_RECORDS)
    try:
        docs = TestClient(create_app(store=settings, api_key="")).get("/documents").json()  # no lifespan: no model
    finally:
        let_go(settings)
    assert [(d["doc_id"], d["points"], d["ingested_at"]) for d in docs] == [("a", 2, None)]


def test_health_and_contract(client, corpus_store):
    health = client.get("/health").json()
    with open_store(corpus_store) as store:
        assert health["points"] == store.count() > 0
    assert health["status"] == "ok" and health["api_key_required"] is False
    contract = client.get("/contract").json()
    assert contract["dense_dim"] == 384 and contract["tokenizer_version"] == TOKENIZER_VERSION


@pytest.mark.parametrize(
    "params, status",
    [
        ({"q": "flow rate", "k": MAX_K + 1}, 422),
        ({"q": "flow rate", "k": 0}, 422),
        ({"q": "x" * (MAX_QUERY_CHARS + 1)}, 422),
        ({"q": ""}, 422),
        ({"q": "   "}, 400),
        ({"q": "flow rate", "token_budget": 0}, 422),
        ({}, 422),
    ],
)
def test_bad_requests_are_refused_with_the_reason(client, params, status):
    response = client.get("/search", params=params)
    assert response.status_code == status
    assert response.json()["detail"]


def test_page_is_served(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'id="q"' in page.text and "innerHTML" not in page.text


def test_api_key_guards_search_and_documents(corpus_store):
    doc = sop_questions()[0]["doc_id"]
    guarded = (
        "/search?q=flow+rate",
        "/context?q=flow+rate",
        "/documents",
        "/contract",
        f"/documents/{doc}/file",
        f"/documents/{doc}/pages/1.png",
    )
    with TestClient(create_app(store=corpus_store, api_key=KEY)) as c:
        for path in guarded:
            assert c.get(path).status_code == 401
            assert c.get(path, headers={"X-API-Key": KEY + "x"}).status_code == 401
            assert c.get(path, headers={"X-API-Key": KEY}).status_code == 200
        assert c.get("/health").json()["api_key_required"] is True
        assert c.get("/").status_code == 200


@pytest.mark.filterwarnings("ignore:Failed to obtain server version")
def test_unreachable_server_is_a_503_naming_it():
    store = StoreSettings(url="http://127.0.0.1:9", collection="evidence")
    with TestClient(create_app(store=store, api_key="")) as c:
        response = c.get("/search", params={"q": "flow rate"})
        assert response.status_code == 503 and "127.0.0.1:9" in response.json()["detail"]
        assert c.get("/health").status_code == 503


def test_context_is_what_search_context_prints(client, corpus_store, capsys, monkeypatch):
    question = sop_questions()[0]["question"]
    expected = _cli_out(capsys, monkeypatch, corpus_store, question, "--k", "3", "--context")
    response = client.get("/context", params={"q": question, "k": 3})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    assert response.text == expected and sop_questions()[0]["answers"][0] in expected
    assert float(response.headers["x-query-ms"]) > 0
    assert response.headers["server-timing"] == f"search;dur={response.headers['x-query-ms']}"


def test_search_reports_its_time(client):
    response = client.get("/search", params={"q": "flow rate"})
    assert response.status_code == 200 and 0 < float(response.headers["x-query-ms"]) < 60_000


def test_doc_type_filter_keeps_the_documents_of_that_type(client):
    question = sop_questions()[0]["question"]
    types = {d["doc_id"]: d["doc_type"] for d in client.get("/documents").json()}
    wanted = types[sop_questions()[0]["doc_id"]]
    assert wanted, types
    hits = client.get("/search", params={"q": question, "k": 10, "doc_type": wanted.swapcase()}).json()
    assert hits and {types[h["doc_id"]] for h in hits} == {wanted}
    assert hits[0]["doc_id"] == sop_questions()[0]["doc_id"]
    assert client.get("/search", params={"q": question, "doc_type": "no such type"}).json() == []
    assert client.get("/context", params={"q": question, "doc_type": "no such type"}).text == ""
    assert client.get("/search", params={"q": "  ", "doc_type": "no such type"}).status_code == 400


@pytest.mark.parametrize("period", ["23", "2023-6", "2023/06", "x"])
def test_a_malformed_period_is_refused(client, period):
    assert client.get("/search", params={"q": "flow rate", "period": period}).status_code == 422


# -- a document's file and pages


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == PNG_MAGIC and png[12:16] == b"IHDR"
    return struct.unpack(">II", png[16:24])


def _page_sizes(pdf_path) -> list[tuple[float, float]]:
    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        return [pdf[i].get_size() for i in range(len(pdf))]
    finally:
        pdf.close()


def test_a_page_is_a_png_of_that_page(client, sample_corpus):
    doc = sop_questions()[0]["doc_id"]
    sizes = _page_sizes(sample_corpus / f"{doc}.pdf")
    for page in (1, len(sizes)):
        response = client.get(f"/documents/{doc}/pages/{page}.png")
        assert response.status_code == 200 and response.headers["content-type"] == "image/png"
        width, height = _png_size(response.content)
        page_w, page_h = sizes[page - 1]
        assert width == PAGE_WIDTH_PX and abs(height - PAGE_WIDTH_PX * page_h / page_w) <= 1
        assert len(response.content) > 5_000
        assert client.get(f"/documents/{doc}/pages/{page}.png").content == response.content


def test_no_such_page_or_document_is_a_404(client, sample_corpus):
    doc = sop_questions()[0]["doc_id"]
    n_pages = len(_page_sizes(sample_corpus / f"{doc}.pdf"))
    for path in (f"/documents/{doc}/pages/0.png", f"/documents/{doc}/pages/{n_pages + 1}.png", "/documents/NOPE/pages/1.png"):
        response = client.get(path)
        assert response.status_code == 404 and response.json()["detail"], path
    assert client.get("/documents/NOPE/file").status_code == 404


@pytest.mark.parametrize("doc_id", ["../x", "..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "..", "SOP-8812%2F..%2F..%2Fpasswd", "%2E%2E"])
def test_a_path_in_the_request_reaches_no_file(client, doc_id):
    for path in (f"/documents/{doc_id}/file", f"/documents/{doc_id}/pages/1.png"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert not response.content.startswith((PNG_MAGIC, b"%PDF", b"root:"))


def test_the_file_is_the_ingested_pdf_inline(client, sample_corpus):
    doc = sop_questions()[0]["doc_id"]
    response = client.get(f"/documents/{doc}/file")
    assert response.status_code == 200 and response.headers["content-type"] == "application/pdf"
    assert response.headers["content-disposition"].startswith("inline")
    assert response.content == (sample_corpus / f"{doc}.pdf").read_bytes()


@pytest.fixture(scope="module")
def copies(corpus_store, tmp_path_factory):
    """A service on a store of copies of one SOP's points, each naming a file the test
    controls: ``intact`` an unchanged copy of the PDF (period 2023-06-30), ``changed`` a copy
    edited since ingest (period 2024-03-31), ``gone`` a deleted copy, ``unrecorded`` no file,
    ``notes`` a text file with its own hash."""
    root = tmp_path_factory.mktemp("copies")
    doc = sop_questions()[0]["doc_id"]
    with open_store(corpus_store) as store:
        points = list(store.iter_points(doc))
        source = store.payloads("doc_id", doc, ["source"])[0]["source"]
    intact, changed, gone, notes = (root / name for name in ("intact.pdf", "changed.pdf", "gone.pdf", "notes.txt"))
    for path in (intact, changed, gone):
        shutil.copy(source, path)
    notes.write_text("minutes of the line clearance meeting\n", encoding="utf-8")
    stored = {
        "intact": {"source": str(intact), "period_end": "2023-06-30"},
        "changed": {"source": str(changed), "period_end": "2024-03-31"},
        "gone": {"source": str(gone)},
        "unrecorded": {"source": None},
        "notes": {"source": str(notes), "content_hash": hashlib.sha256(notes.read_bytes()).hexdigest()},
    }
    settings = StoreSettings(path=str(root / "store"))
    with open_store(settings) as store:
        for doc_id, fields in stored.items():
            store.replace_document(doc_id, [_copied(p, doc_id, fields) for p in points])
    with changed.open("ab") as f:
        f.write(b"\n% edited\n")
    gone.unlink()
    with TestClient(create_app(store=settings, api_key="")) as c:
        yield c


def _copied(point: Point, doc_id: str, fields: dict) -> Point:
    payload = {**point.payload, "doc_id": doc_id, **fields}
    return point.model_copy(update={"id": point_id(doc_id, payload["child_id"], payload["parent_id"]), "payload": payload})


def test_a_changed_gone_or_unrecorded_file_is_a_409_saying_so(copies):
    assert copies.get("/documents/intact/pages/1.png").status_code == 200
    assert copies.get("/documents/intact/file").status_code == 200
    for doc_id, reason in (("changed", "changed since it was ingested"), ("gone", "is gone"), ("unrecorded", "does not record")):
        for path in (f"/documents/{doc_id}/file", f"/documents/{doc_id}/pages/1.png"):
            response = copies.get(path)
            assert response.status_code == 409 and reason in response.json()["detail"], (path, response.text)


def test_a_file_without_pages_is_served_but_has_no_page_images(copies):
    response = copies.get("/documents/notes/pages/1.png")
    assert response.status_code == 415 and "no page geometry" in response.json()["detail"]
    response = copies.get("/documents/notes/file")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    assert response.text == "minutes of the line clearance meeting\n"


@pytest.mark.parametrize(
    "period, expected",
    [("2023", {"intact"}), ("2023-06", {"intact"}), ("2023-06-30", {"intact"}), ("2024-03", {"changed"}), ("2023-07", set())],
)
def test_period_filter_matches_the_start_of_period_end(copies, period, expected):
    question = sop_questions()[0]["question"]
    hits = copies.get("/search", params={"q": question, "k": 10, "period": period}).json()
    assert {h["doc_id"] for h in hits} == expected
    narrowed = copies.get("/search", params={"q": question, "k": 10, "period": period[:4], "doc_id": ["changed", "gone"]}).json()
    assert {h["doc_id"] for h in narrowed} == ({"changed"} if period.startswith("2024") else set())


def test_documents_show_the_recorded_source_and_period(copies):
    docs = {d["doc_id"]: d for d in copies.get("/documents").json()}
    assert docs["unrecorded"]["source"] is None and docs["gone"]["source"].endswith("gone.pdf")
    assert (docs["intact"]["period_end"], docs["changed"]["period_end"], docs["gone"]["period_end"]) == ("2023-06-30", "2024-03-31", None)


# -- a real filing's pages

FILING = "2023 Q1 MSFT"  # pages 40-42: the MD&A's operating expense tables, one row per line item
ROW_QUESTION = "Sales and marketing percentage change"


@pytest.fixture(scope="module")
def filing(corpora, tmp_path_factory):
    """A service on three pages of a real 10-Q (the shared corpus; skipped without it)."""
    from evidence_pipeline.embedding import Embedder, token_counter
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.pipeline import ingest_parsed

    pdf = corpora / "sec-10q-dev" / "pdfs" / f"{FILING}.pdf"
    settings = StoreSettings(path=str(tmp_path_factory.mktemp("filing") / "store"))
    with open_store(settings) as store:
        ingest_parsed(DoclingParser().parse(pdf, pages=(40, 42)), store, Embedder(), token_counter(None))
    with TestClient(create_app(store=settings, api_key="")) as c:
        yield c, pdf


def test_a_real_filing_page_shows_the_matched_row_where_pdfium_prints_it(filing):
    client, pdf = filing
    hit = client.get("/search", params={"q": ROW_QUESTION, "k": 3}).json()[0]
    row_box = hit["row_box"]
    assert hit["doc_id"] == FILING and row_box and " | " in hit["matched_text"], hit["matched_text"]
    png = client.get(f"/documents/{FILING}/pages/{row_box['page']}.png")
    assert png.status_code == 200
    width, height = _png_size(png.content)
    assert width == PAGE_WIDTH_PX and abs(height - PAGE_WIDTH_PX * row_box["page_height"] / row_box["page_width"]) <= 1
    row = (row_box["l"], row_box["t"], row_box["r"], row_box["b"])
    assert any(inside(row, (b["l"], b["t"], b["r"], b["b"])) for b in hit["boxes"] if b["page"] == row_box["page"])
    with PageText(pdf, row_box["page"]) as page:
        assert (page.width, page.height) == pytest.approx((row_box["page_width"], row_box["page_height"]), abs=0.5)
        head = hit["matched_text"].split(" | ")[0]
        figures = re.findall(r": \$?([\d,.]+)", hit["matched_text"].split(" | ")[1])  # each cell's value
        for text in [head, *figures]:
            assert any(inside(where, row) for where in page.printed_at(text)), (text, row)
        printed = page.words_in(row)
        assert printed and all(word in hit["matched_text"] for word in printed), printed
    served = client.get(f"/documents/{FILING}/file")
    assert served.headers["content-type"] == "application/pdf" and served.content == pdf.read_bytes()
