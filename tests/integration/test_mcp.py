"""The MCP server end to end with the SDK's own client: stdio (`footnote mcp` as a
subprocess) and streamable HTTP (`/mcp` on the API under uvicorn) with API keys and the
same per-user scoping as the REST API. The pipeline is real (extractive ask, WordLlama)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from live import LiveServer, add_films, study_workspace
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from footnote.mcp import mount_mcp
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration
SRC = Path(__file__).resolve().parents[2] / "src"
QUESTION = "What recall@10 did hybrid retrieval reach?"
TOOLS = {"ask", "search", "read_block", "read_section", "graph_ask", "research"}
RESEARCH = {"question": "How well did hybrid retrieval perform, and what was the internal project budget?",
            "template": "literature_review", "web": False}  # fmt: skip


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data: dict[str, Any] = result.structured_content
    return data


async def exercise(client: Client, ws_paper: str) -> None:
    """What any client can do: list, ask, search, read, resources."""
    tools = await client.list_tools()
    assert {t.name for t in tools.tools} >= TOOLS
    ask_tool = next(t for t in tools.tools if t.name == "ask")
    assert ask_tool.output_schema and "citations" in ask_tool.output_schema["properties"]
    answer = structured(await client.call_tool("ask", {"question": QUESTION}))
    assert answer["status"] == "answered" and answer["support_score"] > 0
    assert "0.74" in answer["answer"] and "[1]" in answer["answer"]
    first = answer["citations"][0]
    assert first["verdict"] == "supported" and first["page"] == 1 and "0.74" in first["quote"]
    assert first["section"][-1] == "Results" and first["title"] == "Retrieval study"
    assert answer["sentences"][0]["cites"] == [1]
    hits = structured(await client.call_tool("search", {"query": "reciprocal rank fusion", "k": 2}))
    assert len(hits["hits"]) == 2 and "fusion" in hits["hits"][0]["text"]
    block = structured(await client.call_tool("read_block", {"block_id": first["id"]}))
    assert block["text"].startswith("Hybrid retrieval reached") and block["page"] == 1
    section = structured(
        await client.call_tool("read_section", {"source": ws_paper, "section": "method"})
    )
    assert section["section"][-1] == "Method" and len(section["blocks"]) == 2
    missing = await client.call_tool("read_block", {"block_id": "00000000-p1-000000"})
    assert missing.is_error
    listing = await client.read_resource("footnote://sources")
    titles = {s["title"] for s in json.loads(listing.contents[0].text)}  # type: ignore[union-attr]
    assert "Retrieval study" in titles
    outline = await client.read_resource(f"footnote://sources/{ws_paper}")
    sections = json.loads(outline.contents[0].text)["sections"]  # type: ignore[union-attr]
    assert sections[0]["title"] == "Retrieval study"
    one = await client.read_resource(f"footnote://blocks/{first['id']}")
    assert json.loads(one.contents[0].text)["id"] == first["id"]  # type: ignore[union-attr]


def paper_id(ws: Workspace) -> str:
    return next(r.source.id for r in ws.store.list_sources() if not r.source.acl_groups)


def memo_id(ws: Workspace) -> str:
    return next(r.source.id for r in ws.store.list_sources() if r.source.acl_groups)


async def test_stdio(tmp_path: Path) -> None:
    ws = study_workspace(tmp_path, secret=True)
    paper, memo = paper_id(ws), memo_id(ws)
    memo_block = next(b.id for b in ws.store.iter_blocks(memo) if "48,000" in b.text)
    key = ws.auth.add_key("bob", ())
    add_films(ws)
    ws.close()
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "footnote.cli", "mcp", "-w", str(tmp_path / "ws")],
        env=env,
    )  # fmt: skip
    async with Client(params) as client:
        await exercise(client, paper)
        # the local user reads everything on stdio
        block = structured(await client.call_tool("read_block", {"block_id": memo_block}))
        assert "48,000" in block["text"]
        graph = structured(
            await client.call_tool(
                "graph_ask",
                {"graph": "films", "question": "When was Ada Stone born?"},
            )
        )
        assert graph["status"] == "answered" and "1970" in graph["answer"], graph
        assert graph["cypher"].startswith("MATCH")
    # as an API key's user, the memo does not exist
    scoped = StdioServerParameters(
        command=sys.executable,
        args=["-m", "footnote.cli", "mcp", "-w", str(tmp_path / "ws"), "--api-key", key],
        env=env,
    )
    async with Client(scoped) as client:
        listing = await client.read_resource("footnote://sources")
        ids = {s["id"] for s in json.loads(listing.contents[0].text)}  # type: ignore[union-attr]
        assert ids == {paper}
        budget = await client.call_tool("ask", {"question": "What was the internal budget?"})
        assert "48,000" not in structured(budget)["answer"]
        hidden = await client.call_tool("read_block", {"block_id": memo_block})
        assert hidden.is_error and "no block" in hidden.content[0].text  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def http(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, str], Workspace]]:
    ws = study_workspace(tmp_path_factory.mktemp("mcp"), secret=True)
    keys = {"alice": ws.auth.add_key("alice", ("staff",)), "bob": ws.auth.add_key("bob", ())}
    app = create_app(ws, ServerDeps(use_models=False))
    mount_mcp(app, ws)
    with LiveServer(app) as srv:
        yield srv.url, keys, ws
    ws.close()


def http_client(url: str, key: str | None) -> Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0))
    return Client(streamable_http_client(url + "/mcp", http_client=http))


async def test_streamable_http_with_keys(http: Any) -> None:
    url, keys, ws = http
    async with http_client(url, keys["bob"]) as client:
        await exercise(client, paper_id(ws))
    memo = memo_id(ws)
    memo_block = next(b.id for b in ws.store.iter_blocks(memo) if "48,000" in b.text)
    async with http_client(url, keys["alice"]) as staff:
        block = structured(await staff.call_tool("read_block", {"block_id": memo_block}))
        assert "48,000" in block["text"]
        scoped = structured(
            await staff.call_tool(
                "ask", {"question": "What was the internal project budget?", "sources": [memo]}
            )
        )
        assert "48,000" in scoped["answer"] and scoped["citations"][0]["source_id"] == memo
        brief = structured(await staff.call_tool("research", RESEARCH))
        assert "48,000" in brief["brief"] and "0.74" in brief["brief"]
        claims = [c for ch in brief["chapters"] for c in ch["claims"]]
        assert claims and all(c["cards"] and c["verdict"] in ("supported", "weak") for c in claims)
        quoted = {brief["cards"][n - 1]["quote"] for c in claims for n in c["cards"]}
        assert any("48,000" in q for q in quoted) and 0 < brief["support_score"] <= 1
        assert brief["run_id"] and brief["not_covered"] and brief["withheld"] == []
    async with http_client(url, keys["bob"]) as outsider:
        tools = await outsider.list_tools()
        schema = next(t for t in tools.tools if t.name == "research").output_schema
        assert schema and {"chapters", "cards", "support_score"} <= set(schema["properties"])
        theirs = structured(await outsider.call_tool("research", RESEARCH))
        assert "48,000" not in json.dumps(theirs) and "0.74" in theirs["brief"]
        refused = await outsider.call_tool("read_block", {"block_id": memo_block})
        assert refused.is_error
        text = refused.content[0].text  # type: ignore[union-attr]
        assert "no block" in text and "48,000" not in text
        hits = structured(await outsider.call_tool("search", {"query": "internal project budget"}))
        assert all(h["source_id"] != memo for h in hits["hits"])


def test_http_refuses_missing_or_bad_keys(http: Any) -> None:
    url, _, _ = http
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    headers = {"Accept": "application/json, text/event-stream"}
    for extra in ({}, {"Authorization": "Bearer wrong"}):
        resp = httpx.post(url + "/mcp", json=init, headers={**headers, **extra}, timeout=10)
        assert resp.status_code == 401
        assert resp.json()["error"]["code"] == "unauthorized"
