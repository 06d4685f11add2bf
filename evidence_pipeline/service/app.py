"""The search service: ``/search``, ``/context``, ``/documents`` (with each document's file and
page images), ``/health``, ``/contract`` and the search page.

The embedding model loads once, when the app starts, so a query costs an embedding and a
store query (milliseconds). The embedded Edge store is exclusive per process: requests read
it through ``store.reading_store``, which keeps it open between requests and hands it over
as soon as an ingest in another process queues for it (``store/reader.py``). Inside this
process requests to the embedded store take turns on a lock; with a Qdrant server
(``QDRANT_URL``) they run side by side.

``EVIDENCE_API_KEY`` set: every endpoint but ``/health`` and the page itself needs the
header ``X-API-Key`` with that value.

A document's file and pages are served by doc_id only: the path is the one its points
record, and only while the file still has their content hash (``service/sources.py``).
"""

from __future__ import annotations

import hmac
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass
from importlib import resources
from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response

from evidence_pipeline.contract import collection_contract
from evidence_pipeline.embedding import Embedder, token_counter
from evidence_pipeline.errors import EvidencePipelineError
from evidence_pipeline.records import SearchHit
from evidence_pipeline.retrieval import check_query, render_context, search
from evidence_pipeline.service.sources import SourceFile, SourceRefused, on_disk, page_png, recorded_source
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings
from evidence_pipeline.store import Store, reading_store
from evidence_pipeline.store.base import DocumentInfo

MAX_K = 50
MAX_QUERY_CHARS = 2000
PERIOD = r"^\d{4}(-\d{2}){0,2}$"


class Service:
    """What one running app owns: its settings, the warm model, the store's turn lock."""

    def __init__(self, store: StoreSettings, embedding: EmbeddingSettings, api_key: str | None):
        self.store = store
        self.embedding = embedding
        self.api_key = api_key or None
        self.embedder = Embedder(embedding)
        # Edge: one open store per process at a time. A server accepts concurrent clients.
        self._turn = nullcontext() if store.url else threading.Lock()

    def warm_up(self) -> None:
        """Load the model and the tokenizer now, not on the first request."""
        self.embedder.embed_query("warm-up")
        token_counter(self.embedding.model)

    @contextmanager
    def turn(self) -> Iterator[None]:
        with self._turn:
            yield

    @contextmanager
    def opened(self) -> Iterator[Store]:
        with self.turn(), reading_store(self.store) as store:
            yield store


def _service(request: Request) -> Service:
    return request.app.state.service


def _require_key(request: Request, service: Annotated[Service, Depends(_service)]) -> None:
    if service.api_key is None:
        return
    given = request.headers.get("x-api-key", "")
    if not hmac.compare_digest(given.encode(), service.api_key.encode()):
        raise HTTPException(status_code=401, detail="missing or wrong X-API-Key header")


def _store_error(service: Service, exc: EvidencePipelineError) -> HTTPException:
    return HTTPException(status_code=503, detail=service.store.redact(str(exc)))


@dataclass(frozen=True)
class SearchRequest:
    """The parameters ``/search`` and ``/context`` share."""

    q: str
    k: int | None
    doc_ids: list[str] | None
    token_budget: int | None
    doc_type: str | None
    period: str | None


def _search_request(
    q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_CHARS, description="the question")],
    k: Annotated[int | None, Query(ge=1, le=MAX_K, description="at most k parents (default 5)")] = None,
    doc_id: Annotated[list[str] | None, Query(description="only these documents (repeatable)")] = None,
    token_budget: Annotated[int | None, Query(ge=1, le=1_000_000, description="parents that fit N tokens")] = None,
    doc_type: Annotated[str | None, Query(max_length=100, description="only documents of this type (card doc_type, any case)")] = None,
    period: Annotated[str | None, Query(pattern=PERIOD, description="period_end prefix: 2023, 2023-06, ...")] = None,
) -> SearchRequest:
    return SearchRequest(q, k, doc_id or None, token_budget, doc_type, period)


def document_matches(doc: DocumentInfo, doc_type: str | None, period: str | None) -> bool:
    """The document is of ``doc_type`` (any case) and its period ends within ``period`` (a
    prefix of its ISO ``period_end``); a filter left None matches every document."""
    if doc_type is not None and (doc.doc_type or "").casefold() != doc_type.casefold():
        return False
    return period is None or (doc.period_end or "").startswith(period)


def _searched_documents(service: Service, request: SearchRequest) -> list[str] | None:
    """The doc_ids the search is restricted to (None: every document): the ``doc_id``
    parameters, narrowed by ``doc_type`` and ``period`` through the stored documents."""
    if request.doc_type is None and request.period is None:
        return request.doc_ids
    with service.opened() as st:
        docs = st.documents()
    named = set(request.doc_ids or [d.doc_id for d in docs])
    return [d.doc_id for d in docs if d.doc_id in named and document_matches(d, request.doc_type, request.period)]


def _run_search(service: Service, request: SearchRequest) -> tuple[list[SearchHit], dict[str, str]]:
    """The hits and the timing headers (``X-Query-Ms``, ``Server-Timing``) of the whole query."""
    started = time.perf_counter()
    try:
        doc_ids = _searched_documents(service, request)
        if doc_ids == []:  # the filters leave no document
            check_query(request.q, request.k, request.token_budget)
            hits: list[SearchHit] = []
        else:
            with service.turn():
                hits = search(
                    request.q, request.k, token_budget=request.token_budget, store_settings=service.store,
                    embedding_settings=service.embedding, doc_ids=doc_ids,
                )  # fmt: skip
    except ValueError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None
    except EvidencePipelineError as exc:
        raise _store_error(service, exc) from None
    ms = (time.perf_counter() - started) * 1000
    return hits, {"X-Query-Ms": f"{ms:.1f}", "Server-Timing": f"search;dur={ms:.1f}"}


