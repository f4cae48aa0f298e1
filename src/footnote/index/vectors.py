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

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from footnote.config import RetrievalSettings
from footnote.index.ann import AnnFile
from footnote.index.base import Matrix
from footnote.index.filters import SearchFilters, block_where, source_where
from footnote.store.sqlite import SqliteStore, rollback
from footnote.types import BLOCK_KINDS

Mask = npt.NDArray[np.bool_]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Snapshot:
    """One generation of the in-memory vectors: what a search reads, never modified."""

    gen: int
    keys: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    src: npt.NDArray[np.int32]
    kind: npt.NDArray[np.int8]
    page: npt.NDArray[np.int32]
    sources: dict[str, int]
    use_ann: bool = False
    masks: dict[object, Mask | None] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, compare=False)

    @classmethod
    def empty(cls, dim: int) -> _Snapshot:
        return cls(-1, np.zeros(0, np.int64), np.zeros((0, dim), np.float32),
                   np.zeros(0, np.int32), np.zeros(0, np.int8), np.zeros(0, np.int32), {})  # fmt: skip

    def take(self, rows: npt.NDArray[np.intp]) -> _Snapshot:
        """A snapshot of these rows (copies; the masks start empty)."""
        return replace(self, keys=self.keys[rows], matrix=self.matrix[rows], src=self.src[rows],
                       kind=self.kind[rows], page=self.page[rows], masks={},
                       lock=threading.Lock())  # fmt: skip


