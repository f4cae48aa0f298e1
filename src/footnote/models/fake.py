"""Deterministic fakes for unit tests of code *around* models. No product path uses them.

- `HashEmbedder`: bag-of-hashed-tokens vectors (CJK characters count as tokens), so texts
  sharing words are close. Good enough to test indexing and fusion plumbing.
- `FakeChatModel`: replies from a script (a list of strings or a function of the messages).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from footnote.models.base import Capabilities, Completion, Message, ToolSpec, Vectors
from footnote.textnorm import CJK_IDEOGRAPHS

_TOKEN_RE = re.compile(rf"[{CJK_IDEOGRAPHS}]|[A-Za-z0-9]+")


class HashEmbedder:
    """Deterministic hashed bag-of-words embedder."""

    external = False

    def __init__(self, dim: int = 256, name: str = "fake:hash") -> None:
        self.dim = dim
        self.name = name

    def _one(self, text: str) -> Vectors:
        v = np.zeros(self.dim, dtype=np.float32)
        for tok in _TOKEN_RE.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 63) == 0 else -1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Embed passages."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> Vectors:
        """Embed a query."""
        return self._one(text)


Script = Sequence[str] | Callable[[Sequence[Message]], str]


class FakeChatModel:
    """Returns scripted replies in order (or computed from the messages)."""

    external = False

    def __init__(
        self, script: Script, *, name: str = "fake:chat", caps: Capabilities | None = None
    ) -> None:
        self.name = name
        self._script = script
        self._i = 0
        self._caps = caps or Capabilities(json_schema=True, tools=False, logprobs=False)
        self.calls: list[list[Message]] = []

    def capabilities(self) -> Capabilities:
        """The capabilities given at construction."""
        return self._caps

    def _next(self, messages: Sequence[Message]) -> str:
        self.calls.append(list(messages))
        if callable(self._script):
            return self._script(messages)
        if self._i >= len(self._script):
            raise AssertionError("FakeChatModel script exhausted")
        reply = self._script[self._i]
        self._i += 1
        return reply

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
        """The next scripted reply."""
        text = self._next(messages)
        tokens_in = sum(self.count_tokens(m.content) for m in messages)
        tokens_out = self.count_tokens(text)
        return Completion(text, tokens_in=tokens_in, tokens_out=tokens_out, model=self.name)

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Iterator[str]:
        """The next scripted reply, word by word."""
        yield from re.findall(r"\S+\s*", self._next(messages))

    def count_tokens(self, text: str) -> int:
        """Whitespace tokens plus CJK characters."""
        return len(_TOKEN_RE.findall(text))
