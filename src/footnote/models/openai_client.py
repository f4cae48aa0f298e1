"""Plumbing shared by the OpenAI-compatible adapters: URL parsing, the retrying client,
message conversion, token estimates, and Hermes-style tool-call text parsing."""

from __future__ import annotations

import json
import os
import random
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit, urlunsplit

from footnote.errors import ConfigError, ModelError, ProviderUnavailable
from footnote.models.base import Message, ToolCallRequest, ToolSpec

T = TypeVar("T")
_CJK_RE = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]")
HERMES_RE = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


def parse_openai_url(url: str) -> tuple[str, str]:
    """(base_url, model) from `openai+http(s)://host:port/v1?model=NAME`."""
    parts = urlsplit(url)
    if parts.scheme not in ("openai+http", "openai+https"):
        raise ConfigError(f"not an OpenAI-compatible model URL: {url!r} (want openai+http(s)://…)")
    model = (parse_qs(parts.query).get("model") or [""])[0]
    if not model:
        raise ConfigError(f"model URL {url!r} names no model: add ?model=NAME")
    base = urlunsplit(
        (parts.scheme.removeprefix("openai+"), parts.netloc, parts.path.rstrip("/"), "", "")
    )
    return base, model


def approx_tokens(text: str) -> int:
    """Tokens without the server's tokenizer: one per CJK character, ~4 chars per other token."""
    cjk = len(_CJK_RE.findall(text))
    rest = len(text) - cjk
    return cjk + (rest + 3) // 4


def openai_module() -> Any:
    try:
        import openai
    except ImportError as exc:
        raise ProviderUnavailable(
            "the openai client is not installed: pip install 'openai>=1.40'"
        ) from exc
    return openai


_POOLS: dict[tuple[str, str, float], Any] = {}
_POOLS_LOCK = threading.Lock()


def shared_client(base_url: str, key: str, timeout_s: float) -> Any:
    """One `openai.OpenAI` client, hence one HTTP connection pool with keep-alive, per
    (server, key, timeout): every role bound to a model name on the same server (vLLM serving
    several adapters, routed by the `model` field) shares its connections."""
    with _POOLS_LOCK:
        client = _POOLS.get((base_url, key, timeout_s))
        if client is None:
            client = openai_module().OpenAI(
                api_key=key, base_url=base_url, timeout=timeout_s, max_retries=0
            )
            _POOLS[(base_url, key, timeout_s)] = client
        return client


class RetryingClient:
    """An `openai.OpenAI` client with our retry policy and error mapping."""

    def __init__(
        self,
        url: str,
        api_key_env: str,
        timeout_s: float,
        max_retries: int,
        sleep: Callable[[float], None],
    ) -> None:
        self.base_url, self.model = parse_openai_url(url)
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.sleep = sleep
        self.label = f"{self.model}@{self.base_url}"
        key = os.environ.get(api_key_env, "") if api_key_env else ""
        self.client = shared_client(self.base_url, key or "none", timeout_s)

    def retry_delay(self, exc: Exception, attempt: int) -> float:
        response = getattr(exc, "response", None)
        header = response.headers.get("retry-after") if response is not None else None
        if header:
            try:
                return min(60.0, max(0.0, float(header)))
            except ValueError:
                pass
        return float(min(30.0, 0.5 * 2**attempt + random.uniform(0, 0.1)))

    def call(self, fn: Callable[[], T], *, retries: int | None = None) -> T:
        openai = openai_module()
        limit = self.max_retries if retries is None else retries
        attempt = 0
        while True:
            try:
                return fn()
            except openai.APITimeoutError as exc:
                raise ModelError(f"{self.label}: timed out after {self.timeout_s:g}s") from exc
            except (
                openai.RateLimitError,
                openai.InternalServerError,
                openai.APIConnectionError,
            ) as exc:
                if attempt >= limit:
                    raise self.map_error(exc) from exc
                self.sleep(self.retry_delay(exc, attempt))
                attempt += 1
            except openai.APIError as exc:
                raise self.map_error(exc) from exc

    def map_error(self, exc: Exception) -> ModelError:
        openai = openai_module()
        if isinstance(exc, openai.APITimeoutError):
            return ModelError(f"{self.label}: timed out after {self.timeout_s:g}s")
        if isinstance(exc, openai.APIConnectionError):
            return ProviderUnavailable(f"{self.label}: cannot reach the server: {exc}")
        status = getattr(exc, "status_code", None)
        if status == 503:
            return ProviderUnavailable(f"{self.label}: service unavailable (503): {exc}")
        if status is not None:
            return ModelError(f"{self.label}: server answered {status}: {exc}")
        return ModelError(f"{self.label}: {exc}")


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages as OpenAI chat messages (tool turns included)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            d["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in m.tool_calls
            ]
        if m.tool_call_id is not None:
            d["tool_call_id"] = m.tool_call_id
        if m.name is not None and m.role == "tool":
            d["name"] = m.name
        out.append(d)
    return out


def hermes_calls(text: str, tools: Sequence[ToolSpec]) -> tuple[ToolCallRequest, ...]:
    """Tool calls written as `<tool_call>{"name", "arguments"}</tool_call>` text (Qwen/Hermes)."""
    names = {t.name for t in tools}
    calls: list[ToolCallRequest] = []
    for i, m in enumerate(HERMES_RE.finditer(text)):
        try:
            obj = json.loads(m.group(1))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and obj.get("name") in names:
            args = obj.get("arguments", {})
            raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            calls.append(ToolCallRequest(id=f"call_{i}", name=str(obj["name"]), arguments=raw))
    return tuple(calls)
