"""The FastAPI app factory: `create_app(workspace)`; OpenAPI at /openapi.json, routes under /v1."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI

from footnote.pipelines.memory import RedisWindow
from footnote.server import (
    feedback,
    graph,
    metrics,
    openai_compat,
    reproduce,
    research,
    review,
    routes_web,
    runs,
    sessions,
    sources,
    traces,
)
from footnote.server.auth import probe_access
from footnote.server.body import JsonBodyLimit
from footnote.server.errors import install_error_handlers
from footnote.server.guard import LocalModeGuard
from footnote.server.state import ServerDeps, ServerState
from footnote.workspace import Workspace

log = logging.getLogger("footnote.server")


def identity_mode(state: ServerState) -> str:
    """A one-line description of how callers are identified (printed at start-up)."""
    if state.auth.has_keys():
        return "API keys required (Authorization: Bearer <key> or X-API-Key)"
    return (
        f"no API keys configured: embedded single-user mode, every request runs as "
        f"{state.settings.server.local_user!r} (create keys with `footnote keys add`)"
    )


def create_app(workspace: Workspace, deps: ServerDeps | None = None) -> FastAPI:
    """The HTTP API over one workspace. `deps` injects models or a stub ask (tests, bench)."""
    state = ServerState.build(workspace, deps or ServerDeps())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        relay = state.hub.relay  # spare the runs another replica holds a lease on, and jobs
        orphans = state.runs.fail_orphaned_runs(("chat", "agent", "research"),
                                                alive=state.run_alive)  # fmt: skip
        if relay is None:  # a replica cannot tell another's pending replies from lost ones
            state.chats.fail_pending_messages()
        for run_id in orphans:  # a client following the run gets a clear ending
            state.hub.close_orphan(run_id)
        state.ensure_worker()  # jobs a previous process queued or left running resume
        if resumed := sources.resume_uploads(state):
            log.warning("resuming %d uploads a previous server process had not finished", resumed)
        if orphans:
            log.warning("marked %d runs of a previous server process as failed", len(orphans))
        log.info("footnote server: %s", identity_mode(state))
        try:
            async with contextlib.AsyncExitStack() as extensions:
                for enter in app.state.lifespans:  # e.g. the MCP session manager
                    await extensions.enter_async_context(enter())
                yield
        finally:
            state.stop_worker()
            await state.hub.shutdown()
            if relay is not None:
                await relay.close()
            if isinstance(state.window, RedisWindow):
                await state.window.close()

    app = FastAPI(
        title="footnote",
        version="1",
        summary="Answers about papers where every sentence carries a checked footnote.",
        lifespan=lifespan,
    )
    app.state.footnote = state
    app.state.lifespans = []  # async context managers run with the app (mount_mcp adds one)
    install_error_handlers(app)
    routers = (sources, reproduce, sessions, runs, traces, feedback, openai_compat, metrics, research,
               graph, review)  # fmt: skip
    for module in (*routers, routes_web):
        app.include_router(module.router)
    max_bytes = int(workspace.settings.server.max_upload_mb * 2**20)
    app.add_middleware(sources.UploadLimit, max_bytes=max_bytes)
    app.add_middleware(JsonBodyLimit)
    app.add_middleware(
        LocalModeGuard, settings=workspace.settings.server, keyed=state.auth.has_keys
    )

    @app.get("/v1/health", tags=["health"], dependencies=[Depends(probe_access)])
    async def health() -> dict[str, Any]:
        """Liveness plus the state of the message window cache."""
        window = state.window
        return {
            "ok": True,
            "identity": "keys" if state.auth.has_keys() else "local",
            "window": type(window).__name__,
            "window_available": getattr(window, "available", True),
            "live_runs": len(state.hub.live),
        }

    routes_web.mount_web(app)  # last: the web app at `/` shadows later routes
    return app
