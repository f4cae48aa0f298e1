"""The response cache: temperature-0 repeats of a model call served from memory, or from
Redis when `models.response_cache_url` names one (shared by every process and API replica,
entries expire after `models.response_cache_ttl_s`; a Redis that cannot be reached is a miss,
never an error)."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from footnote.models.base import Completion, Message, ToolCallRequest

log = logging.getLogger(__name__)


class ResponseCache:
    """LRU of completions keyed by model + messages + call options (temperature 0 only)."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._d: OrderedDict[str, Completion] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(model: str, messages: Sequence[Message], options: dict[str, Any]) -> str:
        payload = json.dumps(
            [model, [asdict(m) for m in messages], options], sort_keys=True, default=str
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def get(self, key: str) -> Completion | None:
        with self._lock:
            hit = self._d.get(key)
            if hit is not None:
                self._d.move_to_end(key)
            return hit

    def put(self, key: str, value: Completion) -> None:
        if self.maxsize <= 0:
            return
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.maxsize:
                self._d.popitem(last=False)


def completion_json(c: Completion) -> str:
    """A completion as JSON (its raw provider payload left out)."""
    d = asdict(c)
    d.pop("raw", None)
    return json.dumps(d, ensure_ascii=False)


def completion_from_json(text: str) -> Completion:
    """The completion `completion_json` wrote."""
    d = json.loads(text)
    return Completion(
        d["text"],
        tool_calls=tuple(ToolCallRequest(**t) for t in d.get("tool_calls", ())),
        tokens_in=int(d.get("tokens_in", 0)),
        tokens_out=int(d.get("tokens_out", 0)),
        finish_reason=str(d.get("finish_reason", "stop")),
        top_logprobs=tuple(dict(t) for t in d.get("top_logprobs", ())),
        model=str(d.get("model", "")),
    )


class RedisResponseCache(ResponseCache):
    """The same cache in Redis (`footnote:llm:<key>` strings with a TTL)."""

    def __init__(self, url: str, ttl_s: int) -> None:
        import redis

        super().__init__(0)
        self.ttl_s = ttl_s
        self.client: Any = redis.Redis.from_url(url, socket_timeout=2, decode_responses=True)

    @staticmethod
    def redis_key(key: str) -> str:
        """Where one entry lives."""
        return f"footnote:llm:{key}"

    def get(self, key: str) -> Completion | None:
        try:
            text = self.client.get(self.redis_key(key))
        except Exception as exc:
            log.warning("response cache unreachable (%s): a miss", exc)
            return None
        return completion_from_json(text) if text else None

    def put(self, key: str, value: Completion) -> None:
        try:
            self.client.set(self.redis_key(key), completion_json(value), ex=self.ttl_s)
        except Exception as exc:
            log.warning("response cache unreachable (%s): not stored", exc)


def response_cache(size: int, url: str = "", ttl_s: int = 86_400) -> ResponseCache:
    """The cache the settings ask for: Redis when `url` is set, else in-process LRU of `size`."""
    return RedisResponseCache(url, ttl_s) if url else ResponseCache(size)
