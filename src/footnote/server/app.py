"""The FastAPI app factory: `create_app(workspace)`; OpenAPI at /openapi.json, routes under /v1."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from footnote.pipelines.memory import RedisWindow
from footnote.server import feedback, routes_web, runs, sessions, sources, traces
from footnote.server.errors import install_error_handlers
from footnote.server.state import ServerDeps, ServerState
from footnote.workspace import Workspace

log = logging.getLogger("footnote.server")


def identity_mode(state: ServerState) -> str:
    """A one-line description of how callers are identified (printed at start-up)."""
    if state.sessions.has_keys():
        return "API keys required (Authorization: Bearer <key> or X-API-Key)"
    return (
        f"no API keys configured: embedded single-user mode, every request runs as "
        f"{state.settings.server.local_user!r} (create keys with `footnote keys add`)"
    )


def create_app(workspace: Workspace, deps: ServerDeps | None = None) -> FastAPI:
    """The HTTP API over one workspace. `deps` injects models or a stub ask (tests, bench)."""
    state = ServerState.build(workspace, deps or ServerDeps())

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        orphans = state.sessions.fail_orphaned_runs(("chat", "agent"))
        if orphans:
            log.warning("marked %d runs of a previous server process as failed", orphans)
        log.info("footnote server: %s", identity_mode(state))
        try:
            yield
        finally:
            await state.hub.shutdown()
            if isinstance(state.window, RedisWindow):
                await state.window.close()

    app = FastAPI(
        title="footnote",
        version="1",
        summary="Answers about papers where every sentence carries a checked footnote.",
        lifespan=lifespan,
    )
    app.state.footnote = state
    install_error_handlers(app)
    for module in (sources, sessions, runs, traces, feedback, routes_web):
        app.include_router(module.router)
    max_bytes = int(workspace.settings.server.max_upload_mb * 2**20)
    app.add_middleware(sources.UploadLimit, max_bytes=max_bytes)

    @app.get("/v1/health", tags=["health"])
    async def health() -> dict[str, Any]:
        """Liveness plus the state of the message window cache."""
        window = state.window
        return {
            "ok": True,
            "identity": "keys" if state.sessions.has_keys() else "local",
            "window": type(window).__name__,
            "window_available": getattr(window, "available", True),
            "live_runs": len(state.hub.live),
        }

    routes_web.mount_web(app)  # last: the web app at `/` shadows later routes
    return app
