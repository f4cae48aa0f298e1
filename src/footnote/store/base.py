"""Store protocols: what the rest of footnote may ask of persistence."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from footnote.types import Block, Document, Source


@dataclass(frozen=True)
class SourceRecord:
    """A stored source with bookkeeping: block count and whether a newer version exists."""

    source: Source
    blocks: int
    created_at: str
    superseded_by: str | None = None


class DocumentStore(Protocol):
    """Sources and their blocks. Block lookup by id is how citations resolve."""

    def save_document(self, document: Document) -> bool:
        """Store a parsed document atomically; False when the same content is already stored."""
        ...

    def get_source(self, source_id: str) -> SourceRecord | None:
        """A source by id, or None."""
        ...

    def find_source_by_uri(self, uri: str) -> SourceRecord | None:
        """The newest version of the source ingested from this path or URL, or None."""
        ...

    def list_sources(self, *, include_superseded: bool = False) -> list[SourceRecord]:
        """All sources, newest first; older versions only when asked."""
        ...

    def get_block(self, block_id: str) -> Block | None:
        """One block by id, or None."""
        ...

    def get_blocks(self, block_ids: Sequence[str]) -> dict[str, Block]:
        """Blocks by id (missing ids are absent from the result)."""
        ...

    def iter_blocks(self, source_id: str) -> Iterator[Block]:
        """A source's blocks in reading order."""
        ...

    def neighbours(self, block_id: str, radius: int = 1) -> list[Block]:
        """The blocks within `radius` positions of a block in its source, in order."""
        ...

    def get_document(self, source_id: str) -> Document | None:
        """A whole stored document (source, blocks, section tree), or None."""
        ...

    def delete_source(self, source_id: str) -> bool:
        """Delete a source and everything derived from it; False when it did not exist."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
