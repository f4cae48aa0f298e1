"""The OpenAI-compatible adapter against a scripted HTTP server on loopback (no model)."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from footnote.errors import ConfigError, ModelError, ProviderUnavailable
from footnote.models.base import Message, ToolSpec
from footnote.models.openai_client import approx_tokens, parse_openai_url
from footnote.models.openai_compat import OpenAICompatChatModel, OpenAICompatEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/openai_loopback.py
from openai_loopback import DROP, LoopbackServer, Response
from openai_loopback import Reply as ServerReply

Reply = tuple[int, dict[str, str], Any]
Script = Callable[[str, dict[str, Any]], Reply]


def chat(content: str = "hi", tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }


class Fake:
    """The loopback server answering each request (GETs too) with `script(path, body)`;
    status -1 hangs for `payload` seconds, then closes the connection unanswered."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.server = LoopbackServer(self._go, models=False)
        self.url = self.server.url

    def _go(self, path: str, body: dict[str, Any]) -> ServerReply:
        status, headers, payload = self.script(path, body)
        if status == -1:  # hang
            time.sleep(float(payload))
            return DROP
        return Response(status, payload, headers)

    @property
    def requests(self) -> list[tuple[str, dict[str, Any]]]:
        return [(r.path, r.body) for r in self.server.requests]

    def close(self) -> None:
        self.server.stop()


@pytest.fixture
def serve() -> Iterator[Callable[[Script], Fake]]:
    made: list[Fake] = []

    def make(script: Script) -> Fake:
        made.append(Fake(script))
        return made[-1]

    yield make
    for f in made:
        f.close()


def no_sleep(_: float) -> None:
    pass


def test_url_parsing() -> None:
    assert parse_openai_url("openai+https://api.x.com/v1/?model=a/b") == (
        "https://api.x.com/v1",
        "a/b",
    )
    with pytest.raises(ConfigError, match="model"):
        parse_openai_url("openai+http://h/v1")
    with pytest.raises(ConfigError):
        parse_openai_url("http://h/v1?model=x")
    assert approx_tokens("abcdefgh") == 2 and approx_tokens("你好") == 2


def test_retries_429_honouring_retry_after(serve: Callable[[Script], Fake]) -> None:
    n = {"i": 0}

    def script(path: str, body: dict[str, Any]) -> Reply:
        n["i"] += 1
        if n["i"] <= 2:
            return 429, {"retry-after": "1.5"}, {"error": {"message": "slow down"}}
        return 200, {}, chat("done")

    fake = serve(script)
    sleeps: list[float] = []
    m = OpenAICompatChatModel(fake.url, sleep=sleeps.append)
    out = m.complete([Message("user", "x")])
    assert out.text == "done" and out.tokens_in == 7 and sleeps == [1.5, 1.5]


def test_5xx_retried_at_most_three_times(serve: Callable[[Script], Fake]) -> None:
    fake = serve(lambda p, b: (500, {}, {"error": {"message": "oops"}}))
    sleeps: list[float] = []
    m = OpenAICompatChatModel(fake.url, sleep=sleeps.append)
    with pytest.raises(ModelError, match="500"):
        m.complete([Message("user", "x")])
    assert len(fake.requests) == 4 and sleeps[0] < sleeps[1] < sleeps[2]  # exponential


def test_400_is_not_retried(serve: Callable[[Script], Fake]) -> None:
    fake = serve(lambda p, b: (400, {}, {"error": {"message": "context too long"}}))
    with pytest.raises(ModelError, match="400"):
        OpenAICompatChatModel(fake.url, sleep=no_sleep).complete([Message("user", "x")])
    assert len(fake.requests) == 1


def test_connection_refused_is_provider_unavailable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    m = OpenAICompatChatModel(f"openai+http://127.0.0.1:{port}/v1?model=m", sleep=no_sleep)
    with pytest.raises(ProviderUnavailable):
        m.complete([Message("user", "x")])
    with pytest.raises(ProviderUnavailable):
        m.capabilities()


