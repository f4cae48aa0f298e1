"""Models at scale against a real OpenAI-compatible server on loopback that serves two model
names: roles bound to different names on one server share one connection pool, and when the
server's queue is full (429 with Retry-After) the client waits as told and retries."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from footnote.models.base import Message
from footnote.models.openai_compat import OpenAICompatChatModel

pytest.importorskip("openai")
MODELS = ("footnote-small", "footnote-compose")


class TwoModelServer:
    """Serves `/v1/chat/completions` for two model names; rejects unknown names (404) and
    answers 429 + Retry-After while more than `queue` requests are in flight or when told to."""

    def __init__(self, queue: int = 8) -> None:
        self.seen: list[tuple[str, int]] = []  # (model, client port) per request
        self.reject_next = 0
        self.queue, self.in_flight = queue, 0
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_a: object) -> None:
                pass

            def _send(self, code: int, body: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model = body.get("model")
                with owner.lock:
                    owner.seen.append((model, self.client_address[1]))
                    full = owner.reject_next > 0 or owner.in_flight >= owner.queue
                    owner.reject_next = max(0, owner.reject_next - 1)
                    owner.in_flight += 0 if full else 1
                if model not in MODELS:
                    self._send(404, {"error": {"message": f"no model {model}"}}, {})
                    return
                if full:
                    self._send(429, {"error": {"message": "queue full"}}, {"Retry-After": "0.3"})
                    return
                try:
                    text = f"answer from {model}"
                    self._send(200, {
                        "id": "x", "object": "chat.completion", "created": 0, "model": model,
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": text}}],
                        "usage": {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6},
                    }, {})  # fmt: skip
                finally:
                    with owner.lock:
                        owner.in_flight -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    s = TwoModelServer()
    yield s
    s.stop()


def test_roles_route_by_model_name_over_one_pool(server: TwoModelServer) -> None:
    small = OpenAICompatChatModel(f"openai+{server.url}?model=footnote-small", external=False)
    compose = OpenAICompatChatModel(f"openai+{server.url}?model=footnote-compose", external=False)
    msgs = [Message("user", "hi")]
    for _ in range(3):
        assert small.complete(msgs).text == "answer from footnote-small"
        assert compose.complete(msgs).text == "answer from footnote-compose"
    assert [m for m, _ in server.seen] == list(MODELS) * 3
    assert small._c.client is compose._c.client  # one pool for the server
    assert len({port for _, port in server.seen}) == 1  # one kept-alive connection, both roles


def test_a_full_queue_answers_429_and_the_client_waits_retry_after(server: TwoModelServer) -> None:
    waits: list[float] = []
    model = OpenAICompatChatModel(
        f"openai+{server.url}?model=footnote-small", external=False, sleep=waits.append
    )
    server.reject_next = 2
    assert model.complete([Message("user", "hi")]).text == "answer from footnote-small"
    assert waits == [0.3, 0.3] and len(server.seen) == 3
    server.reject_next = 10  # more than the retry budget: a clear error, not an answer
    with pytest.raises(Exception, match="429"):
        model.complete([Message("user", "hi")])
