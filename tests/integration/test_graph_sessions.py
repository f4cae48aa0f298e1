"""Graph conversations outside `/v1/graph/ask` (#33): the Python library's `graph_ask`, the
MCP tool `graph_ask` (the SDK's client, in process) and the chat agent's `graph_query` take
the conversation, so "and which films did she act in?" after "When was Ada Stone born?"
resolves; a session of another user is refused like a missing one. A real workspace (SQLite
runs, LadybugDB graph), rules and templates only (no model bound)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from live import add_films
from mcp import Client

from footnote.errors import LicenceRefused, NotFound
from footnote.events import ToolResult
from footnote.mcp.server import build_server
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.memory import ConversationMemory, LocalWindow
from footnote.pipelines.trace import Trace
from footnote.store.records import User
from footnote.workspace import Workspace
from footnote.workspace.api import Library
from footnote.workspace.chat import TurnParts, _agent

pytestmark = pytest.mark.integration
FIRST = "When was Ada Stone born?"
FOLLOW = "and which films did she act in?"
NO_MODELS = {r: {"url": ""} for r in ("understand", "cypher", "cypher_fallback", "compose",
                                      "judge", "embed")}  # fmt: skip
ALICE, BOB = User("alice", ("user:alice", "regions:EU", "regions:US")), User("bob", ("user:bob",))


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    w = Workspace.open(tmp_path_factory.mktemp("gs") / "ws", overrides={"models": NO_MODELS})
    add_films(w)
    yield w
    w.close()


def films(out: dict[str, Any]) -> set[str]:
    return {str(r.get("title")) for r in out["rows"]}


async def test_the_library_keeps_a_graph_conversation(ws: Workspace) -> None:
    alice = Library(ws, ALICE, owns=False)
    first = await alice.agraph_ask("films", FIRST)
    assert first["status"] == "answered" and first["session"], first
    follow = await alice.agraph_ask("films", FOLLOW, session=first["session"])
    assert follow["status"] == "answered", follow["reason"]
    assert films(follow) == {"Red River", "Blue Lake"} and follow["session"] == first["session"]
    alone = await alice.agraph_ask("films", FOLLOW)  # no conversation: nobody to refer to
    assert alone["status"] != "answered" and alone["session"] != first["session"]
    bob = Library(ws, BOB, owns=False)
    with pytest.raises(NotFound) as theirs:
        await bob.agraph_ask("films", FOLLOW, session=first["session"])
    with pytest.raises(NotFound) as missing:
        await bob.agraph_ask("films", FOLLOW, session="gs_nosuchsession")
    assert str(theirs.value).replace(first["session"], "S") == str(missing.value).replace(
        "gs_nosuchsession", "S"
    )


async def test_mcp_graph_ask_takes_a_session(ws: Workspace) -> None:
    alice = build_server(lambda _ctx: Library(ws, ALICE, owns=False))
    bob = build_server(lambda _ctx: Library(ws, BOB, owns=False))
    async with Client(alice) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "graph_ask")
        assert "session" in tool.input_schema["properties"]
        first = await client.call_tool("graph_ask", {"graph": "films", "question": FIRST})
        session = first.structured_content["session"]
        follow = await client.call_tool(
            "graph_ask", {"graph": "films", "question": FOLLOW, "session": session}
        )
        assert not follow.is_error and follow.structured_content["status"] == "answered"
        assert films(follow.structured_content) == {"Red River", "Blue Lake"}
    async with Client(bob) as client:
        theirs = await client.call_tool(
            "graph_ask", {"graph": "films", "question": FOLLOW, "session": session}
        )
        missing = await client.call_tool(
            "graph_ask", {"graph": "films", "question": FOLLOW, "session": "gs_nosuchsession"}
        )
    assert theirs.is_error and missing.is_error
    said = theirs.content[0].text.replace(session, "S")  # type: ignore[union-attr]
    assert said == missing.content[0].text.replace("gs_nosuchsession", "S")  # type: ignore[union-attr]
    assert "Red River" not in said


def step(**kw: object) -> str:
    return json.dumps(kw)


async def agent_turn(ws: Workspace, session_id: str, run_id: str, script: list[str]) -> list[str]:
    """One agent turn of chat session `session_id` whose model follows `script`; the tool
    outputs it observed."""
    ws.runs.start(run_id, "chat", {"content": "q"}, user_id=ALICE.id, session_id=session_id)
    memory = ConversationMemory(ws.chats, LocalWindow(20, 60), ws.settings.chat)
    parts = TurnParts(memory=memory, ask=lambda *a, **k: None)
    parts.agent_model = RoleModel("compose", FakeChatModel([*script, script[-1]]),  # type: ignore[arg-type]
                                  ledger=Ledger(), external=False)  # fmt: skip
    run = _agent(ws, parts, ALICE, run_id, Trace(run_id), lambda q: None, (), session_id)  # type: ignore[arg-type,return-value]
    return [e.output for e in [e async for e in run("q")] if isinstance(e, ToolResult)]


async def test_the_agents_graph_query_follows_the_chat(ws: Workspace) -> None:
    """Within a turn and across turns of one chat session the agent's graph questions are a
    conversation; another chat session starts afresh."""
    ask = step(tool="graph_query", arguments={"graph": "films", "question": FIRST})
    follow = step(tool="graph_query", arguments={"question": FOLLOW})  # the only graph
    same = await agent_turn(ws, "ses_a", "run_a1", [ask, follow, step(final="done")])
    assert "1970" in same[0] and "Red River" in same[1] and "Blue Lake" in same[1], same
    later = await agent_turn(ws, "ses_a", "run_a2", [follow, step(final="done")])
    assert "Red River" in later[0] and '"status": "answered"' in later[0], later
    other = await agent_turn(ws, "ses_b", "run_b1", [follow, step(final="done")])
    assert "Red River" not in other[0] and '"status": "answered"' not in other[0]
    assert ws.runs.run_family("run_a1") == ["run_a1", "run_a1.graph1", "run_a1.graph2"]


async def test_a_labelled_graphs_rows_never_reach_an_external_agent(ws: Workspace) -> None:
    """After `graph_query` showed rows of a graph labelled `no-external-model`, the agent's
    next model call carries that label: an external agent model is not called again."""
    from footnote.models.roles import NO_EXTERNAL
    from footnote.store.graph.base import GraphSpec

    spec = ws.graph_catalog().spec("films").model_dump()
    films_data = __import__("sys").modules["graph_films"]
    private = GraphSpec.model_validate({**spec, "name": "films-private", "labels": [NO_EXTERNAL]})
    ws.graph_catalog().create(private, films_data.NODES, films_data.RELS, replace=True)
    ask = step(tool="graph_query", arguments={"graph": "films-private", "question": FIRST})
    fake = FakeChatModel([ask, step(final="Ada Stone was born in 1970.")])
    ws.runs.start("run_p", "chat", {"content": "q"}, user_id=ALICE.id, session_id="ses_p")
    memory = ConversationMemory(ws.chats, LocalWindow(20, 60), ws.settings.chat)
    parts = TurnParts(memory=memory, ask=lambda *a, **k: None)
    parts.agent_model = RoleModel("compose", fake, ledger=Ledger(), external=True)  # type: ignore[arg-type]

    async def fallback(question: str):  # type: ignore[no-untyped-def]
        from footnote.events import Done, Final
        from footnote.types import Answer

        yield Final(Answer(question, "refused", ()))
        yield Done()

    run = _agent(ws, parts, ALICE, "run_p", Trace("run_p"), fallback, (), "ses_p")
    shown = []
    with pytest.raises(LicenceRefused):  # the next call is refused, not sent
        async for e in run("q"):
            shown += [e.output] if isinstance(e, ToolResult) else []
    assert "1970" in shown[0] and len(fake.calls) == 1
