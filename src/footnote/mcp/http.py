"""The MCP server over streamable HTTP at `/mcp` on the HTTP API, with its API keys.

Keys are checked before the MCP transport sees a request (401 in the API's error shape);
each tool call then runs as the key's user, with that user's ACL groups — the rule of
`server/auth.py` — and its runs pass the same quotas as the API's (`ServerState.admit_run`:
runs per minute, runs in flight, `max_runs_total`). Without keys in the store every request
is the local user.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from footnote.mcp.server import build_server
from footnote.store.base import AuthStore
from footnote.store.records import User
from footnote.workspace import Workspace
from footnote.workspace.api import Library

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def key_from(headers: Mapping[str, str]) -> str:
    """The API key of a request (`Authorization: Bearer` or `X-API-Key`)."""
    header = headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return headers.get("x-api-key", "").strip()


def user_for(auth: AuthStore, local_user: str, headers: Mapping[str, str] | None) -> User | None:
    """The caller named by the headers; the local user when no key exists; None: refused."""
    if not auth.has_keys():
        return User(local_user, None)
    key = key_from(headers or {})
    return auth.user_for_key(key) if key else None


class RequireKey:
    """ASGI wrapper: refuse requests without a valid key (when keys exist)."""

    def __init__(self, app: ASGIApp, auth: AuthStore, local_user: str) -> None:
        self.app, self.auth, self.local_user = app, auth, local_user

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            if user_for(self.auth, self.local_user, headers) is None:
                body = json.dumps(
                    {"error": {"code": "unauthorized", "detail": None,
                               "message": "a valid API key is required (Authorization: Bearer <key>)"}}
                ).encode()  # fmt: skip
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b"Bearer")]})  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def mount_mcp(app: Any, ws: Workspace, path: str = "/mcp") -> None:
    """Add the MCP endpoint to the FastAPI app of `ws` (before the web app's catch-all) and
    run its session manager with the app (`app.state.lifespans`)."""
    settings = ws.settings.server

    def caller(ctx: Context) -> Library:
        user = user_for(ws.auth, settings.local_user, ctx.headers)
        if user is None:  # the wrapper already refused such a request
            raise PermissionError("a valid API key is required")
        return Library(ws, user, owns=False)

    state = getattr(app.state, "footnote", None)  # the API's quotas, when it has them
    server = build_server(caller, admit=state.admit_run if state is not None else None)
    security = None
    if settings.host not in LOOPBACK:  # reachable by name: keys guard it, not the Host check
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    mcp_app = server.streamable_http_app(
        streamable_http_path=path, transport_security=security, host=settings.host
    )
    inner = next(r for r in mcp_app.routes if isinstance(r, Route) and r.path == path)
    route = Route(path, endpoint=RequireKey(inner.endpoint, ws.auth, settings.local_user))
    app.router.routes.insert(0, route)

    @asynccontextmanager
    async def run() -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    app.state.lifespans.append(run)
