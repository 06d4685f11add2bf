"""An MCP server (stdio) over the index, so that an LLM agent can search it and read parents.

``evidence-pipeline mcp`` runs it; an MCP client (Claude Desktop, an agent framework)
starts that command and talks to it over stdin/stdout. Two tools:

- ``search(query, k=5, token_budget=None, doc_id=None)``: the best parents (tables kept
  whole, section chunks) with document, pages, section path, caption and the RRF score;
- ``get_parent(parent_id)``: one parent's whole text and metadata (every piece of a split
  table), for a parent named by an earlier search.

The store and embedding settings come from the environment when the server starts
(``EVIDENCE_STORE_PATH`` or ``QDRANT_URL``...). The embedding model loads once, before the
first request. The store is read as ``evidence_pipeline.search`` reads it: the embedded store
stays open between calls and is handed over as soon as an ingest in another process queues
for it (``store/reader.py``). Needs the ``mcp`` extra.
"""

from __future__ import annotations

import contextlib
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from evidence_pipeline import __version__
from evidence_pipeline.embedding import Embedder
from evidence_pipeline.errors import EvidencePipelineError
from evidence_pipeline.integrations.options import SCORE_NOTE
from evidence_pipeline.parents import ParentRecord
from evidence_pipeline.parents import get_parent as lookup_parent
from evidence_pipeline.records import SearchHit
from evidence_pipeline.retrieval import BUDGET_CANDIDATES
from evidence_pipeline.retrieval import search as search_index
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings

# An agent's k is bounded like a budget's candidate list: more parents than this is a dump, not a search.
MAX_K = BUDGET_CANDIDATES

INSTRUCTIONS = (
    "Search an index of documents in which every table is kept whole with its caption, header "
    "and footnotes. Call `search` with a question; each result is a parent (a table or a "
    "section) with its full text in parent_text; a large table also comes focused on the rows "
    "the question names (focus). Call `get_parent` with a parent_id to read one parent again, whole."
)


def build_server(store: StoreSettings, embedding: EmbeddingSettings) -> MCPServer:
    server = MCPServer("evidence-pipeline", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    @server.tool(
        description=(
            "Hybrid search (dense + BM25) over the indexed documents: the k best parents, each a "
            "table or a section with its whole text (parent_text; a large table also focused on the "
            "rows asked, in focus), document, pages and boxes, section path, caption and the child text that matched. With token_budget, the parents that fit that "
            f"many tokens. doc_id limits the search to one document. {SCORE_NOTE}."
        )
    )
    def search(query: str, k: int = 5, token_budget: int | None = None, doc_id: str | None = None) -> list[SearchHit]:
        if k > MAX_K:
            raise ToolError(f"k must be at most {MAX_K}, not {k}")
        try:
            return search_index(
                query,
                k,
                token_budget=token_budget,
                store_settings=store,
                embedding_settings=embedding,
                doc_ids=[doc_id] if doc_id else None,
            )
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        except EvidencePipelineError as exc:
            raise ToolError(store.redact(str(exc))) from None

    @server.tool(
        description=(
            "One parent (a table or a section) by the parent_id a search returned: its whole text "
            "(every piece of a table that was split), document, pages, section path and caption."
        )
    )
    def get_parent(parent_id: str) -> ParentRecord:
        try:
            record = lookup_parent(parent_id, store)
        except EvidencePipelineError as exc:
            raise ToolError(store.redact(str(exc))) from None
        if record is None:
            raise ToolError(f"no parent {parent_id!r} in {store.location}")
        return record

    return server


def run_stdio(store: StoreSettings | None = None, embedding: EmbeddingSettings | None = None) -> None:
    """Serve over stdin/stdout until the client closes stdin."""
    store = store or StoreSettings.from_env()
    embedding = embedding or EmbeddingSettings.from_env()
    # stdout carries the protocol: whatever loading the model prints goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        Embedder(embedding).model  # noqa: B018  (loads the model)
    build_server(store, embedding).run("stdio")
