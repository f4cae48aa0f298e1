"""One graph conversation across surfaces (#33): a session begun with `POST /v1/graph/ask`
continues through the MCP tool `graph_ask` (and back), because both read the caller's earlier
turns of the same stored session. Real LadybugDB films graph, real SQLite runs and auth, the
MCP SDK's in-process client; no model (rules and templates)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client
from server_support import StubAsk, parse_sse, wait_run

from footnote.mcp.server import build_server
from footnote.server import create_app
from footnote.server.state import ServerDeps, ServerState
from footnote.store.graph.base import GraphSpec
from footnote.store.records import User
from footnote.workspace import Workspace
from footnote.workspace.api import Library

_path = Path(__file__).resolve().parents[2] / "data" / "graph_films.py"
_spec = importlib.util.spec_from_file_location("graph_films_surfaces", _path)
assert _spec is not None and _spec.loader is not None
films = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(films)
GROUPS = ("regions:US", "regions:EU")


@pytest.fixture()
def app_ws(tmp_path: Path) -> Iterator[tuple[TestClient, Workspace, dict[str, str]]]:
    ws = Workspace.open(tmp_path / "ws", overrides={"graph": {"understand": "rules",
                                                              "answer": "template"}})  # fmt: skip
    ws.graph_catalog().create(GraphSpec.model_validate(films.FILMS), films.NODES, films.RELS)
    app = create_app(ws, ServerDeps(ask=StubAsk(), use_models=False, graph_models={}))
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        state: ServerState = c.app.state.footnote  # type: ignore[attr-defined]
        yield c, ws, {"X-API-Key": state.auth.add_key("alice", GROUPS)}
    ws.close()


def http_ask(client: TestClient, key: dict[str, str], question: str, session: str) -> dict[str, Any]:  # fmt: skip
    body = {"graph": "films", "question": question, "session": session}
    with client.stream("POST", "/v1/graph/ask", json=body, headers=key) as resp:
        frames = parse_sse(resp.iter_lines())
        wait_run(client, resp.headers["x-run-id"], key)
    answer: dict[str, Any] = next(f["data"] for f in frames if f["event"] == "answer")
    return answer


async def mcp_ask(ws: Workspace, question: str, session: str) -> dict[str, Any]:
    server = build_server(lambda _ctx: Library(ws, User("alice", GROUPS), owns=False))
    async with Client(server) as client:
        got = await client.call_tool(
            "graph_ask", {"graph": "films", "question": question, "session": session}
        )
    assert not got.is_error, got.content
    out: dict[str, Any] = got.structured_content or {}
    return out


async def test_a_session_begun_over_http_continues_in_mcp(app_ws) -> None:  # type: ignore[no-untyped-def]
    client, ws, key = app_ws
    first = http_ask(client, key, "Which films did Ada Stone act in?", "s1")
    assert first["status"] == "answered"
    follow = await mcp_ask(ws, "and when was she born?", "s1")
    assert follow["status"] == "answered" and "1970" in follow["answer"], follow
    assert follow["session"] == "s1"


async def test_a_session_begun_in_mcp_continues_over_http(app_ws) -> None:  # type: ignore[no-untyped-def]
    client, ws, key = app_ws
    server = build_server(lambda _ctx: Library(ws, User("alice", GROUPS), owns=False))
    async with Client(server) as mcp:
        got = await mcp.call_tool(
            "graph_ask", {"graph": "films", "question": "When was Ada Stone born?"}
        )
    session = (got.structured_content or {})["session"]
    follow = http_ask(client, key, "and which films did she act in?", session)
    assert follow["status"] == "answered", follow
    assert "Red River" in follow["text"] and "Blue Lake" in follow["text"]
