"""FTS5's bm25() over in-memory posting arrays: lexical search for large corpora.

FTS5 answers an OR query by scoring every row that matches any term inside SQLite (about a
microsecond a row here), so at a million blocks one common query word means hundreds of
thousands of rows scored per query. This index holds the same postings as numpy arrays
(`postings.Segment`) and computes the score FTS5's bm25() gives (`score` below: the same
tokens, idf from the same row counts, the same document lengths, average length and column
weights), so results equal those of an unpruned FTS5 query, in a few milliseconds.

SQLite stays the source of truth. The index is derived from `blocks_fts`, saved beside the
store (`<index_dir>/lexical/`, memory-mapped when opened) and kept current by generation
counters bumped by triggers (migration 0004): new rows are tokenized into a small tail
segment, deleted rows are masked out (and their postings dropped at the next rebuild, once
the tail or the dead rows pass a tenth of the index), a change of a source's ACL, labels or
superseded flag re-reads the scope column of that source's rows (found in the change log of
migration 0005). Filters are masks built from the same scope
tokens the FTS5 query uses (`scope.scope_clauses`) plus the page column, applied to the
scored rows before the top n is taken.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from footnote.index.postings import (
    F32,
    I32,
    I64,
    RowBatch,
    Segment,
    Vocabulary,
    fts_averages,
    read_rows,
    varints,
    word_splitter,
)
from footnote.index.scope import Clause
from footnote.store.sqlite import SqliteStore

K1, B = 1.2, 0.75
FORMAT = 1
GENERATIONS = ("lexical_rows", "lexical_scope", "lexical_text")
FLOOR_DF = 50_000
"""A term in over half the rows gets FTS5's floor idf (1e-6), so it moves a score by at most
~2e-6; when such a term has more postings than this, it is only scored if the other terms
leave fewer than n candidates."""
SELECTIVE = 16
"""A filter is selective (its allowed rows are probed, see `_accumulate`) when the allowed
rows are fewer than a sixteenth of a posting list (or of all rows)."""
Mask = npt.NDArray[np.bool_]


@dataclass
class _State:
    """Everything a query reads; replaced whole by `refresh`, never mutated in place."""

    gens: tuple[int, ...]
    base_id: str
    vocab: Vocabulary
    base: Segment
    tail: Segment
    tail_coo: tuple[I32, I32, F32]
    base_rows: int
    keys: I64
    doclen: I32
    page: I32
    alive: Mask
    scope_vocab: dict[str, int]
    scope_coo: tuple[I32, I32]
    scope: Segment
    scope_seq: int
    norm: F32 = field(default_factory=lambda: np.zeros(0, np.float32))
    avgdl: float = 0.0
    masks: dict[object, tuple[Mask, I64]] = field(default_factory=dict)


class Bm25Index:
    """The in-memory counterpart of `blocks_fts` (see the module docstring)."""

    def __init__(self, store: SqliteStore, folder: Path | None) -> None:
        self.store = store
        self.folder = folder
        self._state: _State | None = None
        self._lock = threading.Lock()
        self._refreshing = threading.Lock()

    # -- keeping current ----------------------------------------------------------------
    def generations(self) -> tuple[int, ...]:
        marks = ",".join("?" * len(GENERATIONS))
        with self.store.lock:
            got = dict(
                self.store.conn.execute(
                    f"SELECT name, gen FROM index_generation WHERE name IN ({marks})", GENERATIONS
                ).fetchall()
            )
        return tuple(int(got.get(g, 0)) for g in GENERATIONS)

    def refresh(self, *, save: bool = False) -> None:
        """Bring the index up to date with `blocks_fts` (and write it when `save`).

        A full rebuild reads a snapshot of `blocks_fts` on a private read-only connection,
        holding neither the store's lock nor the one searches take: readers keep using the
        previous state (and the store) meanwhile, and the new state is swapped in whole. Only
        the small incremental steps run under the locks; files are written after them."""
        gens = self.generations()
        st = self._state
        if st is not None and st.gens == gens and not save:
            return
        with self._refreshing:
            st = self._state
            if st is None:
                with self._lock, self.store.lock:
                    st = self._load()
            if st is None or st.gens[2] != self.generations()[2]:
                st = self._snapshot_build()
            for _ in range(3):
                gens = self.generations()
                if st.gens == gens:
                    break
                with self._lock, self.store.lock:
                    if st.gens[0] != gens[0]:
                        st = self._update_rows(st)
                    if st.gens[1] != gens[1]:
                        st = self._update_scope(st)
                    st = replace(st, gens=gens)
                dead = int((~st.alive).sum())
                if len(st.keys) - st.base_rows > max(10_000, st.base_rows // 10) or (
                    dead > max(1_000, len(st.keys) // 10)
                ):
                    st = self._snapshot_build()
                    continue
                break
            with self._lock, self.store.lock:
                self._state = st = self._finish(st)
            if save and not self._saved(st.gens):
                self._save(st)

    def _snapshot_build(self) -> _State:
        """A full build from one read snapshot on a private connection (see `refresh`)."""
        with self.store.lock:
            word_splitter(self.store.conn)  # computed once per process, on the store's connection
        conn = sqlite3.connect(f"file:{self.store.path}?mode=ro", uri=True, check_same_thread=False)
        try:
            conn.execute("BEGIN")
            marks = ",".join("?" * len(GENERATIONS))
            got = dict(conn.execute(
                f"SELECT name, gen FROM index_generation WHERE name IN ({marks})", GENERATIONS
            ).fetchall())  # fmt: skip
            st = self._build(tuple(int(got.get(g, 0)) for g in GENERATIONS), conn)
            conn.execute("COMMIT")
        finally:
            conn.close()
        st.vocab.conn = self.store.conn  # searches tokenize on the store's connection
        return st

    def _build(self, gens: tuple[int, ...], conn: sqlite3.Connection) -> _State:
        """Read every row of `blocks_fts` (on `conn`) into one base segment."""
        vocab = Vocabulary(conn)
        seq = int(conn.execute(
            "SELECT coalesce(max(seq), 0) FROM index_scope_changes").fetchone()[0])  # fmt: skip
        batches = list(read_rows(conn, vocab, None, 0))
        keys, doclen, page, coo, scope_tokens = _concat(batches)
        scope = _scope_coo({}, scope_tokens, 0)
        st = _State(
            gens=gens,
            base_id=uuid.uuid4().hex,
            vocab=vocab,
            base=Segment.from_coo(*coo, len(vocab.tokens)),
            tail=Segment.empty(),
            tail_coo=_empty_coo(),
            base_rows=len(keys),
            keys=keys,
            doclen=doclen,
            page=page,
            alive=np.ones(len(keys), bool),
            scope_vocab=scope[2],
            scope_coo=scope[:2],
            scope=Segment.empty(),
            scope_seq=seq,
        )
        return _with_scope(st, scope[:2])

    def _update_rows(self, st: _State) -> _State:
        """Mask deleted rows, tokenize new ones into the tail segment."""
        conn = self.store.conn
        current = np.fromiter(
            (r[0] for r in conn.execute("SELECT key FROM index_blocks ORDER BY key")), np.int64
        )
        alive = st.alive & np.isin(st.keys, current)
        new = current[~np.isin(current, st.keys)]
        if not len(new):
            return replace(st, alive=alive, masks={})
        batches = list(read_rows(conn, st.vocab, new, len(st.keys)))
        keys, doclen, page, coo, scope_tokens = _concat(batches)
        tids = np.concatenate([st.tail_coo[0], coo[0]])
        rows = np.concatenate([st.tail_coo[1], coo[1]])
        freq = np.concatenate([st.tail_coo[2], coo[2]])
        s_tids, s_rows, s_vocab = _scope_coo(dict(st.scope_vocab), scope_tokens, len(st.keys))
        st = replace(
            st,
            tail=Segment.from_coo(tids, rows, freq, len(st.vocab.tokens)),
            tail_coo=(tids, rows, freq),
            keys=np.concatenate([st.keys, keys]),
            doclen=np.concatenate([st.doclen, doclen]),
            page=np.concatenate([st.page, page]),
            alive=np.concatenate([alive, np.ones(len(keys), bool)]),
            scope_vocab=s_vocab,
        )
        coo2 = (
            np.concatenate([st.scope_coo[0], s_tids]),
            np.concatenate([st.scope_coo[1], s_rows]),
        )
        return _with_scope(st, coo2)

    def _scope_log(self) -> tuple[int, int]:
        """(oldest, newest) sequence number in `index_scope_changes`, (0, 0) when empty."""
        lo, hi = self.store.conn.execute(
            "SELECT coalesce(min(seq), 0), coalesce(max(seq), 0) FROM index_scope_changes"
        ).fetchone()
        return int(lo), int(hi)

    def _update_scope(self, st: _State) -> _State:
        """`st` with the scope tokens and lengths of rows whose source changed (ACL, labels or
        superseded flag) re-read, from the change log; every row when the log cannot say."""
        lo, hi = self._scope_log()
        conn = self.store.conn
        sources = [
            str(r[0])
            for r in conn.execute(
                "SELECT DISTINCT source_id FROM index_scope_changes WHERE seq > ?", (st.scope_seq,)
            )
        ]
        if st.scope_seq < 0 or hi <= st.scope_seq or lo > st.scope_seq + 1 or len(sources) > 500:
            return self._read_scope(st, hi)
        marks = ",".join("?" * len(sources))
        keys = np.fromiter(
            (
                r[0]
                for r in conn.execute(
                    "SELECT ib.key FROM index_blocks ib JOIN blocks b ON b.id = ib.block_id "
                    f"WHERE b.source_id IN ({marks})",
                    sources,
                )
            ),
            np.int64,
        )
        sel = np.flatnonzero(np.isin(st.keys, keys))
        got = self._scope_rows(" AND f.rowid IN (SELECT value FROM json_each(?))", keys)
        doclen = st.doclen.copy()
        vocab = dict(st.scope_vocab)
        tids: list[int] = []
        rows: list[int] = []
        for r in sel.tolist():
            text, length = got.get(int(st.keys[r]), ("", int(doclen[r])))
            doclen[r] = length
            for t in text.split():
                tids.append(vocab.setdefault(t, len(vocab)))
                rows.append(r)
        keep = ~np.isin(st.scope_coo[1], sel)
        coo = (
            np.concatenate([st.scope_coo[0][keep], np.asarray(tids, np.int32)]),
            np.concatenate([st.scope_coo[1][keep], np.asarray(rows, np.int32)]),
        )
        return _with_scope(replace(st, scope_vocab=vocab, doclen=doclen, scope_seq=hi), coo)

    def _scope_rows(self, where: str, keys: I64 | None) -> dict[int, tuple[str, int]]:
        """Key -> (scope text, length in tokens) of FTS rows, in pages of 50,000."""
        got: dict[int, tuple[str, int]] = {}
        last = -(2**63)
        extra = [] if keys is None else [json.dumps(keys.tolist())]
        while True:
            rows = self.store.conn.execute(
                "SELECT f.rowid, f.scope, d.sz FROM blocks_fts f JOIN blocks_fts_docsize d "
                f"ON d.id = f.rowid WHERE f.rowid > ?{where} ORDER BY f.rowid LIMIT 50000",
                [last, *extra],
            ).fetchall()
            if not rows:
                return got
            last = int(rows[-1][0])
            got.update(
                (int(k), (str(sc or ""), sum(varints(bytes(sz or b""))))) for k, sc, sz in rows
            )

    def _read_scope(self, st: _State, seq: int) -> _State:
        """`st` with every row's scope tokens and length re-read from `blocks_fts`."""
        got = self._scope_rows("", None)
        keys = st.keys.tolist()
        doclen = np.fromiter(
            (got[k][1] if k in got else d for k, d in zip(keys, st.doclen.tolist(), strict=True)),
            np.int32,
            len(keys),
        )
        tids, rows_, vocab = _scope_coo(
            {}, [got[k][0].split() if k in got else [] for k in keys], 0
        )
        return _with_scope(
            replace(st, scope_vocab=vocab, doclen=doclen, scope_seq=seq), (tids, rows_)
        )

    def _finish(self, st: _State) -> _State:
        """`st` with each row's length normaliser k1·(1 − b + b·D/avgdl) for the current avgdl."""
        n_rows, total = self._averages()
        avgdl = total / n_rows if n_rows else 1.0
        if st.avgdl == avgdl and len(st.norm) == len(st.keys):
            return st
        norm = (K1 * (1 - B + B * st.doclen.astype(np.float32) / np.float32(avgdl))).astype(
            np.float32
        )
        return replace(st, avgdl=avgdl, norm=norm)

    def _averages(self) -> tuple[int, int]:
        return fts_averages(self.store.conn)

    # -- persistence ----------------------------------------------------------------------
    def _meta(self) -> dict[str, object] | None:
        if self.folder is None:
            return None
        try:
            meta = json.loads((self.folder / "meta.json").read_text())
        except (OSError, ValueError):
            return None
        return meta if isinstance(meta, dict) and meta.get("format") == FORMAT else None

    def _saved(self, gens: tuple[int, ...]) -> bool:
        meta = self._meta()
        return meta is not None and tuple(meta.get("gens", ())) == gens  # type: ignore[arg-type]

    def _save(self, st: _State) -> None:
        """Write the index; the base segment only when it is not the one already on disk."""
        if self.folder is None:
            return
        meta = self._meta()
        if meta is not None and meta.get("base_id") == st.base_id:
            self._write_small(st, self.folder)
            return
        tmp = self.folder.with_name(self.folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        _save_segment(st.base, tmp, "base")
        self._write_small(st, tmp)
        old = self.folder.with_name(self.folder.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if self.folder.exists():
            self.folder.rename(old)
        tmp.rename(self.folder)
        shutil.rmtree(old, ignore_errors=True)

    @staticmethod
    def _write_small(st: _State, folder: Path) -> None:
        """Everything but the base segment, each file replaced atomically, meta.json last."""
        arrays: dict[str, npt.NDArray[Any]] = {
            "keys": st.keys,
            "doclen": st.doclen,
            "page": st.page,
            "alive": st.alive,
            "tail_tids": st.tail_coo[0],
            "tail_rows": st.tail_coo[1],
            "tail_freq": st.tail_coo[2],
            "scope_tids": st.scope_coo[0],
            "scope_rows": st.scope_coo[1],
        }
        savez: Callable[..., None] = np.savez
        _atomic(folder / "rows.npz", lambda f: savez(f, **arrays))
        _atomic(folder / "tokens.txt", lambda f: f.write("\n".join(st.vocab.tokens).encode()))
        _atomic(folder / "scope.txt", lambda f: f.write("\n".join(st.scope_vocab).encode()))
        meta = {
            "format": FORMAT,
            "gens": list(st.gens),
            "base_rows": st.base_rows,
            "base_id": st.base_id,
            "scope_seq": st.scope_seq,
        }
        _atomic(folder / "meta.json", lambda f: f.write(json.dumps(meta).encode()))

    def _load(self) -> _State | None:
        meta = self._meta()
        if meta is None or self.folder is None:
            return None
        f = self.folder
        try:
            tokens = (f / "tokens.txt").read_text(encoding="utf-8")
            scope_names = (f / "scope.txt").read_text(encoding="utf-8")
            with np.load(f / "rows.npz") as z:
                arrays = {k: z[k] for k in z.files}
            st = _State(
                gens=tuple(int(g) for g in meta["gens"]),  # type: ignore[attr-defined]
                base_id=str(meta["base_id"]),
                vocab=Vocabulary(self.store.conn, tokens.split("\n") if tokens else []),
                base=Segment.load(f, "base"),
                tail=Segment.from_coo(
                    arrays["tail_tids"],
                    arrays["tail_rows"],
                    arrays["tail_freq"],
                    len(tokens.split("\n")) if tokens else 0,
                ),
                tail_coo=(arrays["tail_tids"], arrays["tail_rows"], arrays["tail_freq"]),
                base_rows=int(meta["base_rows"]),  # type: ignore[call-overload]
                keys=arrays["keys"],
                doclen=arrays["doclen"],
                page=arrays["page"],
                alive=arrays["alive"],
                scope_vocab={t: i for i, t in enumerate(scope_names.split("\n"))}
                if scope_names
                else {},
                scope_coo=(arrays["scope_tids"], arrays["scope_rows"]),
                scope=Segment.empty(),
                scope_seq=int(meta.get("scope_seq", -1)),  # type: ignore[call-overload]
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return _with_scope(st, st.scope_coo)

    # -- searching ------------------------------------------------------------------------
    @property
    def rows(self) -> int:
        return 0 if self._state is None else int(self._state.alive.sum())

    def search(
        self,
        words: Sequence[str],
        n: int,
        clauses: Sequence[Clause],
        pages: tuple[int, int] | None,
    ) -> list[tuple[int, float]] | None:
        """Top-n (key, score) as FTS5's bm25() ranks `{section body cjk}: (w1 OR w2 …)`
        under the filters; None when a word is a phrase to FTS5 (several tokens)."""
        self.refresh()
        st = self._state
        assert st is not None
        with self._lock, self.store.lock:
            ids = st.vocab.word_ids(list(dict.fromkeys(words)))
            n_rows, _ = self._averages()
        if any(len(ids[w]) > 1 for w in words):
            return None
        terms: list[tuple[int, float, int]] = []  # (token id, idf, df), one per query word
        for w in words:
            if ids[w] and (df := self._df(st, ids[w][0])):
                idf = math.log((n_rows - df + 0.5) / (df + 0.5))
                terms.append((ids[w][0], idf if idf > 0 else 1e-6, df))
        if not terms or n <= 0:
            return []
        mask, allowed = self._mask(st, clauses, pages)
        scores = np.zeros(len(st.keys), np.float32)
        floor = [t for t in terms if t[1] == 1e-6 and t[2] > FLOOR_DF]
        for t in terms:
            if t not in floor:
                self._accumulate(st, scores, t[0], t[1], allowed)
        hits = self._top(st, scores, mask, allowed, n)
        if floor and len(hits) < n:
            for t in floor:
                self._accumulate(st, scores, t[0], t[1], allowed)
            hits = self._top(st, scores, mask, allowed, n)
        return hits

    @staticmethod
    def _df(st: _State, tid: int) -> int:
        """Rows holding the token; deleted rows are not counted (FTS5 no longer has them)."""
        if st.alive.all():
            return st.base.df(tid) + st.tail.df(tid)
        return sum(int(st.alive[seg.postings(tid)[0]].sum()) for seg in (st.base, st.tail))

    @staticmethod
    def _accumulate(st: _State, scores: F32, tid: int, idf: float, allowed: I64) -> None:
        """Add one term's bm25() contribution. A posting list much longer than the allowed
        rows (a selective filter) is probed at those rows (binary search: each token's rows
        are sorted) instead of being walked."""
        for seg in (st.base, st.tail):
            rows, freq = seg.postings(tid)
            if not len(rows):
                continue
            if len(allowed) * SELECTIVE < len(rows):
                pos = np.minimum(np.searchsorted(rows, allowed), len(rows) - 1)
                found = rows[pos] == allowed
                rows, freq = allowed[found], freq[pos[found]]
            f = freq.astype(np.float32)
            scores[rows] += np.float32(idf * (K1 + 1)) * f / (f + st.norm[rows])

    @staticmethod
    def _top(st: _State, scores: F32, mask: Mask, allowed: I64, n: int) -> list[tuple[int, float]]:
        if len(allowed) * SELECTIVE < len(scores):
            cand = allowed[scores[allowed] > 0]
        else:
            cand = np.flatnonzero((scores > 0) & mask)
        if len(cand) > n:
            cand = cand[np.argpartition(-scores[cand], n - 1)[:n]]
        order = np.lexsort((st.keys[cand], -scores[cand]))
        return [(int(st.keys[cand[i]]), float(scores[cand[i]])) for i in order]

    def _mask(
        self, st: _State, clauses: Sequence[Clause], pages: tuple[int, int] | None
    ) -> tuple[Mask, I64]:
        """Rows the filters allow (alive, scope clauses, page range) as a mask and as sorted
        row numbers, cached per filter."""
        sig = (tuple((op, tuple(toks)) for op, toks in clauses), pages)
        hit = st.masks.get(sig)
        if hit is not None:
            return hit
        mask = st.alive.copy()
        for op, toks in clauses:
            sel = np.zeros(len(st.keys), bool)
            for t in toks:
                sid = st.scope_vocab.get(t)
                if sid is not None:
                    sel[st.scope.postings(sid)[0]] = True
            mask &= sel if op == "AND" else ~sel
        if pages is not None:
            mask &= (st.page >= pages[0]) & (st.page <= pages[1])
        if len(st.masks) >= 32:
            st.masks.clear()
        st.masks[sig] = (mask, np.flatnonzero(mask))
        return st.masks[sig]


def _scope_coo(
    vocab: dict[str, int], rows: list[list[str]], first_row: int
) -> tuple[I32, I32, dict[str, int]]:
    """(token ids, row numbers, vocabulary) of each row's scope tokens; extends `vocab`."""
    tids = np.asarray([vocab.setdefault(t, len(vocab)) for toks in rows for t in toks], np.int32)
    counts = [len(t) for t in rows]
    nums = np.repeat(np.arange(first_row, first_row + len(rows), dtype=np.int32), counts)
    return tids, nums.astype(np.int32), vocab


def _with_scope(st: _State, coo: tuple[I32, I32]) -> _State:
    """`st` with the scope segment rebuilt from `coo` (token ids from `st.scope_vocab`)."""
    tids, rows = coo
    seg = Segment.from_coo(tids, rows, np.ones(len(tids), np.float32), len(st.scope_vocab))
    return replace(st, scope_coo=coo, scope=seg, masks={})


def _atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a file through a temporary name and rename it into place."""
    part = path.with_name(path.name + ".part")
    with open(part, "wb") as f:
        write(f)
    os.replace(part, path)


def _save_segment(seg: Segment, folder: Path, name: str) -> None:
    for part in ("indptr", "rows", "freq"):
        arr: npt.NDArray[Any] = getattr(seg, part)
        _atomic(folder / f"{name}.{part}.npy", partial(np.save, arr=arr))


def _empty_coo() -> tuple[I32, I32, F32]:
    return np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32)


def _concat(
    batches: list[RowBatch],
) -> tuple[I64, I32, I32, tuple[I32, I32, F32], list[list[str]]]:
    if not batches:
        return np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32), _empty_coo(), []
    cat = np.concatenate
    return (
        cat([b.keys for b in batches]),
        cat([b.doclen for b in batches]),
        cat([b.page for b in batches]),
        (
            cat([b.tids for b in batches]),
            cat([b.rows for b in batches]),
            cat([b.freq for b in batches]),
        ),
        [s for b in batches for s in b.scope],
    )
