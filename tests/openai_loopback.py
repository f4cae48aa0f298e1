"""One home for the OpenAI-compatible HTTP servers of the tests: a real `ThreadingHTTPServer`
on a free loopback port, served from a thread, that hands every request to a behaviour
callback `(path, body) -> reply` and records what it was sent.

The reply is one of
- a `str`: a chat text, sent as a `chat.completion` (or, when the request asked for
  `"stream": true`, as the SSE chunks of a `chat.completion.chunk` stream);
- a `dict`: sent as JSON, status 200;
- a `list` of vectors: sent as an `/embeddings` reply, one embedding per vector;
- a `Response`: any status, headers and body (JSON or raw bytes);
- `DROP`: nothing is sent and the connection is closed (a hung or dead server).

A GET (`…/models`) is answered with the one model name, unrecorded, unless `models=False`
(then GETs reach the behaviour too, with an empty body). Import it from any test folder after
`sys.path.insert(0, <tests folder>)`, as with `pgtest`."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Usage = tuple[int, int] | Callable[[str], tuple[int, int]]
"""Chat usage: (prompt_tokens, completion_tokens), or a function of the reply text."""


@dataclass(frozen=True)
class Response:
    """A reply with full control: `body` is JSON-encoded unless it is bytes."""

    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


DROP = _Drop()
"""Send nothing and close the connection."""

Reply = str | dict[str, Any] | list[list[float]] | Response | _Drop
Behaviour = Callable[[str, dict[str, Any]], Reply]


@dataclass(frozen=True)
class Request:
    """One request the server was sent: `body` is the decoded JSON object ({} when there is
    none or it is not JSON, such as protobuf: `raw` holds the bytes as sent)."""

    method: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    raw: bytes
    client: tuple[str, int]
    """The client's (host, port): one port per connection."""


def chat_completion(
    text: str, *, model: str = "m", usage: tuple[int, int] = (10, 5), id: str = "c"
) -> dict[str, Any]:
    """A `chat.completion` whose one choice says `text`."""
    prompt, completion = usage
    return {
        "id": id,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def chat_chunks(text: str, *, model: str = "m", id: str = "c") -> bytes:
    """The SSE stream of a chat completion saying `text`: one content chunk, the stop chunk
    and `[DONE]`."""
    out = b""
    for piece in (text, ""):
        chunk = {
            "id": id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "delta": {"content": piece} if piece else {},
                    "finish_reason": None if piece else "stop",
                }
            ],
        }
        out += f"data: {json.dumps(chunk)}\n\n".encode()
    return out + b"data: [DONE]\n\n"


def embeddings(vectors: list[list[float]], *, model: str = "m") -> dict[str, Any]:
    """An `/embeddings` reply holding `vectors` in order."""
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }


def embed_inputs(body: dict[str, Any]) -> list[str]:
    """The texts of an `/embeddings` request (`input` is a string or a list)."""
    inputs = body.get("input")
    return [str(t) for t in (inputs if isinstance(inputs, list) else [inputs])]


def last_prompt(body: dict[str, Any]) -> str:
    """The content of a chat request's last message ("" when none)."""
    messages = body.get("messages") or [{}]
    return str(messages[-1].get("content") or "")


class LoopbackServer:
    """The server on a free loopback port, started at once; `requests` holds every request
    the behaviour was asked about, in order. Use as a context manager, or call `stop()`."""

    def __init__(
        self,
        behaviour: Behaviour,
        *,
        model: str = "m",
        usage: Usage = (10, 5),
        models: bool = True,
    ) -> None:
        self.behaviour = behaviour
        self.model = model
        self.usage = usage
        self.models = models
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_a: object) -> None:
                return

            def do_GET(self) -> None:
                if server.models:
                    data = [{"id": server.model, "object": "model"}]
                    self._send(Response(200, {"object": "list", "data": data}))
                    return
                self._serve(b"")

            def do_POST(self) -> None:
                self._serve(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _serve(self, raw: bytes) -> None:
                kind = self.headers.get("Content-Type") or "application/json"
                body = json.loads(raw) if raw and "json" in kind else {}
                body = body if isinstance(body, dict) else {}
                host, port = self.client_address[:2]
                request = Request(
                    self.command, self.path, body, dict(self.headers), raw, (str(host), int(port))
                )
                with server.lock:
                    server.requests.append(request)
                self._send(server.reply(body, server.behaviour(self.path, body)))

            def _send(self, reply: Response | _Drop) -> None:
                if isinstance(reply, _Drop):
                    self.close_connection = True
                    return
                headers = {k.lower(): v for k, v in reply.headers.items()}
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body)
                data = data if isinstance(data, bytes) else data.encode()
                stream = headers.get("content-type") == "text/event-stream"
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(reply.status)
                    headers.setdefault("content-type", "application/json")
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    if stream:
                        self.send_header("Connection", "close")
                        self.close_connection = True
                    self.end_headers()
                    self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self.base = f"http://127.0.0.1:{self.port}/v1"
        """The OpenAI base URL (…/v1)."""
        self.url = f"openai+{self.base}?model={model}"
        """A footnote model URL for `model`."""
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def reply(self, body: dict[str, Any], reply: Reply) -> Response | _Drop:
        """The HTTP response for a behaviour's reply to `body`."""
        if isinstance(reply, Response | _Drop):
            return reply
        if isinstance(reply, dict):
            return Response(200, reply)
        if isinstance(reply, list):
            return Response(200, embeddings(reply, model=self.model))
        if body.get("stream"):
            sse = chat_chunks(reply, model=self.model)
            return Response(200, sse, {"Content-Type": "text/event-stream"})
        usage = self.usage(reply) if callable(self.usage) else self.usage
        return Response(200, chat_completion(reply, model=self.model, usage=usage))

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The decoded body of every request, in order."""
        return [r.body for r in self.requests]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
