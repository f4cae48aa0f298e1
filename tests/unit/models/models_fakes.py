"""Fakes for model-layer unit tests."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from footnote.config import ModelBinding, ModelSettings
from footnote.models.base import Capabilities, Completion, Message, ToolSpec
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import ModelRoles


class ProbeModel:
    """Records calls; returns fixed text and optional top logprobs; can raise."""

    external = False

    def __init__(
        self,
        name: str,
        text: str = "ok",
        *,
        top: tuple[dict[str, float], ...] = (),
        caps: Capabilities | None = None,
        error: Exception | None = None,
    ) -> None:
        self.name = name
        self.text = text
        self.top = top
        self.caps = caps or Capabilities(json_schema=True, logprobs=bool(top))
        self.error = error
        self.calls: list[dict[str, Any]] = []

    def capabilities(self) -> Capabilities:
        return self.caps

    def complete(self, messages: Sequence[Message], **kw: Any) -> Completion:
        self.calls.append({"messages": list(messages), **kw})
        if self.error is not None:
            raise self.error
        return Completion(
            self.text, tokens_in=10, tokens_out=2, top_logprobs=self.top, model=self.name
        )

    def stream(self, messages: Sequence[Message], **kw: Any) -> Iterator[str]:
        self.calls.append({"messages": list(messages), **kw})
        yield from ["a ", "b ", "c"]

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def settings(**bindings: str | ModelBinding) -> ModelSettings:
    tree: dict[str, Any] = {}
    for role, value in bindings.items():
        tree[role] = value if isinstance(value, ModelBinding) else {"url": value}
    return ModelSettings.model_validate(tree)


def roles_with(
    models: dict[str, Any], s: ModelSettings, ledger: Ledger | None = None
) -> ModelRoles:
    """ModelRoles whose factory hands out `models[url]` (FakeChatModel/ProbeModel)."""
    return ModelRoles(s, ledger, factory=lambda b: models[b.url])


__all__ = ["FakeChatModel", "ProbeModel", "ToolSpec", "roles_with", "settings"]
