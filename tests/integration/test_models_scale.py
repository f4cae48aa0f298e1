"""Models at scale against a real OpenAI-compatible server on loopback that serves two model
names: roles bound to different names on one server share one connection pool, and when the
server's queue is full (429 with Retry-After) the client waits as told and retries."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from footnote.models.base import Message
from footnote.models.openai_compat import OpenAICompatChatModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/openai_loopback.py
from openai_loopback import LoopbackServer, Response, chat_completion

pytest.importorskip("openai")
MODELS = ("footnote-small", "footnote-compose")


class TwoModelServer:
    """Serves `/v1/chat/completions` for two model names; rejects unknown names (404) and
    answers 429 + Retry-After while more than `queue` requests are in flight or when told to."""

    def __init__(self, queue: int = 8) -> None:
        self.reject_next = 0
        self.queue, self.in_flight = queue, 0
        self.lock = threading.Lock()
        self.server = LoopbackServer(self._answer, models=False)
        self.url = self.server.base

    @property
    def seen(self) -> list[tuple[Any, int]]:
        """(model, client port) per request."""
        return [(r.body.get("model"), r.client[1]) for r in self.server.requests]

    def _answer(self, _path: str, body: dict[str, Any]) -> Response:
        model = body.get("model")
        with self.lock:
            full = self.reject_next > 0 or self.in_flight >= self.queue
            self.reject_next = max(0, self.reject_next - 1)
            self.in_flight += 0 if full else 1
        if model not in MODELS:
            return Response(404, {"error": {"message": f"no model {model}"}})
        if full:
            return Response(429, {"error": {"message": "queue full"}}, {"Retry-After": "0.3"})
        try:
            text = f"answer from {model}"
            return Response(200, chat_completion(text, model=model, usage=(3, 3), id="x"))
        finally:
            with self.lock:
                self.in_flight -= 1

    def stop(self) -> None:
        self.server.stop()


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
