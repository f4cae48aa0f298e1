"""Embedded generative model on llama.cpp (llama-cpp-python), loaded once per process.

Roles bound to the same `local:<name>` share one `Llama` instance behind a lock. The chat
template comes from the GGUF metadata. JSON schemas are enforced with a grammar; tool calls
are emulated with a schema'd `{"tool", "arguments"} | {"final"}` reply (see `jsontext`).
Top log-probabilities are read from the raw logits of each generated step, which avoids
`logits_all=True` (that would allocate n_ctx x vocab floats, ~5 GB at n_ctx 8192).
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from footnote.errors import ModelError, ProviderUnavailable
from footnote.models.base import Capabilities, Completion, Message, ToolSpec
from footnote.models.jsontext import parse_tool_reply, render_tool_turns, tool_call_schema
from footnote.models.weights import ensure_gguf

INSTALL_HINT = (
    "pip install llama-cpp-python==0.3.36 (it compiles from source; for a portable wheel use "
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" '
    "pip wheel --no-deps llama-cpp-python==0.3.36)"
)

_REGISTRY: dict[tuple[str, int, int, bool], tuple[Any, threading.Lock]] = {}
_REGISTRY_LOCK = threading.Lock()


def _llama_module() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ProviderUnavailable(f"llama-cpp-python is not installed: {INSTALL_HINT}") from exc
    return llama_cpp


def shared_llama(
    path: Path, n_ctx: int, n_threads: int, vocab_only: bool = False
) -> tuple[Any, threading.Lock]:
    """The process-wide `Llama` for these parameters, and the lock that serialises its calls."""
    key = (str(path), n_ctx, n_threads, vocab_only)
    with _REGISTRY_LOCK:
        hit = _REGISTRY.get(key)
        if hit is not None:
            return hit
        llama_cpp = _llama_module()
        try:
            llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                vocab_only=vocab_only,
                verbose=False,
            )
        except Exception as exc:
            raise ModelError(f"llama.cpp could not load {path}: {exc}") from exc
        entry = (llm, threading.Lock())
        _REGISTRY[key] = entry
        return entry


class _LogprobCapture:
    """A logits processor that records the top-k log-probabilities of each sampled step."""

    def __init__(self, llm: Any, k: int, steps: int) -> None:
        self.llm = llm
        self.k = k
        self.steps = steps
        self.captured: list[dict[str, float]] = []

    def __call__(self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]) -> Any:
        if len(self.captured) < self.steps:
            s = np.asarray(scores, dtype=np.float64)
            m = float(s.max())
            lse = m + math.log(float(np.exp(s - m).sum()))
            k = min(self.k, s.shape[0])
            idx = np.argpartition(-s, k - 1)[:k]
            top: dict[str, float] = {}
            for i in idx[np.argsort(-s[idx])]:
                piece = self.llm.detokenize([int(i)]).decode("utf-8", errors="replace")
                lp = float(s[i]) - lse
                top[piece] = float(np.logaddexp(top[piece], lp)) if piece in top else lp
            self.captured.append(top)
        return scores


def _dicts(messages: Sequence[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


class LlamaCppChatModel:
    """A `ChatModel` on an embedded GGUF model (`local:qwen2.5-coder-1.5b` etc.)."""

    external = False

    def __init__(
        self,
        model: str,
        *,
        cache_dir: Path | None = None,
        n_ctx: int = 8192,
        n_threads: int = 0,
        model_path: Path | None = None,
    ) -> None:
        self.model = model
        self.name = f"local:{model}"
        self.cache_dir = cache_dir
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self._path = model_path

    def path(self) -> Path:
        """The GGUF file, assembled from its part packages on first use."""
        if self._path is None:
            self._path = ensure_gguf(self.model, self.cache_dir)
        return self._path

    def _llm(self) -> tuple[Any, threading.Lock]:
        _llama_module()
        return shared_llama(self.path(), self.n_ctx, self.n_threads)

    def load(self) -> None:
        """Load the model now (otherwise the first call does)."""
        self._llm()

    def capabilities(self) -> Capabilities:
        """Tools are emulated (so `tools=False`); schemas by grammar; logprobs from logits."""
        return Capabilities(
            json_schema=True, tools=False, logprobs=True, context_length=self.n_ctx, streaming=True
        )

    def _grammar(self, schema: dict[str, Any]) -> Any:
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        try:
            return LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        except Exception:
            # A schema the converter cannot express: still force syntactically valid JSON.
            return LlamaGrammar.from_string(JSON_GBNF, verbose=False)

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
        """One completion; grammar-constrained when a schema or tools are given."""
        llm, lock = self._llm()
        msgs = render_tool_turns(messages, tools) if tools else list(messages)
        schema = tool_call_schema(tools) if tools else json_schema
        kwargs: dict[str, Any] = {}
        if schema is not None:
            kwargs["grammar"] = self._grammar(schema)
        capture = _LogprobCapture(llm, logprobs, max_tokens) if logprobs > 0 else None
        if capture is not None:
            kwargs["logits_processor"] = [capture]
        with lock:
            try:
                resp = llm.create_chat_completion(
                    messages=_dicts(msgs),
                    max_tokens=max_tokens,
                    temperature=temperature,
                    stop=list(stop) or None,
                    seed=0,
                    **kwargs,
                )
            except Exception as exc:
                raise ModelError(f"{self.name}: {exc}") from exc
        choice = resp["choices"][0]
        text = choice["message"].get("content") or ""
        usage = resp.get("usage") or {}
        calls: tuple[Any, ...] = ()
        if tools:
            text, calls = parse_tool_reply(text, tools)
        return Completion(
            text,
            tool_calls=calls,
            tokens_in=int(usage.get("prompt_tokens", 0)),
            tokens_out=int(usage.get("completion_tokens", 0)),
            finish_reason=str(choice.get("finish_reason") or "stop"),
            top_logprobs=tuple(capture.captured) if capture is not None else (),
            model=self.name,
        )

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Iterator[str]:
        """Text deltas; closing the iterator stops generation and frees the model."""
        llm, lock = self._llm()
        with lock:
            try:
                chunks = llm.create_chat_completion(
                    messages=_dicts(messages),
                    max_tokens=max_tokens,
                    temperature=temperature,
                    stop=list(stop) or None,
                    seed=0,
                    stream=True,
                )
                for chunk in chunks:
                    delta = chunk["choices"][0].get("delta") or {}
                    piece = delta.get("content")
                    if piece:
                        yield piece
            except GeneratorExit:
                raise
            except Exception as exc:
                raise ModelError(f"{self.name}: {exc}") from exc

    def count_tokens(self, text: str) -> int:
        """Exact token count in the model's vocabulary (loads only the vocab if needed)."""
        key = (str(self.path()), self.n_ctx, self.n_threads, False)
        with _REGISTRY_LOCK:
            loaded = _REGISTRY.get(key)
        llm = loaded[0] if loaded else shared_llama(self.path(), 512, 1, vocab_only=True)[0]
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))
