"""JSON request bodies are bounded and valid Unicode, checked before any route sees them: a
body over `MAX_JSON_BYTES` is 413 (read no further), and JSON holding a lone surrogate
(`"\\ud800"`, which no store can encode) is 422 — both in the one error shape."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from footnote.server.errors import error_body

MAX_JSON_BYTES = 4 * 2**20
"""Largest JSON request body (4 MiB: a 200-message chat history at the per-message limit)."""
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def _is_json(scope: Scope) -> bool:
    for key, value in scope["headers"]:
        if key == b"content-type":
            return b"json" in value.lower()
    return False


def valid_unicode(body: bytes) -> bool:
    """False when the body is JSON whose strings (or keys) hold a lone surrogate; a body that
    is not JSON at all is left to the route's own validation."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        return True
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class JsonBodyLimit:
    """ASGI middleware applying both rules to JSON bodies of POST, PUT and PATCH requests."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_JSON_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in BODY_METHODS or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if length.isdigit() and int(length) > self.max_bytes:
            await _refuse(send, 413, "payload_too_large", self._too_large())
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _refuse(send, 413, "payload_too_large", self._too_large())
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if not valid_unicode(body):
            await _refuse(send, 422, "invalid_request",
                          "the request holds text that is not valid Unicode (a lone surrogate)")  # fmt: skip
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> str:
        return f"the request body is larger than {self.max_bytes / 2**20:g} MiB"


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    payload = json.dumps(error_body(code, message)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"connection", b"close")]})  # fmt: skip
    await send({"type": "http.response.body", "body": payload})
