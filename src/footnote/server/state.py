"""The server's state: the workspace, stores, run hub, memory and the injectable model deps."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import Request

from footnote.config import Settings
from footnote.events import Event
from footnote.pipelines.memory import ConversationMemory, MessageWindow, make_window
from footnote.server.runner import RunHub
from footnote.store.runs import RunStore
from footnote.store.sessions import SessionStore
from footnote.workspace import Workspace

if TYPE_CHECKING:
    from footnote.models import RoleModel

AskFn = Callable[..., AsyncIterator[Event]]
"""`ask(question, *, sources, user_groups, user_id, session_id, run_id)` like `Workspace.ask`."""


@dataclass
class ServerDeps:
    """Explicit dependencies; anything left None is built from the workspace's config.

    Tests and benchmarks pass fakes here (models only, or a stub `ask`).
    """

    rewrite_model: RoleModel | None = None
    summarise_model: RoleModel | None = None
    agent_model: RoleModel | None = None
    ask: AskFn | None = None
    window: MessageWindow | None = None
    use_models: bool = True
    """False: no rewrite/summarise/agent model unless given here (no model loads)."""


@dataclass
class IngestJob:
    """An upload being ingested in the background."""

    source_id: str
    filename: str
    status: str = "processing"
    error: str | None = None


@dataclass
class ServerState:
    """Everything the routers share."""

    ws: Workspace
    deps: ServerDeps
    sessions: SessionStore
    runs: RunStore
    hub: RunHub
    memory: ConversationMemory
    window: MessageWindow
    jobs: dict[str, IngestJob] = field(default_factory=dict)
    ingest_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    tool_cache: dict[str, tuple[float, str]] = field(default_factory=dict)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    starting: set[tuple[str, str]] = field(default_factory=set)

    @property
    def settings(self) -> Settings:
        """The workspace settings."""
        return self.ws.settings

    @classmethod
    def build(cls, ws: Workspace, deps: ServerDeps) -> ServerState:
        """Wire the stores, window and hub for a workspace."""
        sessions = SessionStore(ws.store)
        runs = RunStore(ws.store)
        window = deps.window or make_window(ws.settings.server.redis_url, ws.settings.chat)
        memory = ConversationMemory(sessions, window, ws.settings.chat)
        return cls(ws, deps, sessions, runs, RunHub(sessions, runs), memory, window)

    def model(self, which: str) -> RoleModel | None:
        """The rewrite / summarise / agent model: injected, else the bound role, else None."""
        given: RoleModel | None = getattr(self.deps, f"{which}_model")
        if given is not None or not self.deps.use_models:
            return given
        role = {
            "rewrite": self.settings.chat.rewrite_role,
            "summarise": "summarise",
            "agent": self.settings.agent.role,
        }[which]
        roles = self.ws.models
        return roles.chat(role) if roles.is_bound(role) else None

    def ask(self) -> AskFn:
        """The ask entry point (the workspace's, unless a stub was injected)."""
        return self.deps.ask or self.ws.ask

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        """A background task kept referenced until it ends."""
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task


def get_state(request: Request) -> ServerState:
    """FastAPI dependency: the app's state."""
    state: ServerState = request.app.state.footnote
    return state
