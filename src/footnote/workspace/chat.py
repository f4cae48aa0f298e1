"""Composition of one chat turn: the chat pipeline over ask (mode `ask`) or the agent loop,
with the agent's library tools, their cache and the verification gate of its final answer."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footnote.agent.library_tools import LibraryContext, library_tools
from footnote.agent.loop import AgentConfig, AgentLoop
from footnote.agent.paper_tools import add_paper_tools
from footnote.events import Event, Final
from footnote.index import SearchFilters
from footnote.models.budget import Budget
from footnote.models.roles import NO_EXTERNAL
from footnote.pipelines.chat.pipeline import AnswerFn, ChatDeps, ChatPipeline, ChatTurn
from footnote.pipelines.graph.agent_cite import GraphRowsShown, verify_agent_answer
from footnote.pipelines.memory import ConversationMemory
from footnote.pipelines.trace import Trace
from footnote.serialize import answer_to_dict
from footnote.store.records import ChatMessage, User
from footnote.types import Hit
from footnote.verify import Judge, Thresholds
from footnote.workspace.reproduce import (
    add_reproduce_tools,
    computation_blocks,
    with_computation_inputs,
)
from footnote.workspace.research import paper_search

if TYPE_CHECKING:
    from footnote.models import RoleModel
    from footnote.workspace.core import Workspace

AskFn = Callable[..., AsyncIterator[Event]]
"""`ask(question, *, sources, user_groups, user_id, session_id, run_id)` like `Workspace.ask`."""


@dataclass
class TurnParts:
    """What a turn is built from besides the workspace: the conversation memory, the ask entry
    point and the chat models (each injectable by the server's caller), the tool cache."""

    memory: ConversationMemory
    ask: AskFn
    rewrite_model: RoleModel | None = None
    summarise_model: RoleModel | None = None
    agent_model: RoleModel | None = None
    judge_model: RoleModel | None = None
    """Judges the agent's final answer, as the judge role judges ask's (None: overlap only)."""
    tool_cache: dict[str, tuple[float, str]] = field(default_factory=dict)


def labels_of(ws: Workspace, messages: Sequence[ChatMessage]) -> tuple[str, ...]:
    """Labels of the sources cited by these messages' answers, read as a reply is produced and
    kept with it (`ChatMessage.labels`); a cited block or source that cannot be read counts as
    `no-external-model`."""
    ids = [
        str(c["id"]).split("#", 1)[0]
        for m in messages
        for s in ((m.data.get("answer") or {}).get("sentences") or [])
        for c in s.get("citations", [])
    ]
    blocks = ws.store.get_blocks(ids)
    labels: dict[str, None] = {NO_EXTERNAL: None} if set(ids) - set(blocks) else {}
    for block in blocks.values():
        record = ws.store.get_source(block.source_id)
        for label in record.source.labels if record else (NO_EXTERNAL,):
            labels[label] = None
    return tuple(labels)


def question_may_ask(ws: Workspace, mode: str, labels: tuple[str, ...]) -> bool:
    """Whether a question carrying `labels` may go to every model a turn's answer sends it
    to: the query embedder, the reranker, ask's compose and judge; in `agent` mode every
    role (its tools reach graph and research models too). Those calls carry the evidence's
    labels, not the question's, so rerouting does not help: the models must all be local."""
    if NO_EXTERNAL not in labels:
        return True
    bound = ws.models.bindings()
    roles = ("embed", "rerank", "compose", "judge") if mode == "ask" else tuple(bound)
    return not any(bound[r].external for r in roles if r in bound)


def chat_turn(
    ws: Workspace,
    parts: TurnParts,
    *,
    user: User,
    turn: ChatTurn,
    run_id: str,
    mode: str,
    sources: tuple[str, ...],
) -> AsyncIterator[Event]:
    """The events of one turn (the run's background task iterates them): the chat pipeline
    over ask (mode `ask`) or over the agent loop, each ask a child run linked to the turn."""
    trace = Trace(run_id, sink=ws.runs.add_span)
    counter = itertools.count(1)

    def ask(question: str) -> AsyncIterator[Event]:
        child = f"{run_id}.ask{next(counter)}"
        events = parts.ask(
            question,
            sources=sources,
            user_groups=user.groups,
            user_id=user.id,
            session_id=turn.session_id,
            run_id=child,
        )
        ws.runs.link_runs(run_id, child)
        return events

    answer = (
        ask
        if mode == "ask"
        else _agent(ws, parts, user, run_id, trace, ask, sources, turn.session_id)
    )
    deps = ChatDeps(
        memory=parts.memory,
        answer=answer,
        settings=ws.settings.chat,
        rewrite_model=parts.rewrite_model,
        summarise_model=parts.summarise_model,
        labels_for=lambda msgs: labels_of(ws, msgs),
        may_ask=lambda labels: question_may_ask(ws, mode, labels),
        trace=trace,
    )
    return ChatPipeline(deps).run(turn)


def _agent(
    ws: Workspace,
    parts: TurnParts,
    user: User,
    run_id: str,
    trace: Trace,
    ask: AnswerFn,
    sources: tuple[str, ...],
    session_id: str = "",
) -> Any:
    """The agent loop as an answer function; falls back to ask when no model is bound. Its
    `graph_query` converses in the chat session's graph conversation (`session_id`)."""
    model = parts.agent_model
    if model is None:
        return ask
    loop = asyncio.get_running_loop()
    settings = ws.settings

    async def collect(question: str) -> dict[str, Any]:
        final: dict[str, Any] = {}
        async for event in ask(question):
            if isinstance(event, Final):
                final = answer_to_dict(event.answer)
        return final

    def ask_sync(question: str) -> dict[str, Any]:
        return asyncio.run_coroutine_threadsafe(collect(question), loop).result()

    def search(query: str, k: int, filters: SearchFilters) -> list[Hit]:
        return ws.searcher.search(query, k=k, filters=filters)

    ctx = LibraryContext(ws.store, search, ask_sync, user.groups, sources)
    tools = library_tools(ctx, cache_ttl_s=settings.agent.tool_cache_ttl_s, cache=parts.tool_cache)
    computed = add_reproduce_tools(ws, ctx, tools, loop)
    add_paper_tools(tools, paper_search(settings.research))  # the research job's scholarly search
    from footnote.workspace.graph import add_agent_graph_tool

    graph_rows = GraphRowsShown()  # rows graph_query shows in this run: citable by id
    add_agent_graph_tool(ws, tools, user, session_id=session_id or run_id, run_id=run_id,
                         loop=loop, labels=ctx.labels, shown=graph_rows)  # fmt: skip

    judge = _judge(parts.judge_model, settings.ask.use_judge, lambda: tuple(ctx.labels), trace)

    def verify_final(question: str, text: str | None) -> AsyncIterator[Event]:
        if text is None:
            return ask(question)
        blocks = list(ws.store.get_blocks(list(ctx.seen)).values()) + computation_blocks(computed)
        thresholds = Thresholds(settings.verify.supported_threshold, settings.verify.weak_threshold)
        checked = verify_agent_answer(
            question, text, blocks, graph_rows, thresholds=thresholds, judge=judge,
            span=trace.span,
        )  # fmt: skip
        return with_computation_inputs(checked, computed, ws.store)

    def run(question: str) -> AsyncIterator[Event]:
        agent = AgentLoop(
            model,
            tools,
            verify_final,
            config=AgentConfig(settings.agent.max_steps, settings.agent.max_retries),
            budget=Budget(settings.agent.max_tokens, None, settings.agent.max_seconds),
            span=trace.add,
            run_id=run_id,
            labels=lambda: tuple(ctx.labels),
        )
        return agent.run(question)

    return run


def _judge(
    model: RoleModel | None, use: bool, labels: Callable[[], tuple[str, ...]], trace: Trace
) -> Judge | None:
    """The judge role as the gate's `judge(claim, passage)`, each call traced."""
    if model is None or not use:
        return None
    from footnote.models import judge_support

    def judge(claim: str, passage: str) -> float:
        with trace.span("model", "judge", role="judge", claim=claim) as span:
            p = float(judge_support(model, claim, passage, labels=labels(), run_id=trace.run_id))
            span["p_yes"] = p
        return p

    return judge
