"""The agent's library tools inside a session scoped to some sources (issue #15): a real
workspace (SQLite, FTS5, wordllama vectors), the real tool registry and shared cache, a
scripted model choosing the tool calls; plus concurrent turns that each wait on an ask."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from footnote.events import Done, Event, Final, ToolResult
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.memory import ConversationMemory, LocalWindow
from footnote.pipelines.trace import Trace
from footnote.store.records import User
from footnote.types import Answer, Sentence
from footnote.workspace import Workspace
from footnote.workspace.chat import TurnParts, _agent

ALPHA = "# Alpha study\n\nThe alpha cohort measured glacier retreat at 41 metres per year.\n"
BETA = "# Beta study\n\nThe beta cohort measured glacier retreat at 12 metres per year.\n"


@pytest.fixture()
def ws(tmp_path: Path):  # type: ignore[no-untyped-def]
    w = Workspace.open(tmp_path / "ws", overrides={"models": {"embed": {"url": "local:wordllama"}}})
    for name, text in (("alpha.md", ALPHA), ("beta.md", BETA)):
        (tmp_path / name).write_text(text)
    report = w.ingest([tmp_path / "alpha.md", tmp_path / "beta.md"])
    assert not report.failed
    yield w
    w.close()


def ids(ws: Workspace) -> dict[str, str]:
    return {r.source.title.split()[0].lower(): r.source.id for r in ws.store.list_sources()}


def step(**kw: object) -> str:
    return json.dumps(kw)


async def stub_ask(question: str) -> AsyncIterator[Event]:
    await asyncio.sleep(0)
    yield Final(Answer(question, "answered", (Sentence("stub"),)))
    yield Done()


async def turn(ws: Workspace, parts: TurnParts, script: list[str], sources: tuple[str, ...],
               ask=stub_ask) -> list[ToolResult]:  # type: ignore[no-untyped-def]  # fmt: skip
    script = [*script, script[-1]]  # a final answer that fails the checks is revised once
    parts.agent_model = RoleModel("compose", FakeChatModel(script), ledger=Ledger(),  # type: ignore[arg-type]
                                  external=False)  # fmt: skip
    run = _agent(ws, parts, User("u", ("g",)), "run_x", Trace("run_x"), ask, sources)
    return [e async for e in run("q") if isinstance(e, ToolResult)]


def parts_for(ws: Workspace) -> TurnParts:
    memory = ConversationMemory(ws.chats, LocalWindow(20, 60), ws.settings.chat)
    return TurnParts(memory=memory, ask=lambda *a, **k: stub_ask("q"))


async def test_tools_stay_inside_the_sessions_sources(ws: Workspace) -> None:
    src = ids(ws)
    beta_block = next(ws.store.iter_blocks(src["beta"])).id
    parts = parts_for(ws)
    results = await turn(ws, parts, [
        step(tool="read_block", arguments={"block_id": beta_block}),
        step(tool="read_section", arguments={"source_id": src["beta"], "section": "Beta"}),
        step(tool="search_library", arguments={"query": "glacier retreat", "source_id": src["beta"]}),
        step(tool="list_sources", arguments={}),
        step(tool="search_library", arguments={"query": "glacier retreat"}),
        step(final="done"),
    ], sources=(src["alpha"],))  # fmt: skip
    read_block, read_section, widened, listed, searched = results
    for r in (read_block, read_section, widened):
        assert r.error and "beta" not in r.output.lower(), r
    assert [s["id"] for s in json.loads(listed.output)] == [src["alpha"]]
    assert "alpha" in searched.output.lower() and "beta" not in searched.output.lower()


async def test_cached_results_never_cross_scopes(ws: Workspace) -> None:
    src = ids(ws)
    parts = parts_for(ws)  # one tool cache shared by the server's turns
    script = [step(tool="search_library", arguments={"query": "glacier retreat"}), step(final="x")]
    first = await turn(ws, parts, list(script), sources=(src["alpha"],))
    second = await turn(ws, parts, list(script), sources=(src["beta"],))
    assert "alpha" in first[0].output.lower()
    assert "beta" in second[0].output.lower() and "alpha" not in second[0].output.lower()


async def test_concurrent_turns_waiting_on_asks_do_not_deadlock(ws: Workspace) -> None:
    """Eight agent turns call answer_from_library at once while the loop's default executor
    has two threads, and every ask needs that executor (as the ask pipeline's searches do)."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=2))

    async def ask_in_thread(question: str) -> AsyncIterator[Event]:
        await asyncio.to_thread(ws.searcher.search, question, k=2)
        yield Final(Answer(question, "answered", (Sentence("found"),)))
        yield Done()

    script = [step(tool="answer_from_library", arguments={"question": "glacier?"}),
              step(final="done")]  # fmt: skip
    turns = [turn(ws, parts_for(ws), list(script), (), ask=ask_in_thread) for _ in range(8)]
    results = await asyncio.wait_for(asyncio.gather(*turns), timeout=60)
    assert all(r[0].error is None and "answered" in r[0].output for r in results)
