"""One chat turn as the server runs it: the workspace composes it from the server's parts."""

from __future__ import annotations

from collections.abc import AsyncIterator

from footnote.events import Event
from footnote.pipelines.chat.pipeline import ChatTurn
from footnote.server.state import ServerState
from footnote.store.records import User
from footnote.workspace.chat import TurnParts, chat_turn


def turn_events(
    state: ServerState,
    *,
    user: User,
    turn: ChatTurn,
    run_id: str,
    mode: str,
    sources: tuple[str, ...],
) -> AsyncIterator[Event]:
    """The events of one turn (the run's background task iterates them)."""
    parts = TurnParts(
        memory=state.memory,
        ask=state.ask(),
        rewrite_model=state.model("rewrite"),
        summarise_model=state.model("summarise"),
        agent_model=state.model("agent"),
        judge_model=state.model("judge"),
        tool_cache=state.tool_cache,
    )
    return chat_turn(
        state.ws, parts, user=user, turn=turn, run_id=run_id, mode=mode, sources=sources
    )
