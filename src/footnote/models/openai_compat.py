"""Any OpenAI-compatible server (vLLM, llama.cpp server, Ollama, hosted APIs) as a ChatModel.

URL form: `openai+http://host:port/v1?model=NAME` (or `openai+https://…`). `capabilities()`
probes once — /v1/models for the context length where the server reports it, a tiny tools
call, a tiny JSON-schema call, a tiny logprobs call — and each missing feature degrades in
place (tools are emulated with a JSON reply, schemas fall back to `json_object`), never to
another provider. Retries: 429 / 5xx / connection errors, at most 3, exponential backoff,
`Retry-After` honoured. Timeouts are not retried.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from footnote.errors import ModelError, ProviderUnavailable
from footnote.models.base import Capabilities, Completion, Message, ToolCallRequest, ToolSpec
from footnote.models.jsontext import (
    find_json_object,
    parse_tool_reply,
    render_tool_turns,
    tool_call_schema,
)
from footnote.models.openai_client import (
    HERMES_RE,
    RetryingClient,
    approx_tokens,
    hermes_calls,
    parse_openai_url,
    to_openai_messages,
)

__all__ = ["OpenAICompatChatModel", "OpenAICompatEmbedder", "approx_tokens", "parse_openai_url"]

_CTX_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx")

_PROBE_TOOL = ToolSpec(
    "get_time",
    "Get the current time in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
_PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"probe_ok": {"type": "boolean"}},
    "required": ["probe_ok"],
}


class OpenAICompatChatModel:
    """A ChatModel on an OpenAI-compatible `/v1/chat/completions` endpoint."""

    def __init__(
        self,
        url: str,
        *,
        api_key_env: str = "",
        timeout_s: float = 120.0,
        external: bool = True,
        max_retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._c = RetryingClient(url, api_key_env, timeout_s, max_retries, sleep)
        self.url = url
        self.name = url
        self.model = self._c.model
        self.external = external
        self._caps: Capabilities | None = None
        self.json_mode: str | None = None
        """'json_schema', 'json_object_schema' (llama.cpp style), 'json_object' or None."""
        self._caps_lock = threading.Lock()

    # -- capabilities -------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        """Probe once (server unreachable: ProviderUnavailable, nothing cached)."""
        with self._caps_lock:
            if self._caps is None:
                ctx = self._probe_context()
                tools = self._probe(self._probe_tools)
                self.json_mode = self._probe_json()
                logprobs = self._probe(self._probe_logprobs)
                self._caps = Capabilities(
                    json_schema=self.json_mode in ("json_schema", "json_object_schema"),
                    tools=tools,
                    logprobs=logprobs,
                    context_length=ctx,
                    streaming=True,
                )
            return self._caps

    def _probe(self, fn: Callable[[], bool]) -> bool:
        try:
            return fn()
        except ProviderUnavailable:
            raise
        except ModelError:
            return False

    def _probe_context(self) -> int:
        models = self._c.call(lambda: self._c.client.models.list(), retries=1)
        for entry in getattr(models, "data", []) or []:
            d = entry.model_dump() if hasattr(entry, "model_dump") else dict(entry)
            if d.get("id") not in (self.model, None) and len(models.data) > 1:
                continue
            meta = d.get("meta") or {}
            for key in _CTX_KEYS:
                for src in (d, meta):
                    if isinstance(src.get(key), int) and src[key] > 0:
                        return int(src[key])
            if isinstance(meta.get("n_ctx_train"), int):
                return int(meta["n_ctx_train"])
        return Capabilities().context_length

    def _tiny(self, **kw: Any) -> Any:
        return self._c.call(
            lambda: self._c.client.chat.completions.create(
                model=self.model, temperature=0, timeout=min(self._c.timeout_s, 60.0), **kw
            ),
            retries=0,
        )

    def _probe_tools(self) -> bool:
        r = self._tiny(
            messages=[{"role": "user", "content": "What time is it in Paris? Use the tool."}],
            tools=[self._tool_dict(_PROBE_TOOL)],
            tool_choice="auto",
            max_tokens=48,
        )
        msg = r.choices[0].message
        return bool(msg.tool_calls) or bool(hermes_calls(msg.content or "", [_PROBE_TOOL]))

    def _probe_json(self) -> str | None:
        ask = [{"role": "user", "content": "Reply with a JSON object."}]
        formats: list[tuple[str, dict[str, Any]]] = [
            (
                "json_schema",
                {"type": "json_schema", "json_schema": {"name": "probe", "schema": _PROBE_SCHEMA}},
            ),
            ("json_object_schema", {"type": "json_object", "schema": _PROBE_SCHEMA}),
        ]
        for mode, fmt in formats:
            try:
                r = self._tiny(messages=ask, response_format=fmt, max_tokens=24)
                value = find_json_object(r.choices[0].message.content or "")
            except ProviderUnavailable:
                raise
            except (ModelError, ValueError):
                continue
            if isinstance(value, dict) and isinstance(value.get("probe_ok"), bool):
                return mode
        try:
            r = self._tiny(messages=ask, response_format={"type": "json_object"}, max_tokens=24)
            find_json_object(r.choices[0].message.content or "")
            return "json_object"
        except ProviderUnavailable:
            raise
        except (ModelError, ValueError):
            return None

    def _probe_logprobs(self) -> bool:
        r = self._tiny(
            messages=[{"role": "user", "content": "Say yes."}],
            max_tokens=1,
            logprobs=True,
            top_logprobs=2,
        )
        lp = r.choices[0].logprobs
        return bool(lp and lp.content and lp.content[0].top_logprobs)

    # -- calls --------------------------------------------------------------------------
    @staticmethod
    def _tool_dict(t: ToolSpec) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        if self.json_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
        if self.json_mode == "json_object_schema":
            return {"type": "json_object", "schema": schema}
        if self.json_mode == "json_object":
            return {"type": "json_object"}
        return None

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        json_schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] = (),
        logprobs: int = 0,
    ) -> Completion:
        """One completion, using each feature natively where the probe found it."""
        caps = self.capabilities() if (tools or json_schema is not None or logprobs) else None
        kw: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
        if stop:
            kw["stop"] = list(stop)
        emulate = bool(tools) and caps is not None and not caps.tools
        msgs = render_tool_turns(messages, tools) if emulate else list(messages)
        if tools and not emulate:
            kw["tools"] = [self._tool_dict(t) for t in tools]
        schema = tool_call_schema(tools) if emulate else json_schema
        if schema is not None and (fmt := self._response_format(schema)) is not None:
            kw["response_format"] = fmt
        if logprobs and caps is not None and caps.logprobs:
            kw["logprobs"] = True
            kw["top_logprobs"] = min(logprobs, 20)
        r = self._c.call(
            lambda: self._c.client.chat.completions.create(
                model=self.model, messages=to_openai_messages(msgs), **kw
            )
        )
        choice = r.choices[0]
        text = choice.message.content or ""
        calls: tuple[ToolCallRequest, ...] = tuple(
            ToolCallRequest(id=c.id, name=c.function.name, arguments=c.function.arguments or "{}")
            for c in (choice.message.tool_calls or ())
            if getattr(c, "function", None) is not None
        )
        if emulate:
            text, calls = parse_tool_reply(text, tools)
        elif tools and not calls:
            calls = hermes_calls(text, tools)
            text = HERMES_RE.sub("", text).strip() if calls else text
        top: tuple[dict[str, float], ...] = ()
        if choice.logprobs is not None and choice.logprobs.content:
            top = tuple(
                {alt.token: float(alt.logprob) for alt in (tok.top_logprobs or [])}
                for tok in choice.logprobs.content
            )
        usage = r.usage
        return Completion(
            text,
            tool_calls=calls,
            tokens_in=(
                int(usage.prompt_tokens) if usage else sum(approx_tokens(m.content) for m in msgs)
            ),
            tokens_out=int(usage.completion_tokens) if usage else approx_tokens(text),
            finish_reason=str(choice.finish_reason or "stop"),
            top_logprobs=top,
            model=self.name,
        )

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        cancel: threading.Event | None = None,
    ) -> Iterator[str]:
        """Text deltas. Closing the iterator or setting `cancel` closes the HTTP stream."""
        kw: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature, "stream": True}
        if stop:
            kw["stop"] = list(stop)
        response = self._c.call(
            lambda: self._c.client.chat.completions.create(
                model=self.model, messages=to_openai_messages(messages), **kw
            )
        )
        finished = False
        try:
            for chunk in response:
                if cancel is not None and cancel.is_set():
                    return
                if not chunk.choices:
                    continue
                piece = chunk.choices[0].delta.content
                finished = finished or chunk.choices[0].finish_reason is not None
                if piece:
                    yield piece
        except GeneratorExit:
            raise
        except Exception as exc:
            raise ModelError(f"{self._c.label}: the stream broke off: {exc}") from exc
        finally:
            response.close()
        if not finished:  # the connection closed before the model said it was done
            raise ModelError(f"{self._c.label}: the stream ended before the model finished")

    def count_tokens(self, text: str) -> int:
        """An estimate (`approx_tokens`): the server's tokenizer is not available here."""
        return approx_tokens(text)


