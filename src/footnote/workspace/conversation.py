"""One chat turn outside the HTTP server (terminal chat, the Python API, MCP): the same
chat pipeline, the same stored session, messages, run, events and trace as a server turn,
so the web app shows a conversation started in the terminal."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from footnote.events import Event, Final
from footnote.pipelines.chat.pipeline import ChatTurn
from footnote.pipelines.memory import ConversationMemory
from footnote.serialize import answer_to_dict, event_to_dict
from footnote.store.records import StoredEvent, User, new_id
from footnote.workspace.chat import TurnParts, chat_turn

if TYPE_CHECKING:
    from footnote.workspace.core import Workspace

_BATCHED = frozenset({"answer_delta", "thinking"})
MODES = ("ask", "agent")


def turn_parts(ws: Workspace, memory: ConversationMemory) -> TurnParts:
    """The parts of a turn from the workspace's own bindings (rewrite, summarise, agent)."""
    return TurnParts(
        memory=memory,
        ask=ws.ask,
        rewrite_model=ws.chat_role_model("rewrite"),
        summarise_model=ws.chat_role_model("summarise"),
        agent_model=ws.chat_role_model("agent"),
        judge_model=ws.chat_role_model("judge"),
    )


async def run_turn(
    ws: Workspace,
    parts: TurnParts,
    *,
    user: User,
    session_id: str,
    content: str,
    mode: str = "ask",
    sources: tuple[str, ...] = (),
) -> AsyncIterator[Event]:
    """Store the user's message, answer it with the chat pipeline and yield its events; the
    run, its events and the reply are persisted whether it completes, fails or is cancelled."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    memory = parts.memory
    run_id = new_id("run")
    message = await memory.add(user.id, session_id, "user", content, run_id=run_id)
    reply = await memory.add(user.id, session_id, "assistant", "", status="pending", run_id=run_id)
    ws.runs.start(
        run_id,
        "chat" if mode == "ask" else "agent",
        {"question": content, "mode": mode, "sources": list(sources)},
        user_id=user.id,
        session_id=session_id,
    )
    turn = ChatTurn(user.id, session_id, message, reply)
    pending: list[StoredEvent] = []
    seq, status, output = 0, "failed", None

    def flush() -> None:
        if pending:
            ws.events.add_events(run_id, list(pending))
            pending.clear()

    try:
        events = chat_turn(
            ws, parts, user=user, turn=turn, run_id=run_id, mode=mode, sources=sources
        )
        async for event in events:
            seq += 1
            data = event_to_dict(event, run_id=run_id)
            pending.append(StoredEvent(seq, event.type, json.dumps(data, default=str)))
            if event.type not in _BATCHED:
                flush()
            if isinstance(event, Final):
                output = answer_to_dict(event.answer, run_id=run_id)
            yield event
        status = "completed"
    except (asyncio.CancelledError, GeneratorExit):
        status = "cancelled"
        raise
    finally:
        flush()
        ws.runs.finish(run_id, status, output)
