"""Backend protocols, so the server counterpart (PostgreSQL FTS + pgvector) is an implementation.

Blocks are addressed inside the index by an integer `key` (stable across VACUUM; the HNSW
index needs integers). A backend maps keys to block ids with `block_ids`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from footnote.index.filters import SearchFilters
from footnote.types import Block, Hit

Progress = Callable[[int, int], None]
Reranker = Callable[[str, list[Hit]], list[Hit]]
"""A rerank hook: (query, fused hits) -> reordered hits (scores may be replaced)."""
Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class IndexStats:
    """What one `index_source` call did."""

    source_id: str
    blocks: int
    lexical_added: int = 0
    embedded: int = 0
    reused: int = 0
    skipped: int = 0
    removed: int = 0
    seconds: float = 0.0


class LexicalBackend(Protocol):
    """Keyword search over blocks (BM25-like scores, higher is better)."""

    def add(self, blocks: Sequence[Block]) -> tuple[dict[str, int], int]:
        """Index blocks not yet indexed; return block id -> key for all, and how many were new."""
        ...

    def rebuild(self) -> None:
        """Re-derive every indexed row from the stored blocks."""
        ...

    def search(self, query: str, n: int, filters: SearchFilters) -> list[tuple[int, float]]:
        """Best `n` (key, score) pairs among the blocks the filters allow."""
        ...

    def highlight(self, query: str, keys: Sequence[int]) -> dict[int, str]:
        """Block text with query terms wrapped in « », for keys whose block matches."""
        ...

    def block_ids(self, keys: Sequence[int]) -> dict[int, str]:
        """Key -> block id."""
        ...

    def remove_source(self, source_id: str) -> int:
        """Drop a source's blocks from the index (vectors go with them); return how many."""
        ...

    def sync(self) -> None:
        """Bring any derived index (in-memory postings) up to date with the stored rows."""
        ...


class VectorBackend(Protocol):
    """Embeddings per (model, block), with filtered nearest-neighbour search."""

    def missing(self, items: dict[int, str]) -> dict[int, str]:
        """Of key -> content hash, those without a vector for this model."""
        ...

    def reuse(self, items: dict[int, str]) -> int:
        """Copy vectors of equal content hashes onto these keys; return how many."""
        ...

    def put(self, keys: Sequence[int], hashes: Sequence[str], vectors: Matrix) -> None:
        """Store vectors."""
        ...

    def search(self, query: Matrix, n: int, filters: SearchFilters) -> list[tuple[int, float]]:
        """Best `n` (key, cosine) pairs among the vectors the filters allow."""
        ...

    def vectors(self, keys: Sequence[int]) -> dict[int, Matrix]:
        """Stored vectors by key (for MMR)."""
        ...

    def purge_other_models(self) -> int:
        """Delete vectors of every other embedding model; return how many."""
        ...

    def unindexed(self, source_id: str) -> int:
        """Blocks of the source without a lexical row or a vector of this model."""
        ...

    def sync(self) -> None:
        """Bring any derived index (HNSW file) up to date with the stored vectors."""
        ...
