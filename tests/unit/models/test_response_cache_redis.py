"""`models.response_cache_url`: the response cache in a real Redis, shared by two processes'
model roles (two `ModelRoles` here: each process builds its own); unreachable Redis is a miss."""

from __future__ import annotations

import uuid

import pytest
from models_fakes import ProbeModel, roles_with, settings

from footnote.models.base import Completion, Message, ToolCallRequest
from footnote.models.cache import RedisResponseCache, completion_from_json, completion_json

LOCAL = "local:qwen2.5-coder-1.5b"
REDIS = "redis://127.0.0.1:6379/0"


def _redis_or_skip() -> None:
    import redis

    try:
        redis.Redis.from_url(REDIS, socket_timeout=1).ping()
    except Exception as exc:
        pytest.skip(f"no Redis on 127.0.0.1:6379 ({exc}); .ci/run starts one")


def test_completion_round_trips_through_json() -> None:
    c = Completion("yes", tool_calls=(ToolCallRequest("t1", "search", '{"q": 1}'),),
                   tokens_in=3, tokens_out=1, top_logprobs=({"yes": -0.1, "no": -2.3},),
                   model="m", raw={"big": "x" * 10})  # fmt: skip
    back = completion_from_json(completion_json(c))
    assert back == Completion("yes", tool_calls=c.tool_calls, tokens_in=3, tokens_out=1,
                              top_logprobs=c.top_logprobs, model="m")  # fmt: skip


def test_two_processes_share_the_cache_in_redis() -> None:
    _redis_or_skip()
    s = settings(judge=LOCAL).model_copy(
        update={"response_cache_url": REDIS, "response_cache_ttl_s": 60}
    )
    msg = [Message("user", f"is this supported? {uuid.uuid4().hex}")]  # fresh key per run
    first, second = ProbeModel("p", "yes"), ProbeModel("p", "yes")
    a = roles_with({LOCAL: first}, s).chat("judge")
    b = roles_with({LOCAL: second}, s).chat("judge")
    assert isinstance(a.cache, RedisResponseCache)
    before = set(a.cache.client.scan_iter("footnote:llm:*", count=1000))  # other runs' keys
    out_a = a.complete(msg, labels=(), cache=True, max_tokens=1)
    out_b = b.complete(msg, labels=(), cache=True, max_tokens=1)
    assert len(first.calls) == 1 and second.calls == []  # B was served A's answer
    assert out_b.text == out_a.text == "yes"
    (key,) = set(a.cache.client.scan_iter("footnote:llm:*", count=1000)) - before
    assert 0 < a.cache.client.ttl(key) <= 60  # response_cache_ttl_s


def test_the_in_process_cache_is_not_shared() -> None:
    msg = [Message("user", "same question")]
    first, second = ProbeModel("p", "yes"), ProbeModel("p", "yes")
    roles_with({LOCAL: first}, settings(judge=LOCAL)).chat("judge").complete(
        msg, labels=(), cache=True, max_tokens=1
    )
    roles_with({LOCAL: second}, settings(judge=LOCAL)).chat("judge").complete(
        msg, labels=(), cache=True, max_tokens=1
    )
    assert len(first.calls) == len(second.calls) == 1


def test_an_unreachable_redis_is_a_miss_not_an_error() -> None:
    s = settings(judge=LOCAL).model_copy(update={"response_cache_url": "redis://127.0.0.1:9/0"})
    m = ProbeModel("p", "yes")
    rm = roles_with({LOCAL: m}, s).chat("judge")
    msg = [Message("user", "q")]
    rm.complete(msg, labels=(), cache=True, max_tokens=1)
    rm.complete(msg, labels=(), cache=True, max_tokens=1)
    assert len(m.calls) == 2
