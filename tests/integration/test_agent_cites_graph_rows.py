"""The chat agent's final answer cites the rows its `graph_query` returned in the same run
(#33): a real workspace (SQLite runs, LadybugDB `films` graph, the graph pipeline on rules and
templates), the agent's model scripted. A row id is citable only in the turn that showed it;
a sentence that adds what the row lacks is dropped by the graph gate's rule."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from live import add_films

from footnote.events import Event, Final, ToolResult, Verification
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.memory import ConversationMemory, LocalWindow
from footnote.pipelines.trace import Trace
from footnote.store.records import User
from footnote.workspace import Workspace
from footnote.workspace.chat import TurnParts, _agent

pytestmark = pytest.mark.integration
QUESTION = "Which films did Ada Stone act in?"
NO_MODELS = {r: {"url": ""} for r in ("understand", "cypher", "cypher_fallback", "compose",
                                      "judge", "embed")}  # fmt: skip
ALICE = User("alice", ("user:alice", "regions:EU", "regions:US"))


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    w = Workspace.open(tmp_path_factory.mktemp("gc") / "ws", overrides={"models": NO_MODELS})
    add_films(w)
    yield w
    w.close()


def step(**kw: object) -> str:
    return json.dumps(kw)


async def turn(ws: Workspace, session: str, run_id: str, script: list[str]) -> list[Event]:
    ws.runs.start(run_id, "chat", {"content": QUESTION}, user_id=ALICE.id, session_id=session)
    memory = ConversationMemory(ws.chats, LocalWindow(20, 60), ws.settings.chat)
    parts = TurnParts(memory=memory, ask=lambda *a, **k: None)
    parts.agent_model = RoleModel("compose", FakeChatModel([*script, script[-1]]),  # type: ignore[arg-type]
                                  ledger=Ledger(), external=False)  # fmt: skip

    async def fallback(question: str):  # type: ignore[no-untyped-def]  # steps ran out
        from footnote.events import Done
        from footnote.types import Answer

        yield Final(Answer(question, "refused", ()))
        yield Done()

    run = _agent(ws, parts, ALICE, run_id, Trace(run_id), fallback, (), session)
    return [e async for e in run(QUESTION)]


def final(events: list[Event]) -> Final:
    return next(e for e in events if isinstance(e, Final))


QUERY = step(tool="graph_query", arguments={"question": QUESTION})


async def test_the_agent_cites_a_graph_row(ws: Workspace) -> None:
    good = step(final="Ada Stone acted in Blue Lake (1999) [graph:1:0].")
    events = await turn(ws, "ses_c1", "run_c1", [QUERY, good])
    shown = next(e.output for e in events if isinstance(e, ToolResult))
    assert '"id": "graph:1:0"' in shown and "Blue Lake" in shown
    answer = final(events).answer
    assert answer.status == "answered", answer.reason
    (cite,) = [c for s in answer.sentences for c in s.citations]
    assert cite.evidence_id == "graph:1:0" and "Blue Lake" in cite.quote
    assert cite.checks["words"] == "present" and cite.checks["names"] == "present"


async def test_an_invented_attribute_is_not_let_through(ws: Workspace) -> None:
    bad = step(final="Ada Stone starred in the comedy Blue Lake (1999) [graph:1:0].")
    events = await turn(ws, "ses_c2", "run_c2", [QUERY, bad, bad])  # revised once, same again
    assert final(events).answer.status != "answered"
    said = [e for e in events if isinstance(e, Verification)]
    assert said and all(v.verdict == "unsupported" for v in said)
    assert any("comedy" in v.reasons.get("words", "") for v in said)


async def test_rows_of_an_earlier_turn_are_not_citable(ws: Workspace) -> None:
    good = step(final="Ada Stone acted in Blue Lake (1999) [graph:1:0].")
    first = await turn(ws, "ses_c3", "run_c3a", [QUERY, good])
    assert final(first).answer.status == "answered"
    later = await turn(ws, "ses_c3", "run_c3b", [good, good])  # no graph_query in this run
    assert final(later).answer.status != "answered"
    assert {v.verdict for v in later if isinstance(v, Verification)} == {"fabricated"}


async def test_row_ids_follow_the_graph_runs(ws: Workspace) -> None:
    """`graph:<call>:<row>`: the call number counts every answered graph question of the run,
    rows or none, so it names the graph run `<run>.graph<call>`."""
    empty = step(tool="graph_query", arguments={"question": "Which films were made in 2050?"})
    good = step(final="Ada Stone acted in Blue Lake (1999) [graph:2:0].")
    events = await turn(ws, "ses_c4", "run_c4", [empty, QUERY, good])
    outputs = [json.loads(e.output) for e in events if isinstance(e, ToolResult)]
    assert outputs[0]["rows"] == [] and outputs[1]["rows"][0]["id"] == "graph:2:0"
    assert final(events).answer.status == "answered"
    assert ws.runs.run_family("run_c4") == ["run_c4", "run_c4.graph1", "run_c4.graph2"]