def test_timeout_is_clean_model_error(serve: Callable[[Script], Fake]) -> None:
    fake = serve(lambda p, b: (-1, {}, 3))
    m = OpenAICompatChatModel(fake.url, timeout_s=0.3, sleep=no_sleep)
    t = time.monotonic()
    with pytest.raises(ModelError, match="timed out"):
        m.complete([Message("user", "x")])
    assert time.monotonic() - t < 2.5 and len(fake.requests) == 1


def test_probe_and_native_tools(serve: Callable[[Script], Fake]) -> None:
    call: dict[str, Any] = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_time", "arguments": '{"city": "Paris"}'},
    }

    def script(path: str, body: dict[str, Any]) -> Reply:
        if path.endswith("/models"):
            return (
                200,
                {},
                {
                    "object": "list",
                    "data": [{"id": "m", "object": "model", "max_model_len": 32768}],
                },
            )
        if body.get("tools"):
            name = body["tools"][0]["function"]["name"]
            return 200, {}, chat("", [{**call, "function": {**call["function"], "name": name}}])
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return 200, {}, chat('{"probe_ok": true, "answer": "x"}')
        if body.get("logprobs"):
            return 400, {}, {"error": {"message": "no logprobs"}}
        return 200, {}, chat("plain")

    fake = serve(script)
    m = OpenAICompatChatModel(fake.url, sleep=no_sleep)
    caps = m.capabilities()
    assert (caps.tools, caps.json_schema, caps.logprobs, caps.context_length) == (
        True,
        True,
        False,
        32768,
    )
    assert m.json_mode == "json_schema"
    tool = ToolSpec(
        "search", "Search.", {"type": "object", "properties": {"q": {"type": "string"}}}
    )
    out = m.complete([Message("user", "find")], tools=[tool])
    assert out.tool_calls[0].name == "search" and out.tool_calls[0].id == "c1"
    sent = fake.requests[-1][1]
    assert sent["tools"][0]["function"]["name"] == "search"
    m.complete([Message("user", "j")], json_schema={"type": "object"})
    assert fake.requests[-1][1]["response_format"]["type"] == "json_schema"
    n = len(fake.requests)
    m.capabilities()
    assert len(fake.requests) == n  # probed once


def test_degrades_to_emulated_tools(serve: Callable[[Script], Fake]) -> None:
    def script(path: str, body: dict[str, Any]) -> Reply:
        if path.endswith("/models"):
            return 200, {}, {"object": "list", "data": [{"id": "m", "object": "model"}]}
        if body.get("tools"):
            return 400, {}, {"error": {"message": "tools unsupported"}}
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_object":
            msgs = json.dumps(body["messages"])
            if "You can call tools" in msgs:
                return 200, {}, chat('{"tool": "search", "arguments": {"q": "eiffel"}}')
            return 200, {}, chat('{"probe_ok": false}' if "schema" in fmt else "{}")
        return 400, {}, {"error": {"message": "bad format"}}

    fake = serve(script)
    m = OpenAICompatChatModel(fake.url, sleep=no_sleep)
    caps = m.capabilities()
    assert not caps.tools and caps.json_schema and m.json_mode == "json_object_schema"
    tool = ToolSpec(
        "search", "Search.", {"type": "object", "properties": {"q": {"type": "string"}}}
    )
    out = m.complete([Message("user", "find")], tools=[tool])
    assert out.tool_calls[0].name == "search" and json.loads(out.tool_calls[0].arguments) == {
        "q": "eiffel"
    }
    assert "tools" not in fake.requests[-1][1]


