"""`evidence-pipeline mcp` driven by the MCP SDK's own stdio client, on two indexed sample documents."""

import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from evidence_pipeline import search  # noqa: E402
from evidence_pipeline.parents import get_parent  # noqa: E402
from evidence_pipeline_tests.sample_store import DOCS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _server(store_path: str) -> StdioServerParameters:
    # The client passes only a few variables (PATH, HOME, ...) on: the store and this checkout go explicitly.
    env = {"PYTHONPATH": str(REPO), "EVIDENCE_STORE_PATH": store_path, "HF_HUB_OFFLINE": "1"}
    return StdioServerParameters(command=sys.executable, args=["-m", "evidence_pipeline.cli", "mcp"], env=env)


def _texts(result) -> str:
    return " ".join(block.text for block in result.content)


def test_agent_lists_the_tools_searches_and_reads_a_parent(sample_store):
    question, caption = sample_store.table_questions()[0]
    expected = search(question, 3, store_settings=sample_store.settings)
    parent = get_parent(expected[0].parent_id, sample_store.settings)

    async def session():
        async with Client(_server(sample_store.settings.path), read_timeout_seconds=120) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            found = await client.call_tool("search", {"query": question, "k": 3})
            only = await client.call_tool("search", {"query": question, "k": 2, "doc_id": DOCS[1]})
            budget = await client.call_tool("search", {"query": question, "token_budget": 1})
            read = await client.call_tool("get_parent", {"parent_id": found.structured_content["result"][0]["parent_id"]})
            missing = await client.call_tool("get_parent", {"parent_id": "no-such-parent"})
            empty = await client.call_tool("search", {"query": "   "})
            too_many = await client.call_tool("search", {"query": question, "k": 500})
            return tools, found, only, budget, read, missing, empty, too_many

    tools, found, only, budget, read, missing, empty, too_many = anyio.run(session)

    assert set(tools) == {"search", "get_parent"}
    assert set(tools["search"].input_schema["properties"]) == {"query", "k", "token_budget", "doc_id"}
    assert "reciprocal-rank fusion" in tools["search"].description
    assert tools["get_parent"].input_schema["required"] == ["parent_id"]

    hits = found.structured_content["result"]
    assert not found.is_error
    assert hits == [h.model_dump() for h in expected]  # the same parents, text and scores as search
    assert hits[0]["caption"] == caption
    assert [h["doc_id"] for h in only.structured_content["result"]] == [DOCS[1]] * 2
    assert len(budget.structured_content["result"]) == 1

    assert not read.is_error and read.structured_content == parent.model_dump()
    assert caption in read.structured_content["text"]

    assert missing.is_error and "no parent 'no-such-parent'" in _texts(missing)
    assert empty.is_error and "the query is empty" in _texts(empty)
    assert too_many.is_error and "k must be at most 50, not 500" in _texts(too_many)
