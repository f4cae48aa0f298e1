"""Vectors: SQLite `block_vectors` is the source of truth; search runs on an in-memory copy.

Below `ann_threshold` vectors the search is exact (one matrix-vector product). Above it an
HNSW file (`ann.AnnFile`) answers unfiltered queries. Filters are applied *before* top-k:
the allowed rows are computed first (sources allowed by ACL/labels/superseded from SQL,
block-level filters from in-memory kind/page columns or SQL for section prefixes), then
- a selective filter (allowed ≤ `filtered_exact_max`, or < 5 % of rows) is answered exactly
  over exactly those rows;
- otherwise HNSW is asked for enough candidates that `n` allowed ones are expected
  (n / fraction × 2, doubling on shortfall) and anything outside the mask is never returned;
  after three rounds it falls back to the exact masked search.
So a restricted vector can never take a slot, and k allowed hits come back when they exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from footnote.config import RetrievalSettings
from footnote.index.ann import AnnFile
from footnote.index.base import Matrix
from footnote.index.filters import SearchFilters, block_where, source_where
from footnote.store import SqliteStore
from footnote.types import BLOCK_KINDS

Mask = npt.NDArray[np.bool_]


class SqliteVectors:
    """`VectorBackend` for one embedding model."""

    def __init__(
        self, store: SqliteStore, model: str, dim: int, settings: RetrievalSettings, index_dir: Path
    ) -> None:
        self.store, self.model, self.dim, self.settings = store, model, dim, settings
        self.ann = AnnFile(index_dir, model, dim, settings)
        self._gen = -1
        self.keys = np.zeros(0, np.int64)
        self.matrix = np.zeros((0, dim), np.float32)
        self._src = np.zeros(0, np.int32)
        self._kind = np.zeros(0, np.int8)
        self._page = np.zeros(0, np.int32)
        self._sources: dict[str, int] = {}
        self._use_ann = False
        self._masks: dict[object, Mask | None] = {}

    # -- writing ------------------------------------------------------------------------
    def missing(self, items: dict[int, str]) -> dict[int, str]:
        """Keys (with their hashes) that have no vector for this model."""
        have: set[int] = set()
        keys = list(items)
        with self.store.lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                rows = self.store.conn.execute(
                    f"SELECT key FROM block_vectors WHERE model = ? AND key IN "
                    f"({','.join('?' * len(chunk))})",
                    [self.model, *chunk],
                )
                have.update(int(r[0]) for r in rows)
        return {k: h for k, h in items.items() if k not in have}

    def reuse(self, items: dict[int, str]) -> int:
        """Copy an existing vector with the same content hash onto each key; count copies."""
        n = 0
        with self.store.lock:
            for key, h in items.items():
                cur = self.store.conn.execute(
                    "INSERT OR IGNORE INTO block_vectors(key, model, content_hash, vector) "
                    "SELECT ?, model, content_hash, vector FROM block_vectors "
                    "WHERE model = ? AND content_hash = ? LIMIT 1",
                    (key, self.model, h),
                )
                n += max(cur.rowcount, 0)
        return n

    def put(self, keys: Sequence[int], hashes: Sequence[str], vectors: Matrix) -> None:
        """Store float32 vectors (one transaction)."""
        vecs = np.ascontiguousarray(vectors, dtype=np.float32)
        rows = [
            (int(k), self.model, h, vecs[i].tobytes())
            for i, (k, h) in enumerate(zip(keys, hashes, strict=True))
        ]
        with self.store.lock:
            self.store.conn.execute("BEGIN IMMEDIATE")
            try:
                self.store.conn.executemany(
                    "INSERT OR REPLACE INTO block_vectors(key, model, content_hash, vector) "
                    "VALUES (?,?,?,?)",
                    rows,
                )
                self.store.conn.execute("COMMIT")
            except BaseException:
                self.store.conn.execute("ROLLBACK")
                raise

    def purge_other_models(self) -> int:
        """Delete vectors stored for any other model."""
        with self.store.lock:
            cur = self.store.conn.execute(
                "DELETE FROM block_vectors WHERE model != ?", (self.model,)
            )
        return max(cur.rowcount, 0)

    # -- loading ------------------------------------------------------------------------
    def generation(self) -> int:
        """Bumped by triggers on every insert/delete in `block_vectors`."""
        with self.store.lock:
            row = self.store.conn.execute(
                "SELECT gen FROM index_generation WHERE name = 'vectors'"
            ).fetchone()
        return int(row[0])

    def refresh(self) -> None:
        """Bring the in-memory copy (and the HNSW file) up to date when the vectors changed.

        Incremental: one scan of the model's keys (covering primary-key index) finds what was
        added and removed; only added rows are read, removed rows are masked out."""
        gen = self.generation()
        if gen == self._gen:
            return
        with self.store.lock:
            stored = np.fromiter(
                (
                    r[0]
                    for r in self.store.conn.execute(
                        "SELECT key FROM block_vectors WHERE model = ? ORDER BY key", (self.model,)
                    )
                ),
                np.int64,
            )
        if len(self.keys):
            keep = np.isin(self.keys, stored, assume_unique=True)
            if not keep.all():
                self._take(np.flatnonzero(keep))
        new = stored[~np.isin(stored, self.keys, assume_unique=True)]
        if len(new):
            self._append(new if len(new) < len(stored) // 2 else None)
        self._use_ann = len(self.keys) > self.settings.ann_threshold
        if self._use_ann:
            if self.ann.generation() != gen:
                self.ann.sync(self.keys, self.matrix, gen)
            self.ann.open()
        else:
            self.ann.drop()
        self._gen = gen

    def _take(self, rows: npt.NDArray[np.intp]) -> None:
        self.keys, self.matrix = self.keys[rows], self.matrix[rows]
        self._src, self._kind, self._page = self._src[rows], self._kind[rows], self._page[rows]

    def _append(self, new: npt.NDArray[np.int64] | None) -> None:
        """Read the rows of `new` keys (all keys when None) and merge them in key order."""
        sql = (
            "SELECT v.key, v.vector, b.source_id, b.kind, b.page FROM block_vectors v "
            "JOIN index_blocks ib ON ib.key = v.key JOIN blocks b ON b.id = ib.block_id "
            "WHERE v.model = ?"
        )
        order_by = " ORDER BY v.key"
        rows: list[Any] = []
        with self.store.lock:
            if new is None:
                rows = self.store.conn.execute(sql + order_by, (self.model,)).fetchall()
                self._take(np.zeros(0, np.intp))
            else:
                for i in range(0, len(new), 500):
                    chunk = [int(k) for k in new[i : i + 500]]
                    rows += self.store.conn.execute(
                        f"{sql} AND v.key IN ({','.join('?' * len(chunk))}){order_by}",
                        [self.model, *chunk],
                    ).fetchall()
        kinds = {k: i for i, k in enumerate(BLOCK_KINDS)}
        codes = self._sources
        n = len(rows)
        keys = np.concatenate([self.keys, np.fromiter((r[0] for r in rows), np.int64, n)])
        blob = b"".join(r[1] for r in rows)
        added = np.frombuffer(blob, np.float32).reshape(n, self.dim)
        matrix = np.concatenate([self.matrix, added]) if len(self.keys) else added
        src = np.fromiter((codes.setdefault(r[2], len(codes)) for r in rows), np.int32, n)
        kind = np.fromiter((kinds.get(r[3], -1) for r in rows), np.int8, n)
        page = np.fromiter((r[4] for r in rows), np.int32, n)
        self.keys, self.matrix = keys, matrix
        self._src = np.concatenate([self._src, src])
        self._kind = np.concatenate([self._kind, kind])
        self._page = np.concatenate([self._page, page])
        if len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1])):
            self._take(np.argsort(keys, kind="stable"))

    def sync(self) -> None:
        """Refresh now (the indexer calls this so searchers find an up-to-date HNSW file)."""
        self.refresh()

    # -- searching ----------------------------------------------------------------------
    def _mask(self, f: SearchFilters) -> Mask | None:
        """Allowed rows, or None when everything is allowed; cached per filter until any index
        generation moves (vectors added or removed, a source's ACL, labels or superseded flag
        changed: the triggers of migrations 0002 and 0004)."""
        with self.store.lock:
            gens = tuple(self.store.conn.execute("SELECT name, gen FROM index_generation"))
        key = (f, gens)
        if key in self._masks:
            return self._masks[key]
        if len(self._masks) >= 32:
            self._masks.clear()
        self._masks[key] = mask = self._compute_mask(f)
        return mask

    def _compute_mask(self, f: SearchFilters) -> Mask | None:
        where, params = source_where(f)
        with self.store.lock:
            rows = self.store.conn.execute(
                f"SELECT s.id, ({where}) FROM sources s", params
            ).fetchall()
        ok = [sid for sid, allowed in rows if allowed]
        if not f.block_level and len(ok) == len(rows):
            return None
        codes = [self._sources[s] for s in ok if s in self._sources]
        mask: Mask = np.isin(self._src, np.asarray(codes, np.int32))
        if f.kinds:
            codes8 = [i for i, k in enumerate(BLOCK_KINDS) if k in f.kinds]
            mask &= np.isin(self._kind, np.asarray(codes8, np.int8))
        if f.pages is not None:
            mask &= (self._page >= f.pages[0]) & (self._page <= f.pages[1])
        if f.section_prefix:
            bw, bp = block_where(SearchFilters(section_prefix=f.section_prefix))
            with self.store.lock:
                keys = [
                    r[0]
                    for r in self.store.conn.execute(
                        "SELECT ib.key FROM index_blocks ib JOIN blocks b ON b.id = ib.block_id "
                        f"WHERE {bw}",
                        bp,
                    )
                ]
            mask &= np.isin(self.keys, np.asarray(keys, np.int64))
        return mask

    def search(self, query: Matrix, n: int, filters: SearchFilters) -> list[tuple[int, float]]:
        """Top-n (key, cosine) among allowed vectors; see the module docstring."""
        self.refresh()
        total = len(self.keys)
        if total == 0 or n <= 0:
            return []
        q = np.asarray(query, np.float32).reshape(-1)
        mask = self._mask(filters)
        allowed = total if mask is None else int(mask.sum())
        if allowed == 0:
            return []
        if self._use_ann:
            frac = allowed / total
            exact = mask is not None and (
                allowed <= self.settings.filtered_exact_max or frac < 0.05
            )
            if not exact:
                hits = self._ann(q, n, mask, frac)
                if hits is not None:
                    return hits
        rows = np.arange(total) if mask is None else np.flatnonzero(mask)
        return self._exact(q, n, rows)

    def _exact(self, q: Matrix, n: int, rows: npt.NDArray[Any]) -> list[tuple[int, float]]:
        sub = self.matrix if len(rows) == len(self.keys) else self.matrix[rows]
        scores = sub @ q
        top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.keys[rows[i]]), float(scores[i])) for i in top]

    def _ann(
        self, q: Matrix, n: int, mask: Mask | None, frac: float
    ) -> list[tuple[int, float]] | None:
        want = min(n, len(self.keys) if mask is None else int(mask.sum()))
        count = int(min(len(self.keys), max(n, np.ceil(n / frac * 2))))
        for _ in range(3):
            keys, sims = self.ann.search(q, count)
            if mask is not None:
                rows = np.searchsorted(self.keys, keys)
                rows = np.clip(rows, 0, len(self.keys) - 1)
                ok = (self.keys[rows] == keys) & mask[rows]
                keys, sims = keys[ok], sims[ok]
            if len(keys) >= want:
                return [(int(k), float(s)) for k, s in zip(keys[:n], sims[:n], strict=True)]
            if count >= len(self.keys):
                break
            count = min(len(self.keys), count * 2)
        return None

    def vectors(self, keys: Sequence[int]) -> dict[int, Matrix]:
        """Vectors by key from the in-memory copy."""
        self.refresh()
        if not len(self.keys):
            return {}
        arr = np.asarray(list(keys), np.int64)
        rows = np.clip(np.searchsorted(self.keys, arr), 0, len(self.keys) - 1)
        return {int(k): self.matrix[r] for k, r in zip(arr, rows, strict=True) if self.keys[r] == k}
