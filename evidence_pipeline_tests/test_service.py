"""The search service through FastAPI's TestClient, on the sample corpus's store."""

import hashlib
import json

import pytest
from fastapi.testclient import TestClient

from evidence_pipeline import cli
from evidence_pipeline.bm25_query import TOKENIZER_VERSION
from evidence_pipeline.service.app import MAX_K, MAX_QUERY_CHARS, create_app
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline.store import open_store
from evidence_pipeline_tests.corpus_store import corpus_store, sop_questions  # noqa: F401  (fixture)

KEY = "svc-test-key-7d1e"


@pytest.fixture(scope="module")
def client(corpus_store):
    with TestClient(create_app(store=corpus_store, api_key="")) as c:
        yield c


def _cli_json(capsys, monkeypatch, store: StoreSettings, *argv: str) -> list[dict]:
    monkeypatch.setenv("EVIDENCE_STORE_PATH", store.path)
    monkeypatch.delenv("QDRANT_URL", raising=False)
    capsys.readouterr()
    assert cli.main(["search", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


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
    for d in docs:
        pdf = sample_corpus / f"{d['doc_id']}.pdf"
        assert d["content_hash"] == hashlib.sha256(pdf.read_bytes()).hexdigest()
        assert 0 < d["parents"] < d["points"] and d["doc_title"]
        assert d["bm25_tokenizer"] == TOKENIZER_VERSION


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
    with TestClient(create_app(store=corpus_store, api_key=KEY)) as c:
        for path in ("/search?q=flow+rate", "/documents", "/contract"):
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
