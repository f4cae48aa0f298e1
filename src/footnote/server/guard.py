"""Single-user mode (no API keys) trusts whoever can reach the port, so it accepts only requests
a page of its own origin could make: the Host header must name this machine (DNS rebinding:
a hostile name resolving to 127.0.0.1 is refused), and a state-changing request from a browser
must come from the same origin (cross-site form posts and fetches are refused: CSRF).

With API keys the key is the credential (sent in a header, never a cookie), so neither applies.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from footnote.config import ServerSettings
from footnote.server.errors import error_body

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _hostname(host: str) -> str:
    """The name part of a Host header value (`[::1]:8765` -> `::1`)."""
    return (urlsplit(f"//{host}").hostname or "").lower()


class LocalModeGuard:
    """ASGI middleware enforcing the Host and Origin rules while no API key exists."""

    def __init__(self, app: ASGIApp, settings: ServerSettings, keyed: Callable[[], bool]) -> None:
        self.app = app
        self.keyed = keyed
        bound = {settings.host.lower()} - {"0.0.0.0", "::", ""}
        self.allowed = LOOPBACK | bound | {h.lower() for h in settings.allowed_hosts}

    def refusal(self, scope: Scope) -> str | None:
        """Why this request is refused, or None."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if "*" not in self.allowed and _hostname(host) not in self.allowed:
            return f"host {host!r} is not this server (set server.allowed_hosts to allow it)"
        if scope["method"] in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin)
            if origin == "null" or parts.netloc.lower() != host.lower():
                return f"cross-origin request from {origin!r} refused"
        elif headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return "cross-site request refused"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.keyed():
            reason = self.refusal(scope)
            if reason is not None:
                body = json.dumps(error_body("forbidden", reason)).encode()
                await send({"type": "http.response.start", "status": 403,
                            "headers": [(b"content-type", b"application/json")]})  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