def _source(service: Service, doc_id: str) -> SourceFile:
    """The document's file, found in the store and checked on disk (outside the store's turn)."""
    try:
        with service.opened() as st:
            recorded = recorded_source(st, doc_id)
        return on_disk(recorded)
    except SourceRefused as exc:
        raise HTTPException(status_code=exc.status, detail=str(exc)) from None
    except EvidencePipelineError as exc:
        raise _store_error(service, exc) from None


def create_app(
    store: StoreSettings | None = None,
    embedding: EmbeddingSettings | None = None,
    api_key: str | None = None,
) -> FastAPI:
    """The app for these settings (default: the environment's, ``EVIDENCE_API_KEY`` for the key)."""
    service = Service(
        store or StoreSettings.from_env(),
        embedding or EmbeddingSettings.from_env(),
        api_key if api_key is not None else os.environ.get("EVIDENCE_API_KEY"),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        service.warm_up()
        yield

    app = FastAPI(title="evidence-pipeline search", lifespan=lifespan)
    app.state.service = service
    guarded = [Depends(_require_key)]

    @app.get("/health")
    def health() -> JSONResponse:
        """200 when the store opens and answers a count; 503 with the reason otherwise."""
        body = {"store": service.store.location, "model": service.embedder.model_id, "api_key_required": service.api_key is not None}
        try:
            with service.opened() as st:
                body["points"] = st.count()
        except EvidencePipelineError as exc:
            return JSONResponse({"status": "unavailable", "reason": service.store.redact(str(exc)), **body}, status_code=503)
        return JSONResponse({"status": "ok", **body})

    @app.get("/search", dependencies=guarded)
    def search_endpoint(request: Annotated[SearchRequest, Depends(_search_request)], response: Response) -> list[dict]:
        """The same JSON array as ``evidence-pipeline search --json``; ``doc_type`` and
        ``period`` narrow the documents searched. ``X-Query-Ms``: the query's time."""
        hits, timing = _run_search(service, request)
        response.headers.update(timing)
        return [h.model_dump() for h in hits]

    @app.get("/context", dependencies=guarded, response_class=PlainTextResponse)
    def context_endpoint(request: Annotated[SearchRequest, Depends(_search_request)]) -> PlainTextResponse:
        """The same text as ``evidence-pipeline search --context`` (what a language model is
        given), for the same parameters as ``/search``; empty when nothing is found."""
        hits, timing = _run_search(service, request)
        return PlainTextResponse(render_context(hits) + "\n" if hits else "", headers=timing)

    @app.get("/documents", dependencies=guarded)
    def documents() -> list[dict]:
        """Every stored document: id, title, counts of points and parents, content hash, versions,
        source file, type, period and ``ingested_at`` (UTC ISO 8601; null where the store holds no
        ingest record for the document's points, as in stores written before the records)."""
        try:
            with service.opened() as st:
                return [d.model_dump() for d in st.documents()]
        except EvidencePipelineError as exc:
            raise _store_error(service, exc) from None

    @app.get("/documents/{doc_id}/pages/{page}.png", dependencies=guarded, response_class=Response)
    def page_image(doc_id: str, page: int) -> Response:
        """Page ``page`` (1-based) of the document's PDF as a PNG at most 1000 px wide. 404: no
        such document or page; 409: its file is gone or changed; 415: not a PDF."""
        source = _source(service, doc_id)
        try:
            png = page_png(source, page)
        except SourceRefused as exc:
            raise HTTPException(status_code=exc.status, detail=str(exc)) from None
        return Response(png, media_type="image/png")

    @app.get("/documents/{doc_id}/file", dependencies=guarded, response_class=FileResponse)
    def document_file(doc_id: str) -> FileResponse:
        """The file the document was ingested from, shown inline (``#page=N`` opens a PDF at a
        page). 404: no such document; 409: its file is gone or changed."""
        source = _source(service, doc_id)
        return FileResponse(source.path, media_type=source.media_type, filename=source.path.name, content_disposition_type="inline")

    @app.get("/contract", dependencies=guarded)
    def contract() -> dict:
        """The collection's schema (``evidence_pipeline.contract``) with the embedding dimension."""
        return collection_contract(service.embedder.dim).model_dump()

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> str:
        return resources.files("evidence_pipeline.service").joinpath("static/search.html").read_text(encoding="utf-8")

    return app


def query_threads(n: int | None) -> int | None:
    """Set torch's intra-op threads for this process; returns the previous number (None, and
    nothing set, when torch is not loaded or ``n`` is None).

    One query is a few dozen word pieces: a second thread saves little on an idle machine,
    and on a busy one the threads wait on each other. The service runs with 1.
    """
    torch = sys.modules.get("torch")
    if torch is None or n is None:  # the ONNX backend: no torch to tune, and importing it costs seconds
        return None
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    return previous


def serve(host: str = "127.0.0.1", port: int = 8000, threads: int = 1) -> None:
    import uvicorn

    app = create_app()  # loads the embedder: torch is imported by then when it is the backend
    query_threads(threads)
    uvicorn.run(app, host=host, port=port, log_level="warning")
