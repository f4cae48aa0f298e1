"""Typed functions as tools: the signature and docstring are the schema.

    registry = ToolRegistry()

    @registry.tool
    def read_block(block_id: str) -> dict[str, Any]:
        '''Read one block by id.

        Args:
            block_id: the block id, as a search returned it.
        '''

Arguments are validated with a pydantic model built from the signature; a validation error
or a `ToolRetry` raised by the tool becomes a `ToolRetry` whose message goes back to the
model. Results are cached for a TTL, keyed by (tool, arguments, corpus version, scope); the
cache dict may be shared between registries (runs) of the same scope (e.g. ACL groups).
"""

from __future__ import annotations

import inspect
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from footnote.errors import ConfigError, ToolRetry
from footnote.models.base import ToolSpec

MAX_OUTPUT_CHARS = 4000


@dataclass(frozen=True)
class Tool:
    """A registered tool: its function, description and argument model."""

    name: str
    description: str
    fn: Callable[..., Any]
    args: type[BaseModel]

    def spec(self) -> ToolSpec:
        """The model-facing schema."""
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        return ToolSpec(self.name, self.description, schema)


def _doc_parts(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The summary paragraph and the `Args:` descriptions of a docstring."""
    doc = inspect.getdoc(fn) or ""
    summary = doc.split("\n\n", 1)[0].replace("\n", " ").strip()
    params: dict[str, str] = {}
    if "Args:" in doc:
        body = doc.split("Args:", 1)[1]
        for m in re.finditer(r"^\s+(\w+)(?:\s*\([^)]*\))?:\s*(.+(?:\n\s{8,}.+)*)", body, re.M):
            params[m.group(1)] = " ".join(m.group(2).split())
    return summary, params


def tool_from_function(fn: Callable[..., Any], name: str | None = None) -> Tool:
    """Build a Tool; ConfigError when the function is not fully typed or documented."""
    tool_name = name or fn.__name__
    hints = get_type_hints(fn)
    if "return" not in hints:
        raise ConfigError(f"tool {tool_name!r} has no return annotation")
    summary, docs = _doc_parts(fn)
    if not summary:
        raise ConfigError(f"tool {tool_name!r} has no docstring")
    fields: dict[str, Any] = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name not in hints:
            raise ConfigError(f"tool {tool_name!r}: parameter {p.name!r} must be typed and named")
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (hints[p.name], Field(default, description=docs.get(p.name, "")))
    args = create_model(f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return Tool(tool_name, summary, fn, args)


def _render(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"… [truncated {len(text) - MAX_OUTPUT_CHARS} chars]"
    return text


class ToolRegistry:
    """Named tools, argument validation and a TTL cache of results."""

    def __init__(
        self,
        *,
        cache_ttl_s: float = 300.0,
        corpus_version: Callable[[], str] = lambda: "",
        clock: Callable[[], float] = time.monotonic,
        cache: dict[str, tuple[float, str]] | None = None,
        scope: str = "",
        on_output: Callable[[str, str], None] = lambda _name, _out: None,
    ) -> None:
        self.tools: dict[str, Tool] = {}
        self.cache_ttl_s = cache_ttl_s
        self.corpus_version = corpus_version
        self.clock = clock
        self._cache = {} if cache is None else cache
        self.scope = scope
        self.on_output = on_output
        self._lock = threading.Lock()
        self._uncached: set[str] = set()
        self.cache_hits = 0

    def tool(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: register `fn` under its own name."""
        self.add(fn)
        return fn

    def add(self, fn: Callable[..., Any], name: str | None = None, *, cache: bool = True) -> Tool:
        """Register a function as a tool (`cache=False`: every call runs, e.g. one with effects
        recorded per run)."""
        t = tool_from_function(fn, name)
        if t.name in self.tools:
            raise ConfigError(f"tool {t.name!r} is registered twice")
        self.tools[t.name] = t
        if not cache:
            self._uncached.add(t.name)
        return t

    def specs(self) -> list[ToolSpec]:
        """Every tool's schema."""
        return [t.spec() for t in self.tools.values()]

    def describe(self) -> str:
        """The tools as prompt text: name(arguments) — description."""
        lines = []
        for spec in self.specs():
            props = spec.parameters.get("properties", {})
            required = set(spec.parameters.get("required", []))
            args = ", ".join(
                f"{k}: {v.get('type', 'any')}{'' if k in required else ' (optional)'}"
                for k, v in props.items()
            )
            lines.append(f"- {spec.name}({args}): {spec.description}")
        return "\n".join(lines)

    def validate(self, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
        """Validated arguments; ToolRetry (for the model) when the tool or arguments are bad."""
        tool = self.tools.get(name)
        if tool is None:
            raise ToolRetry(f"there is no tool {name!r}; tools: {', '.join(self.tools)}")
        try:
            raw = json.loads(arguments) if isinstance(arguments, str) else arguments
            return dict(tool.args.model_validate(raw or {}))
        except (ValueError, ValidationError) as exc:
            raise ToolRetry(f"invalid arguments for {name}: {_describe(exc)}") from exc

    def call(self, name: str, arguments: dict[str, Any] | str) -> str:
        """Validate, run (or serve from the cache) and render a tool's result."""
        args = self.validate(name, arguments)
        key = json.dumps(
            [name, args, self.corpus_version(), self.scope], sort_keys=True, default=str
        )
        now = self.clock()
        cached = self.cache_ttl_s > 0 and name not in self._uncached
        with self._lock:
            hit = self._cache.get(key) if cached else None
            if hit is not None and hit[0] > now:
                self.cache_hits += 1
                self.on_output(name, hit[1])
                return hit[1]
        try:
            out = _render(self.tools[name].fn(**args))
        except ToolRetry:
            raise
        except (ValueError, LookupError, TypeError) as exc:
            raise ToolRetry(f"{name} failed: {exc}") from exc
        if cached:
            with self._lock:
                self._cache[key] = (now + self.cache_ttl_s, out)
        self.on_output(name, out)
        return out


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
    return str(exc)
