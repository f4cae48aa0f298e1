"""Model roles: explicit bindings, the usage ledger, budgets and the licence gate.

`build_roles(settings)` reads one `ModelBinding` per role. `roles.chat(role)` gives a
`RoleModel`, which every pipeline call goes through: it refuses labelled text for external
models (or reroutes it to the local model when allowed), checks and charges the budget,
serves temperature-0 repeats from a response cache when asked, and writes one
`UsageRecord` per call. Nothing falls back silently: an unbound role is a `ConfigError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from footnote.config import ModelBinding, ModelSettings
from footnote.errors import ConfigError, LicenceRefused
from footnote.models.base import (
    ROLES,
    Capabilities,
    ChatModel,
    Completion,
    Embedder,
    Message,
    Vectors,
)
from footnote.models.budget import Budget
from footnote.models.cache import ResponseCache, response_cache
from footnote.models.factories import is_external, make_chat_model, make_embedder
from footnote.models.ledger import Ledger, UsageRecord

NO_EXTERNAL = "no-external-model"


@dataclass(frozen=True)
class BindingInfo:
    """A role's binding as shown in traces."""

    role: str
    url: str
    bound: bool
    external: bool


class RoleModel:
    """A chat model bound to a role, with gate, budget, cache and ledger in front."""

    def __init__(
        self,
        role: str,
        model: ChatModel,
        *,
        ledger: Ledger,
        external: bool,
        reroute: Callable[[], ChatModel] | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        self.role = role
        self.model = model
        self.ledger = ledger
        self.external = external
        self._reroute = reroute
        self.cache = cache

    @property
    def name(self) -> str:
        """The bound model's name."""
        return self.model.name

    def capabilities(self) -> Capabilities:
        """The bound model's (probed) capabilities."""
        return self.model.capabilities()

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` in the bound model's vocabulary (or an estimate for remote ones)."""
        return self.model.count_tokens(text)

    def may_see(self, labels: Sequence[str]) -> bool:
        """Whether text carrying `labels` may go to this role (bound or rerouted) at all."""
        return not self.external or NO_EXTERNAL not in labels or self._reroute is not None

    def _gate(self, labels: Sequence[str]) -> tuple[ChatModel, str]:
        """The model this call may use, and a ledger note when it was rerouted."""
        if not self.external or NO_EXTERNAL not in labels:
            return self.model, ""
        if self._reroute is None:
            raise LicenceRefused(self.role, NO_EXTERNAL, self.model.name)
        local = self._reroute()
        return local, f"rerouted from {self.model.name}: input labelled {NO_EXTERNAL}"

    def _record(
        self,
        run_id: str | None,
        model: str,
        t0: float,
        *,
        tokens_in: int = 0,
        tokens_out: int = 0,
        cache_hit: bool = False,
        error: str | None = None,
        note: str = "",
    ) -> None:
        self.ledger.record(
            UsageRecord(
                run_id=run_id,
                role=self.role,
                model=model,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                latency_s=time.monotonic() - t0,
                cache_hit=cache_hit,
                ok=error is None,
                error=error,
                note=note,
            )
        )

    def complete(
        self,
        messages: Sequence[Message],
        *,
        labels: Sequence[str],
        budget: Budget | None = None,
        run_id: str | None = None,
        cache: bool = False,
        note: str = "",
        **kw: Any,
    ) -> Completion:
        """One completion. `cache=True` serves identical temperature-0 calls from the cache."""
        model, reroute_note = self._gate(labels)
        note = "; ".join(n for n in (reroute_note, note) if n)
        t0 = time.monotonic()
        use_cache = cache and self.cache is not None and float(kw.get("temperature", 0.0)) == 0.0
        key = ResponseCache.key(model.name, messages, kw) if use_cache else ""
        if use_cache and self.cache is not None and (hit := self.cache.get(key)) is not None:
            self._record(
                run_id,
                model.name,
                t0,
                tokens_in=hit.tokens_in,
                tokens_out=hit.tokens_out,
                cache_hit=True,
                note=note,
            )
            return hit
        if budget is not None:
            budget.check()
        try:
            out = model.complete(messages, **kw)
        except Exception as exc:
            if budget is not None:
                budget.charge(0, 1)
            self._record(run_id, model.name, t0, error=f"{type(exc).__name__}: {exc}", note=note)
            raise
        if budget is not None:
            budget.charge(out.tokens_in + out.tokens_out, 1)
        self._record(
            run_id, model.name, t0, tokens_in=out.tokens_in, tokens_out=out.tokens_out, note=note
        )
        if use_cache and self.cache is not None:
            self.cache.put(key, out)
        return out

    def stream(
        self,
        messages: Sequence[Message],
        *,
        labels: Sequence[str],
        budget: Budget | None = None,
        run_id: str | None = None,
        cancel: threading.Event | None = None,
        cache: bool = False,
        **kw: Any,
    ) -> Iterator[str]:
        """Text deltas; usage is recorded when the stream ends, breaks or is closed.

        Setting `cancel` (or closing the iterator) stops generation at the next delta.
        `cache=True` serves an identical temperature-0 call from the response cache as one
        delta, and stores a stream that ran to its end (never a cancelled or failed one).
        """
        model, note = self._gate(labels)
        use_cache = cache and self.cache is not None and float(kw.get("temperature", 0.0)) == 0.0
        key = ResponseCache.key(model.name, messages, {"stream": True, **kw}) if use_cache else ""
        if use_cache and self.cache is not None and (hit := self.cache.get(key)) is not None:
            self._record(
                run_id,
                model.name,
                time.monotonic(),
                tokens_in=hit.tokens_in,
                tokens_out=hit.tokens_out,
                cache_hit=True,
                note=note,
            )
            return iter([hit.text] if hit.text else [])
        if budget is not None:
            budget.check()
        return self._stream(model, note, messages, budget, run_id, cancel, kw, key)

    def _stream(
        self,
        model: ChatModel,
        note: str,
        messages: Sequence[Message],
        budget: Budget | None,
        run_id: str | None,
        cancel: threading.Event | None,
        kw: dict[str, Any],
        cache_key: str = "",
    ) -> Iterator[str]:
        t0 = time.monotonic()
        finished = False
        pieces: list[str] = []
        error: str | None = None
        inner = model.stream(messages, **kw)
        try:
            for piece in inner:
                if cancel is not None and cancel.is_set():
                    note = "; ".join(n for n in (note, "cancelled") if n)
                    break
                pieces.append(piece)
                yield piece
            else:
                finished = True
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            close = getattr(inner, "close", None)
            if close is not None:
                close()
            tokens_in = sum(model.count_tokens(m.content) for m in messages) if error is None else 0
            tokens_out = model.count_tokens("".join(pieces)) if pieces else 0
            if budget is not None:
                budget.charge(tokens_in + tokens_out, 1)
            self._record(
                run_id,
                model.name,
                t0,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                error=error,
                note=note,
            )
            if finished and error is None and cache_key and self.cache is not None:
                self.cache.put(
                    cache_key,
                    Completion("".join(pieces), tokens_in=tokens_in, tokens_out=tokens_out),
                )


class RoleEmbedder:
    """The `embed` role: its embedder with the licence gate in front. Text labelled
    `no-external-model` never reaches an external embedder (no reroute: vectors from another
    model would not share the index's space)."""

    def __init__(self, inner: Embedder, *, url: str, external: bool) -> None:
        self.inner = inner
        self.url = url
        self.name = inner.name
        self.external = external

    @property
    def dim(self) -> int:
        """The inner embedder's vector size (a remote one is probed on first use)."""
        return self.inner.dim

    def gate(self, labels: Sequence[str]) -> None:
        """LicenceRefused when text with these labels may not be embedded here."""
        if self.external and NO_EXTERNAL in labels:
            raise LicenceRefused("embed", NO_EXTERNAL, self.url)

    def embed_passages(self, texts: Sequence[str], *, labels: Sequence[str]) -> Vectors:
        """Passages carrying `labels`, after the gate."""
        self.gate(labels)
        return self.inner.embed_passages(texts)

    def embed_query(self, text: str, *, labels: Sequence[str]) -> Vectors:
        """One query carrying `labels`, after the gate."""
        self.gate(labels)
        return self.inner.embed_query(text)

    def fixed(self, labels: Sequence[str]) -> Embedder:
        """A plain `Embedder` whose every call carries `labels` (for code that embeds one
        labelled collection, e.g. a graph's entity names)."""
        return _FixedLabels(self, tuple(labels))


class _FixedLabels:
    def __init__(self, role: RoleEmbedder, labels: tuple[str, ...]) -> None:
        self.role, self.labels = role, labels
        self.name, self.external = role.name, role.external

    @property
    def dim(self) -> int:
        return self.role.dim

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self.role.embed_passages(texts, labels=self.labels)

    def embed_query(self, text: str) -> Vectors:
        return self.role.embed_query(text, labels=self.labels)


class ModelRoles:
    """Every role's binding, with one adapter instance per model URL (shared between roles)."""

    def __init__(
        self,
        settings: ModelSettings,
        ledger: Ledger | None = None,
        factory: Callable[[ModelBinding], ChatModel] | None = None,
    ) -> None:
        self.settings = settings
        self.ledger = ledger if ledger is not None else Ledger()
        self._factory = factory or (lambda b: make_chat_model(b, settings))
        self._models: dict[str, ChatModel] = {}
        self._embedder: RoleEmbedder | None = None
        self._lock = threading.Lock()
        self.cache = response_cache(
            settings.response_cache_size,
            settings.response_cache_url,
            settings.response_cache_ttl_s,
        )

    def binding(self, role: str) -> ModelBinding:
        """The binding of `role` (ConfigError for an unknown role)."""
        if role not in ROLES:
            raise ConfigError(f"unknown model role {role!r}; roles: {', '.join(ROLES)}")
        binding: ModelBinding = getattr(self.settings, role)
        return binding

    def is_bound(self, role: str) -> bool:
        """True when `role` has a non-empty URL."""
        return bool(self.binding(role).url)

    def bindings(self) -> dict[str, BindingInfo]:
        """Every role's binding, for traces."""
        out: dict[str, BindingInfo] = {}
        for role in ROLES:
            b = self.binding(role)
            out[role] = BindingInfo(role, b.url, bool(b.url), bool(b.url) and is_external(b))
        return out

    def _model_for(self, binding: ModelBinding) -> ChatModel:
        with self._lock:
            model = self._models.get(binding.url)
            if model is None:
                model = self._factory(binding)
                self._models[binding.url] = model
            return model

    def chat(self, role: str) -> RoleModel:
        """The RoleModel of `role`; ConfigError naming the role when it is unbound."""
        binding = self.binding(role)
        if not binding.url:
            raise ConfigError(
                f"model role {role!r} is not bound: set models.{role}.url "
                f"(e.g. FOOTNOTE_MODELS__{role.upper()}__URL=local:qwen2.5-coder-1.5b)"
            )
        external = is_external(binding)
        reroute: Callable[[], ChatModel] | None = None
        if external and self.settings.allow_local_reroute:
            target = ModelBinding.model_validate({"url": self.settings.reroute_local})
            if not target.url.startswith("local:"):
                raise ConfigError(
                    "models.reroute_local must be a local: URL, got "
                    f"{self.settings.reroute_local!r}"
                )
            reroute = lambda: self._model_for(target)  # noqa: E731
        return RoleModel(
            role,
            self._model_for(binding),
            ledger=self.ledger,
            external=external,
            reroute=reroute,
            cache=self.cache,
        )

    def embedder(self) -> RoleEmbedder:
        """The `embed` role's embedder (an in-process LRU in front, one instance per
        ModelRoles) behind the licence gate: every call names its text's labels."""
        binding = self.binding("embed")
        if not binding.url:
            raise ConfigError(
                "model role 'embed' is not bound: set models.embed.url "
                "(local:e5-small or local:wordllama)"
            )
        with self._lock:
            if self._embedder is None:
                from footnote.models.embedders import CachedEmbedder

                inner = CachedEmbedder(
                    make_embedder(binding, self.settings), self.settings.embed_cache_size
                )
                self._embedder = RoleEmbedder(inner, url=binding.url, external=is_external(binding))
            return self._embedder

    def embed_gate(self, labels: Sequence[str]) -> None:
        """LicenceRefused when text with `labels` may not go to the bound embedder (checked
        before a document is stored, without loading the model)."""
        binding = self.binding("embed")
        if NO_EXTERNAL in labels and binding.url and is_external(binding):
            raise LicenceRefused("embed", NO_EXTERNAL, binding.url)


def build_roles(settings: ModelSettings, *, ledger: Ledger | None = None) -> ModelRoles:
    """Role bindings for these settings; models load lazily on first use."""
    return ModelRoles(settings, ledger)
