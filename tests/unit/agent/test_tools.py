"""Tools from typed functions: schema from signature + docstring, validation, retries, cache."""

from __future__ import annotations

from typing import Any

import pytest

from footnote.agent.tools import ToolRegistry
from footnote.errors import ConfigError, ToolRetry


def test_schema_comes_from_signature_and_docstring() -> None:
    reg = ToolRegistry()

    @reg.tool
    def search(query: str, k: int = 5) -> list[str]:
        """Search the library.

        Args:
            query: words to look for.
            k: how many results.
        """
        return [query] * k

    spec = reg.specs()[0]
    assert spec.name == "search" and spec.description == "Search the library."
    assert spec.parameters["required"] == ["query"]
    assert spec.parameters["properties"]["k"]["description"] == "how many results."
    assert reg.call("search", {"query": "x", "k": 2}) == '["x", "x"]'
    assert "search(query: string, k: integer (optional))" in reg.describe()


def test_untyped_tools_are_refused() -> None:
    reg = ToolRegistry()

    def no_return(x: int):  # type: ignore[no-untyped-def]
        """Doc."""
        return x

    with pytest.raises(ConfigError, match="return annotation"):
        reg.add(no_return)

    def no_doc(x: int) -> int:
        return x

    with pytest.raises(ConfigError, match="docstring"):
        reg.add(no_doc)


def test_bad_arguments_and_tool_errors_become_tool_retry() -> None:
    reg = ToolRegistry()

    @reg.tool
    def read(block_id: str) -> str:
        """Read a block."""
        raise LookupError(f"no block {block_id}")

    with pytest.raises(ToolRetry, match="invalid arguments"):
        reg.call("read", {"block_id": 3, "extra": 1})
    with pytest.raises(ToolRetry, match="no block b1"):
        reg.call("read", '{"block_id": "b1"}')
    with pytest.raises(ToolRetry, match="no tool"):
        reg.call("nope", {})


def test_results_are_cached_by_tool_args_and_corpus_version() -> None:
    now = [0.0]
    version = ["v1"]
    calls: list[Any] = []
    reg = ToolRegistry(cache_ttl_s=10, corpus_version=lambda: version[0], clock=lambda: now[0])

    @reg.tool
    def count(word: str) -> int:
        """Count."""
        calls.append(word)
        return len(calls)

    assert reg.call("count", {"word": "a"}) == reg.call("count", {"word": "a"}) == "1"
    assert reg.call("count", {"word": "b"}) == "2"
    version[0] = "v2"
    assert reg.call("count", {"word": "a"}) == "3"
    now[0] = 11
    assert reg.call("count", {"word": "a"}) == "4"
    assert reg.cache_hits == 1
