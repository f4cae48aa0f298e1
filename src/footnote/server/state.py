"""The server's state: the workspace, stores, run hub, memory and the injectable model deps."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import Request

from footnote.config import Settings
from footnote.errors import UsageError
from footnote.jobs import JobQueue, Worker
from footnote.pipelines.memory import ConversationMemory, MessageWindow
from footnote.server.errors import ApiError
from footnote.server.ingest_queue import FairIngest
from footnote.server.job_runs import JobRuns
from footnote.server.quotas import Quotas, RedisQuotas
from footnote.server.relay import ALL_USERS, RedisRelay
from footnote.server.runner import RunHub
from footnote.server.upload_tickets import scheduler
from footnote.store.base import AuthStore, ChatStore, EventStore, FeedbackStore, RunStore
from footnote.workspace import Workspace
from footnote.workspace.chat import AskFn

if TYPE_CHECKING:
    from footnote.models import RoleModel
    from footnote.workspace.research import ResearchParts


@dataclass
class ServerDeps:
    """Explicit dependencies; anything left None is built from the workspace's config.

    Tests and benchmarks pass fakes here (models only, or a stub `ask`).
    """

    rewrite_model: RoleModel | None = None
    summarise_model: RoleModel | None = None
    agent_model: RoleModel | None = None
    judge_model: RoleModel | None = None
    """Judges the agent's final answer (None: the bound `judge` role, if any)."""
    ask: AskFn | None = None
    window: MessageWindow | None = None
    use_models: bool = True
    """False: no rewrite/summarise/agent model unless given here (no model loads)."""
    research: ResearchParts | None = None
    """Parts of research runs (models, search, fetcher); None: from the workspace's config."""
    graph_models: dict[str, RoleModel] | None = None
    """Graph QA models by role (`understand`, `cypher`, `cypher_fallback`, `compose`); None:
    the workspace's (none at all when `use_models` is False: templates and rules only)."""


@dataclass
class IngestJob:
    """An upload this process queued for ingestion (its state is the job's, in the queue);
    only its uploader sees it."""

    source_id: str
    filename: str
    user_id: str


@dataclass
class ServerState:
    """Everything the routers share."""

    ws: Workspace
    deps: ServerDeps
    hub: RunHub
    memory: ConversationMemory
    window: MessageWindow
    quotas: Quotas
    queue: JobQueue
    """The job queue of `jobs.url` (uploads are ingested as `ingest` jobs)."""
    job_runs: JobRuns
    """Research runs the queue executes (`server.research_jobs`)."""
    ingest: FairIngest
    """Uploads waiting for (or holding) one of `server.ingest_workers` slots, per user in turn."""
    jobs: dict[str, IngestJob] = field(default_factory=dict)
    worker: Worker | None = None
    """This process's own workers on the queue (`jobs.server_threads`), once started."""
    tool_cache: dict[str, tuple[float, str]] = field(default_factory=dict)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    starting: set[tuple[str, str]] = field(default_factory=set)

    @property
    def settings(self) -> Settings:
        """The workspace settings."""
        return self.ws.settings

    @property
    def auth(self) -> AuthStore:
        """Users and API keys."""
        return self.ws.auth

    @property
    def chats(self) -> ChatStore:
        """Sessions and messages."""
        return self.ws.chats

    @property
    def events(self) -> EventStore:
        """Run events."""
        return self.ws.events

    @property
    def runs(self) -> RunStore:
        """Runs and traces."""
        return self.ws.runs

    @property
    def feedback(self) -> FeedbackStore:
        """Feedback on runs."""
        return self.ws.feedback

    @classmethod
    def build(cls, ws: Workspace, deps: ServerDeps) -> ServerState:
        """Wire the window, memory and hub for a workspace."""
        window = deps.window or ws.message_window()
        memory = ConversationMemory(ws.chats, window, ws.settings.chat)
        hub = RunHub(ws.events, ws.runs, relay(ws.settings))
        from footnote.workspace.jobs import open_queue, register_tasks

        queue = open_queue(ws.settings)
        register_tasks(queue, ws)
        job_runs = JobRuns(queue, ws.runs, ws.events)

        def in_flight(user_id: str) -> int:
            # the workers bound how many jobs execute at once; a user's queued or running
            # research jobs count toward that user's runs in flight
            here = hub.in_flight(user_id)
            if user_id == ALL_USERS or not ws.settings.server.research_jobs:
                return here
            mine = ws.research_store.list_research(user_id, 200)
            return here + sum(1 for r in mine if r.state in ("outline_confirmed", "running")
                              and job_runs.alive(r.id))  # fmt: skip

        quotas = (
            RedisQuotas(ws.settings.server, in_flight, ws.settings.server.redis_url)
            if hub.relay is not None
            else Quotas(ws.settings.server, in_flight)
        )
        ingest = scheduler(ws, queue, ws.settings.server.ingest_workers)
        return cls(ws, deps, hub, memory, window, quotas, queue, job_runs, ingest)

    @contextlib.contextmanager
    def admit_run(self, user_id: str) -> Iterator[None]:
        """A run started outside the run hub (an MCP tool call) passes the quotas an HTTP run
        passes (`Quotas.start_run`) and counts as in flight until it ends; over a limit it is
        refused with a `UsageError` saying which limit and when to retry."""
        try:
            self.quotas.start_run(user_id)
        except ApiError as exc:
            retry = exc.detail.get("retry_after_s") if isinstance(exc.detail, dict) else None
            raise UsageError(exc.message + (f"; retry in {retry} s" if retry else "")) from exc
        with self.hub.hold(user_id):
            yield

    def run_alive(self, run_id: str) -> bool:
        """Whether a `running` run is executing somewhere else: on another replica (its relay
        lease) or as a queued or running job."""
        relay = self.hub.relay
        return (relay is not None and relay.alive(run_id)) or self.job_runs.alive(run_id)

    def ensure_worker(self) -> None:
        """Start this process's job workers unless `jobs.server_threads` is 0 (or they run):
        at least `server.ingest_workers` threads, so every upload given a slot runs; and the
        upload scheduler."""
        threads = self.settings.jobs.server_threads
        if self.worker is None and threads > 0:
            self.worker = self.queue.worker(max(threads, self.settings.server.ingest_workers))
            self.worker.start()
        self.ingest.start()

    def stop_worker(self) -> None:
        """Stop taking jobs (a job running now is left to finish, or to be retried)."""
        self.ingest.stop()
        if self.worker is not None:
            self.worker.stop(graceful=False)
            self.worker = None

    def model(self, which: str) -> RoleModel | None:
        """The rewrite / summarise / agent / judge model: injected, else the bound role, else None."""
        given: RoleModel | None = getattr(self.deps, f"{which}_model")
        if given is not None or not self.deps.use_models:
            return given
        return self.ws.chat_role_model(which)

    def ask(self) -> AskFn:
        """The ask entry point (the workspace's, unless a stub was injected)."""
        return self.deps.ask or self.ws.ask

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        """A background task kept referenced until it ends."""
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task


def relay(settings: Settings) -> RedisRelay | None:
    """The cross-replica relay: on when replicas can share the workspace (a PostgreSQL store)
    and Redis is configured (`server.redis_url`)."""
    if settings.server.redis_url and settings.store_url.startswith(
        ("postgresql://", "postgres://")
    ):
        return RedisRelay(settings.server.redis_url, lease_s=settings.server.run_lease_s)
    return None


def get_state(request: Request) -> ServerState:
    """FastAPI dependency: the app's state."""
    state: ServerState = request.app.state.footnote
    return state
