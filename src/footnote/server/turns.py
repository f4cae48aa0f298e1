"""Composition of one chat turn: the chat pipeline over ask (mode `ask`) or the agent loop."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Sequence
from typing import Any

from footnote.agent.library_tools import LibraryContext, library_tools
from footnote.agent.loop import AgentConfig, AgentLoop
from footnote.events import Event, Final
from footnote.index import SearchFilters
from footnote.models.budget import Budget
from footnote.pipelines.chat import AnswerFn, ChatDeps, ChatPipeline, ChatTurn, verified_final
from footnote.pipelines.trace import Trace
from footnote.server.state import ServerState
from footnote.store.codec import answer_to_dict
from footnote.store.sessions import ChatMessage, User
from footnote.types import Hit


def labels_of(state: ServerState, messages: Sequence[ChatMessage]) -> tuple[str, ...]:
    """Labels of the sources cited by these messages' answers (they travel into prompts)."""
    ids = [
        str(c["id"]).split("#", 1)[0]
        for m in messages
        for s in ((m.data.get("answer") or {}).get("sentences") or [])
        for c in s.get("citations", [])
    ]
    labels: dict[str, None] = {}
    for block in state.ws.store.get_blocks(ids).values():
        record = state.ws.store.get_source(block.source_id)
        for label in record.source.labels if record else ():
            labels[label] = None
    return tuple(labels)


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
    trace = Trace(run_id, sink=state.runs.add_span)
    counter = itertools.count(1)

    def ask(question: str) -> AsyncIterator[Event]:
        child = f"{run_id}.ask{next(counter)}"
        events = state.ask()(
            question,
            sources=sources,
            user_groups=user.groups,
            user_id=user.id,
            session_id=turn.session_id,
            run_id=child,
        )
        state.sessions.link_runs(run_id, child)
        return events

    answer = ask if mode == "ask" else _agent(state, user, run_id, trace, ask, sources)
    deps = ChatDeps(
        memory=state.memory,
        answer=answer,
        settings=state.settings.chat,
        rewrite_model=state.model("rewrite"),
        summarise_model=state.model("summarise"),
        labels_for=lambda msgs: labels_of(state, msgs),
        trace=trace,
    )
    return ChatPipeline(deps).run(turn)


def _agent(
    state: ServerState,
    user: User,
    run_id: str,
    trace: Trace,
    ask: AnswerFn,
    sources: tuple[str, ...],
) -> Any:
    """The agent loop as an answer function; falls back to ask when no model is bound."""
    model = state.model("agent")
    if model is None:
        return ask
    loop = asyncio.get_running_loop()
    settings = state.settings

    async def collect(question: str) -> dict[str, Any]:
        final: dict[str, Any] = {}
        async for event in ask(question):
            if isinstance(event, Final):
                final = answer_to_dict(event.answer)
        return final

    def ask_sync(question: str) -> dict[str, Any]:
        return asyncio.run_coroutine_threadsafe(collect(question), loop).result()

    def search(query: str, k: int, filters: SearchFilters) -> list[Hit]:
        if sources and not filters.source_ids:
            filters = SearchFilters(source_ids=sources, user_groups=filters.user_groups)
        return state.ws.searcher.search(query, k=k, filters=filters)

    ctx = LibraryContext(state.ws.store, search, ask_sync, user.groups)
    tools = library_tools(ctx, cache_ttl_s=settings.agent.tool_cache_ttl_s, cache=state.tool_cache)

    def gate(question: str, text: str | None) -> AsyncIterator[Event]:
        if text is None:
            return ask(question)
        blocks = list(state.ws.store.get_blocks(list(ctx.seen)).values())
        return verified_final(question, text, blocks, settings)

    def run(question: str) -> AsyncIterator[Event]:
        agent = AgentLoop(
            model,
            tools,
            gate,
            config=AgentConfig(settings.agent.max_steps, settings.agent.max_retries),
            budget=Budget(settings.agent.max_tokens, None, settings.agent.max_seconds),
            span=trace.add,
            run_id=run_id,
            labels=lambda: tuple(ctx.labels),
        )
        return agent.run(question)

    return run
