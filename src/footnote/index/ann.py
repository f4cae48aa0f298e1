"""usearch HNSW index file beside the store: built from, and synced with, SQLite vectors.

The file `<index_dir>/<model>.usearch` is written atomically (temp file + rename) with a
sidecar `.json` recording the vector generation it reflects. Searchers open it with
`view=True` (mmap, ~10 ms). Updates load it writable, add/remove the key difference and save.
usearch 2.26's Python `search` takes no filter predicate; filtering is done by the caller
(see `vectors.SqliteVectors.search`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from footnote.config import RetrievalSettings

Keys = npt.NDArray[np.int64]


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model)


class AnnFile:
    """One model's HNSW index file."""

    def __init__(self, index_dir: Path, model: str, dim: int, settings: RetrievalSettings) -> None:
        self.path = index_dir / f"{_slug(model)}.usearch"
        self.meta_path = self.path.with_suffix(".json")
        self.model = model
        self.dim = dim
        self.settings = settings
        self.index: Any = None

    def generation(self) -> int | None:
        """The vector generation the file on disk reflects, or None."""
        try:
            meta = json.loads(self.meta_path.read_text())
        except (OSError, ValueError):
            return None
        if meta.get("model") != self.model or meta.get("dim") != self.dim:
            return None
        return int(meta["gen"]) if self.path.exists() else None

    def _new(self) -> Any:
        from usearch.index import Index

        return Index(
            ndim=self.dim,
            metric="cos",
            dtype="f32",
            connectivity=self.settings.ann_connectivity,
            expansion_add=self.settings.ann_expansion_add,
            expansion_search=self.settings.ann_expansion_search,
        )

    def sync(self, keys: Keys, matrix: npt.NDArray[np.float32], gen: int) -> None:
        """Make the file hold exactly `keys` (rows of `matrix`), then record `gen`."""
        from usearch.index import Index

        index = None
        if self.generation() is not None:
            index = Index.restore(str(self.path), view=False)
        if index is None or index.ndim != self.dim:
            index = self._new()
        have = np.asarray(index.keys, dtype=np.int64) if len(index) else np.zeros(0, np.int64)
        gone = np.setdiff1d(have, keys, assume_unique=True)
        if len(gone):
            index.remove(gone)
        new = ~np.isin(keys, have, assume_unique=True)
        if new.any():
            index.add(keys[new], matrix[new])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".usearch.tmp")
        index.save(str(tmp))
        os.replace(tmp, self.path)
        meta = {"model": self.model, "dim": self.dim, "gen": gen, "count": len(keys)}
        self.meta_path.write_text(json.dumps(meta))
        self.index = None

    def open(self) -> None:
        """Memory-map the file for searching."""
        from usearch.index import Index

        self.index = Index.restore(str(self.path), view=True)
        self.index.expansion_search = self.settings.ann_expansion_search

    def drop(self) -> None:
        """Remove the file (the collection fell below the ANN threshold)."""
        self.index = None
        for p in (self.path, self.meta_path):
            p.unlink(missing_ok=True)

    def search(self, query: npt.NDArray[np.float32], count: int) -> tuple[Keys, npt.NDArray[Any]]:
        """(keys, cosine similarities) of the approximate top `count`."""
        if self.index is None:
            self.open()
        self.index.expansion_search = max(self.settings.ann_expansion_search, count)
        m = self.index.search(query, count)
        return np.asarray(m.keys, dtype=np.int64), 1.0 - np.asarray(m.distances, np.float32)
