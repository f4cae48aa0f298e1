"""The ReAct loop around a scripted model: tools, errors as observations, limits, the gate."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from footnote.agent.loop import AgentConfig, AgentLoop
from footnote.agent.tools import ToolRegistry
from footnote.errors import ToolRetry
from footnote.events import Done, Event, Final, Thinking, ToolCall, ToolResult
from footnote.models.budget import Budget
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.types import Answer, Sentence


def step(**kw: object) -> str:
    return json.dumps(kw)


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @reg.tool
    def search_library(query: str) -> list[dict[str, str]]:
        """Search."""
        if query == "bad":
            raise ToolRetry("query too vague")
        return [{"id": "b1", "text": f"found {query}"}]

    return reg


class Gate:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []

    def __call__(self, question: str, text: str | None) -> AsyncIterator[Event]:
        self.calls.append((question, text))
        return self._run(question, text)

    async def _run(self, question: str, text: str | None) -> AsyncIterator[Event]:
        yield Final(Answer(question, "answered", (Sentence(text or "fallback"),)))
        yield Done()


async def _run(script: list[str], **kw: object) -> tuple[list[Event], Gate, FakeChatModel]:
    fake = FakeChatModel(script)
    model = RoleModel("compose", fake, ledger=Ledger(), external=False)  # type: ignore[arg-type]
    gate = Gate()
    loop = AgentLoop(model, registry(), gate, **kw)  # type: ignore[arg-type]
    return [e async for e in loop.run("What was found?")], gate, fake


async def test_tool_step_then_final_through_the_gate() -> None:
    events, gate, fake = await _run(
        [
            step(thought="search first", tool="search_library", arguments={"query": "x"}),
            step(thought="done", final="It found x [b1]."),
        ]
    )
    kinds = [type(e) for e in events]
    assert kinds == [Thinking, ToolCall, ToolResult, Thinking, Final, Done]
    assert "found x" in events[2].output  # type: ignore[union-attr]
    assert gate.calls == [("What was found?", "It found x [b1].")]
    assert "found x" in fake.calls[1][-1].content  # the observation went back


async def test_errors_go_back_as_observations_with_limited_retries() -> None:
    bad = step(tool="search_library", arguments={"query": "bad"})
    events, gate, fake = await _run(
        [
            bad,
            "not json at all",
            step(tool="search_library", arguments={"qery": "x"}),
            bad,
            bad,
            step(final="nothing"),
        ],
        config=AgentConfig(max_steps=8, max_retries=3),
    )
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.error is not None for r in results] == [True, True, True, True]
    assert "invalid arguments" in (results[1].error or "")
    assert "failed 3 times" in (results[3].error or "")
    assert "not a valid step" in fake.calls[2][-1].content
    assert gate.calls[-1][1] == "nothing"


async def test_out_of_steps_or_budget_wraps_up_through_the_gate() -> None:
    loop_step = step(tool="search_library", arguments={"query": "x"})
    _, gate, _ = await _run([loop_step] * 3, config=AgentConfig(max_steps=3))
    assert gate.calls == [("What was found?", None)]
    _, gate, fake = await _run([loop_step] * 3, budget=Budget(max_calls=1))
    assert gate.calls == [("What was found?", None)] and len(fake.calls) == 1
