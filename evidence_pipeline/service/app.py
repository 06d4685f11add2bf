"""The search service: ``/search``, ``/documents``, ``/health``, ``/contract`` and the search page.

The embedding model loads once, when the app starts, so a query costs an embedding and a
store query (milliseconds). The embedded Edge store is exclusive per process: requests read
it through ``store.reading_store``, which keeps it open between requests and hands it over
as soon as an ingest in another process queues for it (``store/reader.py``). Inside this
process requests to the embedded store take turns on a lock; with a Qdrant server
(``QDRANT_URL``) they run side by side.

``EVIDENCE_API_KEY`` set: every endpoint but ``/health`` and the page itself needs the
header ``X-API-Key`` with that value.
"""

from __future__ import annotations

import hmac
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext
from importlib import resources
from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse

from evidence_pipeline.contract import collection_contract
from evidence_pipeline.embedding import Embedder, token_counter
from evidence_pipeline.errors import EvidencePipelineError
from evidence_pipeline.retrieval import search
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings
from evidence_pipeline.store import Store, reading_store

MAX_K = 50
MAX_QUERY_CHARS = 2000


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
    def search_endpoint(
        q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_CHARS, description="the question")],
        k: Annotated[int | None, Query(ge=1, le=MAX_K, description="at most k parents (default 5)")] = None,
        doc_id: Annotated[list[str] | None, Query(description="only these documents (repeatable)")] = None,
        token_budget: Annotated[int | None, Query(ge=1, le=1_000_000, description="parents that fit N tokens")] = None,
    ) -> list[dict]:
        """The same JSON array as ``evidence-pipeline search --json``."""
        try:
            with service.turn():
                hits = search(
                    q, k, token_budget=token_budget, store_settings=service.store,
                    embedding_settings=service.embedding, doc_ids=doc_id or None,
                )  # fmt: skip
        except ValueError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None
        except EvidencePipelineError as exc:
            raise _store_error(service, exc) from None
        return [h.model_dump() for h in hits]

    @app.get("/documents", dependencies=guarded)
    def documents() -> list[dict]:
        """Every stored document: id, title, counts of points and parents, content hash, versions."""
        try:
            with service.opened() as st:
                return [d.model_dump() for d in st.documents()]
        except EvidencePipelineError as exc:
            raise _store_error(service, exc) from None

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