class SqliteVectors:
    """`VectorBackend` for one embedding model."""

    def __init__(
        self, store: SqliteStore, model: str, dim: int, settings: RetrievalSettings, index_dir: Path
    ) -> None:
        self.store, self.model, self.dim, self.settings = store, model, dim, settings
        self.ann = AnnFile(index_dir, model, dim, settings)
        self._snap = _Snapshot.empty(dim)
        self._refreshing = threading.Lock()

    @property
    def keys(self) -> npt.NDArray[np.int64]:
        """Keys of the current snapshot, ascending."""
        return self._snap.keys

    @property
    def matrix(self) -> npt.NDArray[np.float32]:
        """Vectors of the current snapshot, one row per key."""
        return self._snap.matrix

    @property
    def _use_ann(self) -> bool:
        return self._snap.use_ann

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
                rollback(self.store.conn)
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

    def refresh(self) -> _Snapshot:
        """The snapshot searches read, brought up to date when the vectors changed.

        A snapshot is never modified: a refresh builds the next one from the previous one
        (one scan of the model's keys finds what was added and removed; only added rows are
        read) and swaps it in under a lock, so a search always sees keys, matrix, columns and
        masks of one generation, and two refreshers never append the same rows twice. An HNSW
        file that cannot be written (disk full) leaves the search exact until a later
        refresh writes it."""
        snap = self._snap
        if self.generation() == snap.gen:
            return snap
        with self._refreshing:
            snap = self._snap
            gen = self.generation()
            if gen == snap.gen:
                return snap
            with self.store.lock:
                stored = np.fromiter(
                    (
                        r[0]
                        for r in self.store.conn.execute(
                            "SELECT key FROM block_vectors WHERE model = ? ORDER BY key",
                            (self.model,),
                        )
                    ),
                    np.int64,
                )
            nxt = snap
            if len(snap.keys):
                keep = np.isin(snap.keys, stored, assume_unique=True)
                if not keep.all():
                    nxt = nxt.take(np.flatnonzero(keep))
            new = stored[~np.isin(stored, nxt.keys, assume_unique=True)]
            if len(new):
                nxt = self._append(nxt, new if len(new) < len(stored) // 2 else None)
            use_ann = len(nxt.keys) > self.settings.ann_threshold
            if use_ann:
                try:
                    if self.ann.generation() != gen:
                        self.ann.sync(nxt.keys, nxt.matrix, gen)
                    self.ann.open()
                except OSError as exc:
                    log.warning("vector index file not written (%s); searching exactly", exc)
                    use_ann = False
            else:
                self.ann.drop()
            self._snap = nxt = replace(nxt, gen=gen, use_ann=use_ann, masks={})
            return nxt

    def _append(self, snap: _Snapshot, new: npt.NDArray[np.int64] | None) -> _Snapshot:
        """`snap` with the rows of `new` keys (all keys when None) merged in key order."""
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
                snap = snap.take(np.zeros(0, np.intp))
            else:
                for i in range(0, len(new), 500):
                    chunk = [int(k) for k in new[i : i + 500]]
                    rows += self.store.conn.execute(
                        f"{sql} AND v.key IN ({','.join('?' * len(chunk))}){order_by}",
                        [self.model, *chunk],
                    ).fetchall()
        kinds = {k: i for i, k in enumerate(BLOCK_KINDS)}
        codes = dict(snap.sources)
        n = len(rows)
        keys = np.concatenate([snap.keys, np.fromiter((r[0] for r in rows), np.int64, n)])
        blob = b"".join(r[1] for r in rows)
        added = np.frombuffer(blob, np.float32).reshape(n, self.dim)
        matrix = np.concatenate([snap.matrix, added]) if len(snap.keys) else added
        src = np.fromiter((codes.setdefault(r[2], len(codes)) for r in rows), np.int32, n)
        kind = np.fromiter((kinds.get(r[3], -1) for r in rows), np.int8, n)
        page = np.fromiter((r[4] for r in rows), np.int32, n)
        out = replace(
            snap,
            keys=keys,
            matrix=matrix,
            src=np.concatenate([snap.src, src]),
            kind=np.concatenate([snap.kind, kind]),
            page=np.concatenate([snap.page, page]),
            sources=codes,
        )
        if len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1])):
            out = out.take(np.argsort(keys, kind="stable"))
        return out

    def sync(self) -> None:
        """Refresh now (the indexer calls this so searchers find an up-to-date HNSW file)."""
        self.refresh()

    # -- searching ----------------------------------------------------------------------
    def _mask(self, snap: _Snapshot, f: SearchFilters) -> Mask | None:
        """Allowed rows of `snap`, or None when everything is allowed; cached in the snapshot
        per filter until any index generation moves (vectors added or removed, a source's
        ACL, labels or superseded flag changed: the triggers of migrations 0002 and 0004)."""
        with self.store.lock:
            gens = tuple(
                tuple(r) for r in self.store.conn.execute("SELECT name, gen FROM index_generation")
            )
        key = (f, gens)
        with snap.lock:
            if key in snap.masks:
                return snap.masks[key]
        mask = self._compute_mask(snap, f)
        with snap.lock:
            if len(snap.masks) >= 32:
                snap.masks.clear()
            snap.masks[key] = mask
        return mask

    def _compute_mask(self, snap: _Snapshot, f: SearchFilters) -> Mask | None:
        where, params = source_where(f)
        with self.store.lock:
            rows = self.store.conn.execute(
                f"SELECT s.id, ({where}) FROM sources s", params
            ).fetchall()
        ok = [sid for sid, allowed in rows if allowed]
        if not f.block_level and len(ok) == len(rows):
            return None
        codes = [snap.sources[s] for s in ok if s in snap.sources]
        mask: Mask = np.isin(snap.src, np.asarray(codes, np.int32))
        if f.kinds:
            codes8 = [i for i, k in enumerate(BLOCK_KINDS) if k in f.kinds]
            mask &= np.isin(snap.kind, np.asarray(codes8, np.int8))
        if f.pages is not None:
            mask &= (snap.page >= f.pages[0]) & (snap.page <= f.pages[1])
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
            mask &= np.isin(snap.keys, np.asarray(keys, np.int64))
        return mask

    def search(self, query: Matrix, n: int, filters: SearchFilters) -> list[tuple[int, float]]:
        """Top-n (key, cosine) among allowed vectors; see the module docstring."""
        snap = self.refresh()
        total = len(snap.keys)
        if total == 0 or n <= 0:
            return []
        q = np.asarray(query, np.float32).reshape(-1)
        mask = self._mask(snap, filters)
        allowed = total if mask is None else int(mask.sum())
        if allowed == 0:
            return []
        if snap.use_ann:
            frac = allowed / total
            exact = mask is not None and (
                allowed <= self.settings.filtered_exact_max or frac < 0.05
            )
            if not exact:
                hits = self._ann(snap, q, n, mask, frac)
                if hits is not None:
                    return hits
        rows = np.arange(total) if mask is None else np.flatnonzero(mask)
        return _exact(snap, q, n, rows)

    def _ann(
        self, snap: _Snapshot, q: Matrix, n: int, mask: Mask | None, frac: float
    ) -> list[tuple[int, float]] | None:
        keys_all = snap.keys
        want = min(n, len(keys_all) if mask is None else int(mask.sum()))
        count = int(min(len(keys_all), max(n, np.ceil(n / frac * 2))))
        for _ in range(3):
            keys, sims = self.ann.search(q, count)
            rows = np.clip(np.searchsorted(keys_all, keys), 0, len(keys_all) - 1)
            ok = keys_all[rows] == keys  # the file may hold keys this snapshot does not
            if mask is not None:
                ok &= mask[rows]
            keys, sims = keys[ok], sims[ok]
            if len(keys) >= want:
                return [(int(k), float(s)) for k, s in zip(keys[:n], sims[:n], strict=True)]
            if count >= len(keys_all):
                break
            count = min(len(keys_all), count * 2)
        return None

    def unindexed(self, source_id: str) -> int:
        """Blocks of the source without an FTS row or a vector of this model."""
        with self.store.lock:
            row = self.store.conn.execute(
                "SELECT count(*) FROM blocks b LEFT JOIN index_blocks ib ON ib.block_id = b.id "
                "LEFT JOIN block_vectors v ON v.key = ib.key AND v.model = ? "
                "WHERE b.source_id = ? AND v.key IS NULL",
                (self.model, source_id),
            ).fetchone()
        return int(row[0])

    def vectors(self, keys: Sequence[int]) -> dict[int, Matrix]:
        """Vectors by key from the current snapshot."""
        snap = self.refresh()
        if not len(snap.keys):
            return {}
        arr = np.asarray(list(keys), np.int64)
        rows = np.clip(np.searchsorted(snap.keys, arr), 0, len(snap.keys) - 1)
        return {int(k): snap.matrix[r] for k, r in zip(arr, rows, strict=True) if snap.keys[r] == k}


def _exact(snap: _Snapshot, q: Matrix, n: int, rows: npt.NDArray[Any]) -> list[tuple[int, float]]:
    sub = snap.matrix if len(rows) == len(snap.keys) else snap.matrix[rows]
    scores = sub @ q
    top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(snap.keys[rows[i]]), float(scores[i])) for i in top]
