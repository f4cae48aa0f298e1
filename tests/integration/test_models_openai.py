"""The OpenAI-compatible adapter against a real llama-cpp-python server on loopback.

Native tool calling with `llama_cpp.server` 0.3.36 is not usable: with the GGUF chat template
`tools` are rendered but never parsed into `tool_calls`, and with `--chat_format
chatml-function-calling` and `tool_choice="auto"` the reply is the text "functions.NAME:" with
no call. So the probe reports `tools=False` and the adapter emulates tool calls through
`response_format={"type": "json_object", "schema": …}`; the round trip below exercises that.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from llama_server import LlamaServer, gguf_05b
from pydantic import BaseModel

from footnote.errors import ModelError
from footnote.models import Message, OpenAICompatChatModel, ToolCallRequest, ToolSpec
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.models.structured import structured

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.fixture(scope="session")
def model(server: LlamaServer) -> OpenAICompatChatModel:
    return OpenAICompatChatModel(server.url, timeout_s=60, external=True)


def test_capabilities_probe(model: OpenAICompatChatModel) -> None:
    caps = model.capabilities()
    assert caps.json_schema and model.json_mode == "json_object_schema"
    assert not caps.tools  # see the module docstring


def test_streaming(model: OpenAICompatChatModel) -> None:
    pieces = list(model.stream([Message("user", "Count from 1 to 5.")], max_tokens=20))
    assert len(pieces) > 2 and "3" in "".join(pieces)


class City(BaseModel):
    city: str
    country: str


def test_json_schema(model: OpenAICompatChatModel) -> None:
    role = RoleModel("understand", model, ledger=Ledger(), external=True)
    out = structured(
        role,
        [Message("user", "Which city is the Eiffel Tower in?")],
        City,
        max_tokens=40,
        labels=(),
    )
    assert "paris" in out.city.lower()


def test_tool_call_round_trip(model: OpenAICompatChatModel) -> None:
    tool = ToolSpec(
        "search",
        "Search the document collection.",
        {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    )
    msgs = [
        Message("system", "Use the search tool to find facts before answering."),
        Message("user", "When was the Eiffel Tower completed?"),
    ]
    first = model.complete(msgs, tools=[tool], max_tokens=60)
    assert first.tool_calls and first.tool_calls[0].name == "search"
    args = json.loads(first.tool_calls[0].arguments)
    assert "eiffel" in args["query"].lower()
    call = first.tool_calls[0]
    msgs += [
        Message("assistant", "", tool_calls=(ToolCallRequest(call.id, call.name, call.arguments),)),
        Message(
            "tool",
            "[b1] The Eiffel Tower was completed in 1889.",
            tool_call_id=call.id,
            name="search",
        ),
    ]
    second = model.complete(msgs, tools=[tool], max_tokens=60)
    assert not second.tool_calls and "1889" in second.text


def test_context_overflow_is_model_error(model: OpenAICompatChatModel) -> None:
    with pytest.raises(ModelError):
        model.complete([Message("user", "word " * 4000)], max_tokens=10)


def test_timeout_is_model_error(server: LlamaServer) -> None:
    m = OpenAICompatChatModel(server.url, timeout_s=0.05)
    t = time.monotonic()
    with pytest.raises(ModelError, match="timed out"):
        m.complete([Message("user", "Write a long essay about rivers.")], max_tokens=300)
    assert time.monotonic() - t < 5
    time.sleep(1)  # let the server finish the abandoned request before the next test


def test_server_killed_mid_stream(tmp_path: Path) -> None:
    srv = LlamaServer(gguf_05b(), tmp_path / "server.log")
    try:
        m = OpenAICompatChatModel(srv.url, timeout_s=30)
        stream = m.stream(
            [Message("user", "Write a long story about a lighthouse.")], max_tokens=400
        )
        first = next(stream)
        assert first
        srv.proc.send_signal(signal.SIGKILL)
        t = time.monotonic()
        with pytest.raises(ModelError, match=r"broke off|cannot reach|timed out"):
            for _ in stream:
                pass
        assert time.monotonic() - t < 30
    finally:
        srv.stop()