def test_stream_and_cancel(serve: Callable[[Script], Fake]) -> None:
    def sse(words: list[str], finish: bool = True) -> bytes:
        chunks = [
            {
                "id": "x",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "delta": {"content": w},
                        "finish_reason": "stop" if finish and i == len(words) - 1 else None,
                    }
                ],
            }
            for i, w in enumerate(words)
        ]
        return (
            b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
            + b"data: [DONE]\n\n"
        )

    fake = serve(lambda p, b: (200, {"content-type": "text/event-stream"}, sse(["a", "b", "c"])))
    m = OpenAICompatChatModel(fake.url, sleep=no_sleep)
    assert list(m.stream([Message("user", "x")])) == ["a", "b", "c"]
    cancel = threading.Event()
    got = []
    for piece in m.stream([Message("user", "x")], cancel=cancel):
        got.append(piece)
        cancel.set()
    assert got == ["a"]
    # the server dies mid-answer: the body just ends, without a finish reason (issue #15)
    cut = serve(lambda p, b: (200, {"content-type": "text/event-stream"}, sse(["Hy"], False)))
    with pytest.raises(ModelError, match="before the model finished"):
        list(OpenAICompatChatModel(cut.url, sleep=no_sleep).stream([Message("user", "x")]))


def test_embedder(serve: Callable[[Script], Fake]) -> None:
    def script(path: str, body: dict[str, Any]) -> Reply:
        data = [
            {"object": "embedding", "index": i, "embedding": [3.0, 4.0]}
            for i, _ in enumerate(body["input"])
        ]
        return (
            200,
            {},
            {
                "object": "list",
                "data": data,
                "model": "m",
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            },
        )

    e = OpenAICompatEmbedder(serve(script).url, batch_size=2, sleep=no_sleep)
    v = e.embed_passages(["a", "b", "c"])
    assert v.shape == (3, 2) and v.dtype.name == "float32" and abs(float(v[0, 0]) - 0.6) < 1e-6
    assert e.dim == 2 and e.embed_query("q").shape == (2,)


def test_labelled_text_never_reaches_an_external_embedder(
    serve: Callable[[Script], Fake], tmp_path: Any
) -> None:
    """Issue #15: blocks and queries of a `no-external-model` source went to whatever embedder
    was bound. Here the embed role is an OpenAI-compatible server on loopback (external): the
    labelled file is refused before anything is stored or sent, an unlabelled one is embedded,
    and a query confined to a labelled source is refused before it is sent."""
    from footnote.errors import LicenceRefused
    from footnote.index import SearchFilters
    from footnote.workspace import Workspace

    def script(path: str, body: dict[str, Any]) -> Reply:
        data = [{"object": "embedding", "index": i, "embedding": [1.0, float(len(t))]}
                for i, t in enumerate(body["input"])]  # fmt: skip
        return 200, {}, {"object": "list", "data": data, "model": "m",
                         "usage": {"prompt_tokens": 1, "total_tokens": 1}}  # fmt: skip

    fake = serve(script)
    secret, public = tmp_path / "secret.md", tmp_path / "public.md"
    secret.write_text("# Memo\n\nThe client's margin is 31 percent.\n")
    public.write_text("# Paper\n\nGlaciers retreat faster in warm years.\n")
    url = fake.url
    with Workspace.open(tmp_path / "ws", overrides={"models": {"embed": {"url": url}}}) as ws:
        refused = ws.ingest([secret], labels=("no-external-model",)).results[0]
        assert refused.outcome == "failed" and "may not be sent" in (refused.error or "")
        assert not ws.store.list_sources()
        assert all("margin" not in json.dumps(b) for _p, b in fake.requests)
        assert ws.ingest([public]).results[0].outcome == "added"
        sent = len(fake.requests)
        assert sent > 0  # the unlabelled paper was embedded there
        labelled = ws.ingest([secret], labels=("no-external-model",), index=False).results[0]
        assert labelled.source is not None
        with pytest.raises(LicenceRefused):
            ws.searcher.search(
                "client margin", filters=SearchFilters(source_ids=(labelled.source.id,))
            )
        assert len(fake.requests) == sent and all(
            "margin" not in json.dumps(b) for _p, b in fake.requests
        )