class OpenAICompatEmbedder:
    """An Embedder on `/v1/embeddings` (the scale-out path); vectors are re-normalised."""

    def __init__(
        self,
        url: str,
        *,
        api_key_env: str = "",
        timeout_s: float = 120.0,
        external: bool = True,
        batch_size: int = 64,
        max_retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._c = RetryingClient(url, api_key_env, timeout_s, max_retries, sleep)
        self.name = url
        self.external = external
        self.batch_size = batch_size
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        """Vector size (found by embedding a probe text on first use)."""
        if self._dim is None:
            self._dim = int(self._embed(["dimension probe"]).shape[1])
        return self._dim

    def _embed(self, texts: list[str]) -> Any:
        import numpy as np

        from footnote.models.embedders import normalise

        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            batch = texts[i : i + self.batch_size]
            r = self._c.call(
                lambda b=batch: self._c.client.embeddings.create(model=self._c.model, input=b)  # type: ignore[misc]
            )
            rows += [d.embedding for d in sorted(r.data, key=lambda d: d.index)]
        out = normalise(np.asarray(rows, dtype=np.float32))
        self._dim = int(out.shape[1])
        return out

    def embed_passages(self, texts: Sequence[str]) -> Any:
        """Passages, shape (n, dim)."""
        if not texts:
            import numpy as np

            return np.zeros((0, self.dim), dtype=np.float32)
        return self._embed(list(texts))

    def embed_query(self, text: str) -> Any:
        """One query, shape (dim,)."""
        return self._embed([text])[0]
