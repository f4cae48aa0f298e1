"""Embedded generative model on llama.cpp (llama-cpp-python), loaded once per process.

Roles bound to the same `local:<name>` share one `Llama` instance behind a lock. The chat
template comes from the GGUF metadata. JSON schemas are enforced with a grammar; tool calls
are emulated with a schema'd `{"tool", "arguments"} | {"final"}` reply (see `jsontext`).
Top log-probabilities are read from the raw logits of each generated step, which avoids
`logits_all=True` (that would allocate n_ctx x vocab floats, ~5 GB at n_ctx 8192).

Prompt processing is most of a call's time on a CPU (a 900-token system prompt takes 10-20 s
on 2 cores), and the roles' system prompts repeat from question to question while the calls
between them differ (understand, Cypher, compose, judge take turns). llama.cpp reuses only
the last call's prefix; the prefix-state cache (`models.prefix_cache_mb`) keeps the states of
recent prompts (their KV cells, never the logits) and restores the one sharing the longest
prefix, so only the differing tail is evaluated. Prompts are evaluated in batches aligned to
fixed positions (`PREFIX_BATCH`), whether a prefix was reused or not, so a reply is bit for
bit the one a fresh evaluation gives (a tail batched differently sums in another order, and a
greedy tie can then break the other way: seen on graph QA before the alignment).
"""

from __future__ import annotations

import ctypes
import functools
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

PREFIX_BATCH = 128
"""Prompt batch size, and the granularity at which a reused prefix is cut (a reused prefix
loses at most this many tokens; batches aligned to it keep reuse bit-exact)."""
_REGISTRY: dict[tuple[str, int, int, bool, int], tuple[Any, threading.Lock]] = {}
_REGISTRY_LOCK = threading.Lock()


def _llama_module() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ProviderUnavailable(f"llama-cpp-python is not installed: {INSTALL_HINT}") from exc
    return llama_cpp


def shared_llama(
    path: Path, n_ctx: int, n_threads: int, vocab_only: bool = False, prefix_cache_mb: int = 0
) -> tuple[Any, threading.Lock]:
    """The process-wide `Llama` for these parameters, and the lock that serialises its calls;
    `prefix_cache_mb` > 0 keeps that many MB of recent prompt states (`PrefixStateLlama`)."""
    key = (str(path), n_ctx, n_threads, vocab_only, prefix_cache_mb)
    with _REGISTRY_LOCK:
        hit = _REGISTRY.get(key)
        if hit is not None:
            return hit
        llama_cpp = _llama_module()
        try:
            llm = _prefix_state_llama()(
                model_path=str(path),
                n_ctx=n_ctx,
                n_batch=PREFIX_BATCH,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                vocab_only=vocab_only,
                verbose=False,
            )
        except Exception as exc:
            raise ModelError(f"llama.cpp could not load {path}: {exc}") from exc
        if prefix_cache_mb > 0 and not vocab_only:
            llm.set_cache(llama_cpp.LlamaRAMCache(capacity_bytes=prefix_cache_mb << 20))
        entry = (llm, threading.Lock())
        _REGISTRY[key] = entry
        return entry


@functools.cache
def _prefix_state_llama() -> Any:
    """`llama_cpp.Llama` whose saved states hold the KV cells and token ids but not the logits
    rows (the stock `save_state` copies n_batch x vocab floats, 311 MB for Qwen, which the
    cache's capacity does not count), and which counts the tokens it evaluates."""
    llama_cpp = _llama_module()

    class PrefixStateLlama(llama_cpp.Llama):  # type: ignore[misc,name-defined]
        evaluated = 0
        """Prompt and generated tokens run through the model (restored prefixes are not)."""
        n_tokens: int
        _requires_eval: bool
        _seed: int

        def eval(self, tokens: Sequence[int]) -> None:
            # a prompt's tail after a reused prefix starts at the prefix's last batch boundary,
            # so every batch covers the same positions as in a fresh evaluation: the same
            # shapes, kernels and order of sums, hence the same bits (not only "close")
            if self._requires_eval and (cut := self.n_tokens % self.n_batch):
                start = self.n_tokens - cut
                tokens = [*self.input_ids[start : self.n_tokens].tolist(), *tokens]
                self.n_tokens = start
            self.evaluated += len(tokens)
            super().eval(tokens)

        def save_state(self) -> Any:
            size = llama_cpp.llama_state_get_size(self._ctx.ctx)
            buf = (ctypes.c_uint8 * int(size))()
            n = int(llama_cpp.llama_state_get_data(self._ctx.ctx, buf, size))
            if n > int(size):
                raise RuntimeError("llama.cpp wrote more state than it asked for")
            return llama_cpp.LlamaState(
                scores=np.empty((0, self.n_vocab()), dtype=np.single),
                input_ids=self.input_ids[: self.n_tokens].copy(),
                n_tokens=self.n_tokens,
                llama_state=bytes(buf)[:n],
                llama_state_size=n,
                seed=self._seed,
            )

        def load_state(self, state: Any) -> None:
            # sampling reads the context's logits, and `generate` evaluates at least the last
            # prompt token after a restore (`_requires_eval`), so no logits rows are needed
            self.input_ids[: state.n_tokens] = state.input_ids
            self.n_tokens = state.n_tokens
            self._requires_eval = True
            self._seed = state.seed
            buf = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
            if llama_cpp.llama_state_set_data(self._ctx.ctx, buf, state.llama_state_size) != (
                state.llama_state_size
            ):
                raise RuntimeError("llama.cpp could not restore a saved state")

    return PrefixStateLlama


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
        prefix_cache_mb: int = 0,
    ) -> None:
        self.model = model
        self.prefix_cache_mb = prefix_cache_mb
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
        return shared_llama(
            self.path(), self.n_ctx, self.n_threads, prefix_cache_mb=self.prefix_cache_mb
        )

    def evaluated_tokens(self) -> int:
        """Tokens this model's llama.cpp instance has evaluated (0 before it is loaded)."""
        key = (str(self.path()), self.n_ctx, self.n_threads, False, self.prefix_cache_mb)
        with _REGISTRY_LOCK:
            loaded = _REGISTRY.get(key)
        return int(getattr(loaded[0], "evaluated", 0)) if loaded else 0

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
        key = (str(self.path()), self.n_ctx, self.n_threads, False, self.prefix_cache_mb)
        with _REGISTRY_LOCK:
            loaded = _REGISTRY.get(key)
        llm = loaded[0] if loaded else shared_llama(self.path(), 512, 1, vocab_only=True)[0]
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))
