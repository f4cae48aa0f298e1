"""Graph QA over HTTP: `GET /v1/graphs` (the graphs the caller may use) and
`POST /v1/graph/ask` (a `graph` run streamed as typed SSE events: intent, entities, cypher,
guard, rows, answer, …, done).

Who asks is decided here, from the API key's user: the principal and its row-filter
attributes come from the user's stored groups (`workspace.graph.principal_for`), never from
the request body, which accepts only the graph, the question and a conversation `session`
(any other field is a 422). A session's earlier turns are rebuilt from the caller's own runs
of that session (`X-Session-Id` names it; another user's session of the same name is not
theirs).
A graph the caller may not see answers 404, like a source. Each question is a run of the
run hub (events persisted, replayable at `/v1/runs/{id}/events`, spans in its trace).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette.event import ServerSentEvent
from sse_starlette.sse import EventSourceResponse

from footnote.errors import FootnoteError, NotFound
from footnote.events import Event
from footnote.server.auth import current_user
from footnote.server.errors import ApiError, not_found
from footnote.server.runs import SSE_HEADERS
from footnote.server.state import ServerState, get_state
from footnote.store.graph.base import GraphSpec
from footnote.store.records import User

router = APIRouter(prefix="/v1", tags=["graph"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]


class GraphOut(BaseModel):
    """A graph the caller may ask: its schema in brief, labels and ACL."""

    name: str
    description: str
    labels: list[str]
    acl_groups: list[str]
    node_labels: list[str]
    relationships: list[str]
    intents: list[str]
    restricted: list[str] = Field(description="Node labels whose rows are filtered per caller.")


class GraphAsk(BaseModel):
    """A question to one graph. The caller's permissions are not part of the request."""

    model_config = ConfigDict(extra="forbid")
    graph: str = Field(..., min_length=1, max_length=100)
    question: str = Field(..., min_length=1, max_length=2000)
    session: str | None = Field(
        None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$",
        description="A conversation: earlier questions of this session (the caller's own) "
        "are the history of this one. None: a new session (its id in `X-Session-Id`).",
    )  # fmt: skip


def _out(spec: GraphSpec) -> GraphOut:
    return GraphOut(
        name=spec.name, description=spec.description, labels=list(spec.labels),
        acl_groups=list(spec.acl_groups), node_labels=list(spec.nodes),
        relationships=list(spec.relationships), intents=list(spec.intents),
        restricted=list(spec.restricted),
    )  # fmt: skip


def visible_spec(state: ServerState, user: User, name: str) -> GraphSpec:
    """The spec of a graph the caller may use, or 404 (also for one they may not see)."""
    from footnote.workspace.graph import readable_graph

    try:
        return readable_graph(state.ws, name, user.groups)
    except NotFound as exc:
        raise not_found("graph") from exc


@router.get("/graphs", response_model=list[GraphOut])
async def list_graphs(state: State, user: Caller) -> list[GraphOut]:
    """The graphs the caller may ask (a graph's ACL groups follow the source rule)."""
    from footnote.workspace.graph import visible_graphs

    return [_out(s) for s in visible_graphs(state.ws, user.groups)]


def library_graph_name(user: User) -> str:
    """The name of a caller's own library graph (`library` for unrestricted callers)."""
    if user.groups is None:
        return "library"
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", user.id)[:40]
    return f"library-{safe}-{hashlib.sha256(user.id.encode()).hexdigest()[:6]}"


@router.post("/graphs/library", status_code=201, response_model=GraphOut)
async def build_library_graph(state: State, user: Caller) -> GraphOut:
    """(Re)build the caller's library graph from the sources the caller may read; it carries
    their labels and an ACL that admits only callers who may read every one of them."""
    from footnote.pipelines.graph.sources import library_graph

    name = library_graph_name(user)

    def build() -> GraphSpec:
        lib = library_graph(state.ws.store, user.groups)
        spec = lib.spec(name)
        state.ws.graph_catalog().create(spec, lib.nodes, lib.rels, replace=True)
        return spec

    return _out(await asyncio.to_thread(build))


def _history(state: ServerState, user_id: str, session: str, graph: str) -> tuple[Any, ...]:
    """The last turns of the caller's session on this graph, from the `turn` span of each of its
    recorded runs — whichever surface (HTTP, MCP, library, agent) started them."""
    from footnote.workspace.graph import session_history

    return session_history(
        state.ws, user_id, session.removeprefix("graph:"), graph, must_exist=False
    )


@router.post(
    "/graph/ask",
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def graph_ask(body: GraphAsk, state: State, user: Caller) -> EventSourceResponse:
    """Ask a graph; the reply is the run's SSE stream (`id`, `event` = type, JSON `data`).

    Events: status, intent, entities, cypher, guard (with the permission filters it
    injected and the server's LIMIT), rows, answer_delta, citation, verification, answer
    (status, sentences with their row footnotes, the Cypher, clarify options), final, done.
    """
    from footnote.pipelines.graph.qa import GraphRequest
    from footnote.store.records import new_id
    from footnote.workspace.graph import graph_pipeline, principal_for

    visible_spec(state, user, body.graph)
    state.quotas.start_run(user.id)
    try:
        models = state.deps.graph_models
        if models is None and not state.deps.use_models:
            models = {}
        pipe = graph_pipeline(state.ws, body.graph, user_groups=user.groups, owns_run=False,
                              models=models)  # fmt: skip
    except FootnoteError as exc:
        raise ApiError(422, str(exc)) from exc
    run_id = new_id("run")
    who = principal_for(user.id, user.groups)  # from the key's user, on the server
    session = body.session or new_id("gs")
    stored = f"graph:{session}"  # apart from chat sessions of the same id
    history = await asyncio.to_thread(_history, state, user.id, stored, body.graph)
    request = GraphRequest(body.question, who, run_id=run_id, history=history)

    async def events() -> AsyncIterator[Event]:
        try:
            async for event in pipe.run(request):
                yield event
        finally:
            pipe.close()

    state.hub.start(run_id, "graph", user.id, stored,
                    {"graph": body.graph, "question": body.question, "session": session},
                    events)  # fmt: skip

    async def frames() -> Any:
        async for ev in state.hub.follow(run_id, 0):
            yield ServerSentEvent(data=ev.data, event=ev.type, id=str(ev.seq))

    headers = {**SSE_HEADERS, "X-Run-Id": run_id, "X-Session-Id": session}
    return EventSourceResponse(frames(), ping=state.settings.server.sse_ping_s, headers=headers)
