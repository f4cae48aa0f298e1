"""The library's tools for the agent: search, read, tables, sources, and a verified answer.

Every tool sees the library through the caller's ACL groups and the session's source scope: a
block of a source the user may not read, or of a source outside the scope, does not exist for
the tool either (the model cannot widen the scope by naming a `source_id`). Cached results are
keyed by both, so sessions scoped differently never share them. The ids of the blocks a tool
output shows (its `"id"` fields, cached or fresh: never an id that merely occurs inside a block's
text) are recorded in `LibraryContext.seen`, the evidence the final answer may cite, with the
labels of their sources.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from footnote.access import readable_by
from footnote.agent.tools import ToolRegistry
from footnote.errors import ToolRetry
from footnote.index import SearchFilters, SearchFn
from footnote.serialize import table_to_dict
from footnote.store.base import DocumentStore
from footnote.types import BLOCK_ID_PATTERN, INSUFFICIENT_MARK, Block

_SHOWN_ID = re.compile(rf'(?<!\\)"id"\s*:\s*"({BLOCK_ID_PATTERN})(?:#[^"]*)?"')
"""An `"id"` field of a tool's JSON output (text inside a block is escaped: `\\"id\\"`)."""
AnswerJsonFn = Callable[[str], dict[str, Any]]
"""Runs the verified ask pipeline on a question; returns the public answer JSON."""


@dataclass
class LibraryContext:
    """What the tools act on, and what they have shown the model so far."""

    store: DocumentStore
    search: SearchFn
    ask: AnswerJsonFn
    user_groups: tuple[str, ...] | None = None
    sources: tuple[str, ...] = ()
    """The session's source scope (empty: the whole library the user may read)."""
    seen: dict[str, None] = field(default_factory=dict)
    labels: dict[str, None] = field(default_factory=dict)

    def visible(self, source_id: str) -> bool:
        """Whether the user may read this source and it is inside the session's scope."""
        if self.sources and source_id not in self.sources:
            return False
        record = self.store.get_source(source_id)
        if record is None:
            return False
        return readable_by(record.source, self.user_groups)

    @property
    def scope(self) -> str:
        """The cache scope: results depend on exactly the groups and the source scope."""
        groups = None if self.user_groups is None else sorted(self.user_groups)
        return repr((groups, sorted(self.sources)))

    def block(self, block_id: str) -> Block:
        """A readable block by id (ToolRetry otherwise)."""
        block = self.store.get_block(block_id.split("#", 1)[0])
        if block is None or not self.visible(block.source_id):
            raise ToolRetry(f"no block {block_id!r}: use ids exactly as search_library gave them")
        return block

    def record_output(self, _tool: str, output: str) -> None:
        """Note the blocks (and their sources' labels) a tool output showed the model."""
        for block_id in dict.fromkeys(_SHOWN_ID.findall(output)):
            if block_id in self.seen:
                continue
            block = self.store.get_block(block_id)
            if block is None or not self.visible(block.source_id):
                continue
            self.seen[block_id] = None
            record = self.store.get_source(block.source_id)
            for label in record.source.labels if record else ():
                self.labels[label] = None

    @staticmethod
    def show(block: Block) -> dict[str, Any]:
        """A block as the model sees it."""
        return {
            "id": block.id,
            "page": block.page,
            "section": " > ".join(block.section_path),
            "text": block.table.as_text() if block.table is not None else block.text,
        }

    def corpus_version(self) -> str:
        """Changes whenever a source is added or removed (the tool cache key)."""
        ids = ",".join(sorted(r.source.id for r in self.store.list_sources()))
        return hashlib.sha1(ids.encode()).hexdigest()[:12]


def library_tools(
    ctx: LibraryContext,
    *,
    cache_ttl_s: float = 300.0,
    cache: dict[str, tuple[float, str]] | None = None,
) -> ToolRegistry:
    """The registry of library tools bound to one context (`cache` may be shared)."""
    reg = ToolRegistry(
        cache_ttl_s=cache_ttl_s,
        corpus_version=ctx.corpus_version,
        cache=cache,
        scope=ctx.scope,
        on_output=ctx.record_output,
    )

    @reg.tool
    def search_library(
        query: str, k: int = 5, source_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Hybrid keyword + vector search over the library; returns blocks with ids.

        Args:
            query: what to look for, in words likely to appear in the text.
            k: how many blocks to return (1-10).
            source_id: limit to one source (an id from list_sources).
        """
        if source_id and not ctx.visible(source_id):
            raise ToolRetry(f"no source {source_id!r}: use an id from list_sources")
        filters = SearchFilters(
            source_ids=(source_id,) if source_id else ctx.sources, user_groups=ctx.user_groups
        )
        hits = ctx.search(query, max(1, min(k, 10)), filters)
        return [ctx.show(h.block) for h in hits]

    @reg.tool
    def read_block(block_id: str, neighbours: int = 1) -> list[dict[str, Any]]:
        """Read a block and the blocks around it, in reading order.

        Args:
            block_id: a block id from search_library.
            neighbours: how many blocks before and after to include (0-3).
        """
        block = ctx.block(block_id)
        around = ctx.store.neighbours(block.id, max(0, min(neighbours, 3)))
        return [ctx.show(b) for b in around or [block]]

    @reg.tool
    def read_section(source_id: str, section: str, max_blocks: int = 12) -> list[dict[str, Any]]:
        """Read the blocks of one section of a source (matched by title, case-insensitive).

        Args:
            source_id: an id from list_sources.
            section: the section title, or its start (e.g. "Results").
            max_blocks: the most blocks to return (1-30).
        """
        if not ctx.visible(source_id):
            raise ToolRetry(f"no source {source_id!r}: use an id from list_sources")
        want = section.strip().lower()
        found = [
            b
            for b in ctx.store.iter_blocks(source_id)
            if any(s.lower().startswith(want) for s in b.section_path)
        ]
        if not found:
            raise ToolRetry(f"no section starting with {section!r} in {source_id}")
        return [ctx.show(b) for b in found[: max(1, min(max_blocks, 30))]]

    @reg.tool
    def get_table(block_id: str) -> dict[str, Any]:
        """A table block's caption, header and rows; cells are cited as `<id>#r<row>c<col>`.

        Args:
            block_id: the id of a table block.
        """
        block = ctx.block(block_id)
        if block.table is None:
            raise ToolRetry(f"{block_id} is a {block.kind}, not a table")
        ctx.show(block)
        return {"id": block.id, "page": block.page, **table_to_dict(block.table)}

    @reg.tool
    def list_sources() -> list[dict[str, Any]]:
        """The documents in the library the user may read: id, title, pages."""
        return [
            {"id": r.source.id, "title": r.source.title, "pages": r.source.pages}
            for r in ctx.store.list_sources()
            if ctx.visible(r.source.id)
        ]

    @reg.tool
    def answer_from_library(question: str) -> dict[str, Any]:
        """Answer a focused question from the library with checked citations (the ask pipeline).

        Args:
            question: one standalone question.
        """
        answer = ctx.ask(question)
        sentences = answer.get("sentences", [])
        return {
            "status": answer.get("status"),
            "answer": " ".join(
                s["text"]
                + (f" {INSUFFICIENT_MARK}" if s.get("insufficient") else "")
                + "".join(f" [{c['id']}]" for c in s.get("citations", []))
                for s in sentences
            ),
            "reason": answer.get("reason"),
            "cited": [{"id": c["id"]} for s in sentences for c in s.get("citations", [])],
        }

    return reg
