"""Posting arrays read from `blocks_fts`: FTS5's own tokens, per row and column, as numpy.

A row's text columns are split into words exactly where SQLite's `unicode61` splits them (the
character classes are asked of SQLite, see `word_splitter`), and every distinct word is turned
into index tokens by FTS5 itself (a TEMP FTS5 table with the same tokenizer, read back through
`fts5vocab`), so case folding, diacritics and porter stems are those of the SQLite index.
Document lengths come from FTS5's `docsize` records, so they count every column as bm25() does.

A `Segment` is a compressed-sparse-row posting list per token id: `rows[indptr[t]:
indptr[t + 1]]` are the rows holding token `t` in the section, body or CJK column, `freq`
the column-weighted number of occurrences (section 0.5, body 1, CJK 1: `scope.BM25_WEIGHTS`).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from footnote.index.scope import BM25_WEIGHTS

TOKENIZE = "porter unicode61 remove_diacritics 2"
_SPLITTER: list[WordSplitter] = []
_SPLITTER_LOCK = threading.Lock()
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
READ_BATCH = 5_000
NONE, MULTI = -1, -2
"""`Vocabulary.codes` for a word FTS5 drops, and for one it splits into several tokens."""
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]


def varints(buf: bytes) -> list[int]:
    """SQLite's big-endian varints packed in `buf` (FTS5 size and average records)."""
    out: list[int] = []
    i, n = 0, len(buf)
    while i < n:
        value = 0
        for j in range(9):
            byte = buf[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80 or i >= n:
                break
        out.append(value)
    return out


class WordSplitter:
    """Splits text into the words `unicode61` sees: runs of the code points in `ranges`.

    Python's regex engine is fast on a class of BMP characters (a bitmap) and slow once
    astral ranges join it, so text is split with the ASCII, BMP or full class, whichever
    its characters need."""

    def __init__(self, ranges: Sequence[tuple[int, int]]) -> None:
        def cls(lo_max: int, hi_max: int) -> re.Pattern[str]:
            parts = [(lo, min(hi, hi_max)) for lo, hi in ranges if lo <= lo_max]
            body = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in parts)
            return re.compile(f"[{body}]+")

        self.ascii, self.bmp, self.full = (
            cls(0x7F, 0x7F),
            cls(0xFFFF, 0xFFFF),
            cls(0x10FFFF, 0x10FFFF),
        )

    def split(self, text: str) -> list[str]:
        if text.isascii():
            return self.ascii.findall(text)
        if _ASTRAL.search(text) is None:
            return self.bmp.findall(text)
        return self.full.findall(text)


def word_splitter(conn: sqlite3.Connection) -> WordSplitter:
    """Split text as SQLite's `unicode61` tokenizer does (see `WordSplitter`).

    SQLite's Unicode tables are older than Python's and diacritics join tokens, so the class
    is asked of FTS5 itself: a TEMP table holds, for each range of code points, the string
    `q<c1>q<c2>…q<cn>z`, one token when every character joins, n + 1 when none does; mixed
    ranges are halved until uniform (a few thousand rows, ~0.1 s, once per process)."""
    with _SPLITTER_LOCK:
        if _SPLITTER:
            return _SPLITTER[0]
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fn_chars USING fts5(w, "
            "tokenize = 'unicode61 remove_diacritics 2', detail = none)"
        )
        keep: list[tuple[int, int]] = []
        todo = [
            (lo, min(lo + 1023, 0x10FFFF))
            for lo in range(0, 0x110000, 1024)
            if not 0xD800 <= lo <= 0xDFFF
        ]
        conn.execute("SAVEPOINT fn_chars")
        try:
            while todo:
                conn.execute("DELETE FROM temp.fn_chars")
                conn.executemany(
                    "INSERT INTO temp.fn_chars(rowid, w) VALUES (?,?)",
                    (
                        (i, "q" + "q".join(chr(c) for c in range(lo, hi + 1)) + "z")
                        for i, (lo, hi) in enumerate(todo)
                    ),
                )
                sizes = dict(conn.execute("SELECT id, sz FROM temp.fn_chars_docsize").fetchall())
                nxt = []
                for i, (lo, hi) in enumerate(todo):
                    n = hi - lo + 1
                    tokens = varints(bytes(sizes[i]))[0]
                    if tokens == 1:
                        keep.append((lo, hi))
                    elif tokens != n + 1:
                        mid = (lo + hi) // 2
                        nxt += [(lo, mid), (mid + 1, hi)]
                todo = nxt
            conn.execute("DELETE FROM temp.fn_chars")
        finally:
            conn.execute("RELEASE fn_chars")
        keep.sort()
        merged: list[tuple[int, int]] = []
        for lo, hi in keep:
            if merged and merged[-1][1] + 1 == lo:
                merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        _SPLITTER.append(WordSplitter(merged))
        return _SPLITTER[0]


def fts_averages(conn: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens in all columns) of `blocks_fts`, from FTS5's averages record."""
    row = conn.execute("SELECT block FROM blocks_fts_data WHERE id = 1").fetchone()
    vals = varints(bytes(row[0])) if row and row[0] else [0]
    return vals[0], sum(vals[1:])


@dataclass
class Segment:
    """Token id -> (rows, weighted frequencies), compressed sparse rows."""

    indptr: I64
    rows: I32
    freq: npt.NDArray[np.float16]

    @classmethod
    def empty(cls) -> Segment:
        return cls(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float16))

    @classmethod
    def from_coo(cls, tids: I32, rows: I32, freq: F32, n_tokens: int) -> Segment:
        order = np.argsort(tids, kind="stable")
        indptr = np.zeros(n_tokens + 1, np.int64)
        np.cumsum(np.bincount(tids, minlength=n_tokens), out=indptr[1:])
        return cls(indptr, rows[order], freq[order].astype(np.float16))

    def postings(self, tid: int) -> tuple[I32, npt.NDArray[np.float16]]:
        if tid + 1 >= len(self.indptr):
            return self.rows[:0], self.freq[:0]
        a, b = int(self.indptr[tid]), int(self.indptr[tid + 1])
        return self.rows[a:b], self.freq[a:b]

    def df(self, tid: int) -> int:
        return 0 if tid + 1 >= len(self.indptr) else int(self.indptr[tid + 1] - self.indptr[tid])

    @classmethod
    def load(cls, folder: Path, name: str) -> Segment:
        parts = [
            np.load(folder / f"{name}.{p}.npy", mmap_mode="r") for p in ("indptr", "rows", "freq")
        ]
        return cls(*parts)


@dataclass
class RowBatch:
    """Rows read from `blocks_fts` and turned into postings (COO) and scope tokens."""

    keys: I64
    doclen: I32
    page: I32
    tids: I32
    rows: I32
    freq: F32
    scope: list[list[str]]


_columns_local = threading.local()


def fts5_tokens(rows: Sequence[Sequence[str]]) -> list[list[list[str]]]:
    """FTS5's tokens of every column of every row, in order, as the index's tokenizer makes
    them (an in-memory FTS5 table of this thread): what the PostgreSQL backend indexes and
    queries, so both backends rank the same words."""
    if not rows:
        return []
    width = len(rows[0])
    conn: sqlite3.Connection | None = getattr(_columns_local, "conn", None)
    if conn is None:
        conn = _columns_local.conn = sqlite3.connect(":memory:", check_same_thread=True)
    table = f"cols{width}"
    names = ", ".join(f"c{i}" for i in range(width))
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5({names}, "
                 f"tokenize = '{TOKENIZE}')")  # fmt: skip
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table}_i USING fts5vocab({table}, instance)")
    out: list[list[list[str]]] = [[[] for _ in range(width)] for _ in rows]
    found: list[tuple[int, int, int, str]] = []
    with conn:
        conn.execute(f"DELETE FROM {table}")
        conn.executemany(
            f"INSERT INTO {table}(rowid, {names}) VALUES (?, {', '.join('?' * width)})",
            ((i, *row) for i, row in enumerate(rows)),
        )
        names_of = {f"c{i}": i for i in range(width)}
        for doc, term, col, offset in conn.execute(f"SELECT doc, term, col, offset FROM {table}_i"):
            found.append((int(doc), names_of[str(col)], int(offset), str(term)))
        conn.execute(f"DELETE FROM {table}")
    for doc, col, _, term in sorted(found):
        out[doc][col].append(term)
    return out


def tokenize_words(conn: sqlite3.Connection, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """FTS5's tokens of each word, in order, from a TEMP FTS5 table with the index's tokenizer
    (one write transaction for the lot)."""
    todo = list(dict.fromkeys(words))
    if not todo:
        return {}
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.fn_words USING fts5(w, tokenize = '{TOKENIZE}')"
    )
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fn_words_i USING fts5vocab(temp, fn_words, instance)"
    )
    found: dict[int, list[tuple[int, str]]] = {}
    conn.execute("SAVEPOINT fn_words")
    try:
        for i in range(0, len(todo), 50_000):
            conn.execute("DELETE FROM temp.fn_words")
            conn.executemany(
                "INSERT INTO temp.fn_words(rowid, w) VALUES (?,?)",
                ((i + j, w) for j, w in enumerate(todo[i : i + 50_000])),
            )
            for doc, term, offset in conn.execute("SELECT doc, term, offset FROM temp.fn_words_i"):
                found.setdefault(int(doc), []).append((int(offset), str(term)))
        conn.execute("DELETE FROM temp.fn_words")
    finally:
        conn.execute("RELEASE fn_words")
    return {w: tuple(t for _, t in sorted(found.get(i, ()))) for i, w in enumerate(todo)}


class Vocabulary:
    """Token <-> id, and word -> tokens as FTS5 produces them (cached)."""

    def __init__(self, conn: sqlite3.Connection, tokens: Sequence[str] = ()) -> None:
        self.conn = conn
        self.tokens: list[str] = list(tokens)
        self.ids: dict[str, int] = {t: i for i, t in enumerate(self.tokens)}
        self._single: dict[str, int] = {}
        self._multi: dict[str, tuple[int, ...]] = {}

    def id(self, token: str) -> int:
        tid = self.ids.get(token)
        if tid is None:
            tid = self.ids[token] = len(self.tokens)
            self.tokens.append(token)
        return tid

    def tokenize(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """FTS5's tokens of each word (usually one; none for a word it drops)."""
        return tokenize_words(self.conn, words)

    def word_ids(self, words: Sequence[str]) -> dict[str, tuple[int, ...]]:
        """Token ids of each word, tokenizing (and adding) words not seen before."""
        self._learn(set(words))
        return {w: self._multi[w] if self._single[w] == MULTI else self._ids(w) for w in words}

    def _ids(self, word: str) -> tuple[int, ...]:
        code = self._single[word]
        return () if code == NONE else (code,)

    def _learn(self, words: set[str]) -> None:
        new = [w for w in words if w not in self._single]
        if not new:
            return
        for w, toks in self.tokenize(new).items():
            if len(toks) == 1:
                self._single[w] = self.id(toks[0])
            elif not toks:
                self._single[w] = NONE
            else:
                self._single[w] = MULTI
                self._multi[w] = tuple(self.id(t) for t in toks)

    def codes(self, words: list[str]) -> I64:
        """Per word: its token id, `NONE` (no token) or `MULTI` (see `word_ids`)."""
        self._learn(set(words))
        return np.array(list(map(self._single.__getitem__, words)), np.int64)


def read_rows(
    conn: sqlite3.Connection, vocab: Vocabulary, keys: I64 | None, first_row: int
) -> Iterator[RowBatch]:
    """Postings of the FTS rows with these keys (all rows when None), in batches; rows are
    numbered from `first_row` in key order."""
    sql = (
        "SELECT f.rowid, f.section, f.body, f.cjk, f.scope, f.page, d.sz FROM blocks_fts f "
        "JOIN blocks_fts_docsize d ON d.id = f.rowid"
    )
    if keys is None:
        last = -(2**63)
        while True:
            got = conn.execute(
                f"{sql} WHERE f.rowid > ? ORDER BY f.rowid LIMIT {READ_BATCH}", (last,)
            ).fetchall()
            if not got:
                return
            last = int(got[-1][0])
            yield _postings(got, vocab, first_row)
            first_row += len(got)
    else:
        ordered = np.sort(keys)
        for i in range(0, len(ordered), 500):
            chunk = [int(k) for k in ordered[i : i + 500]]
            got = conn.execute(
                f"{sql} WHERE f.rowid IN ({','.join('?' * len(chunk))}) ORDER BY f.rowid", chunk
            ).fetchall()
            if got:
                yield _postings(got, vocab, first_row)
                first_row += len(got)


def _postings(got: list[Any], vocab: Vocabulary, first_row: int) -> RowBatch:
    """Weighted (token, row) frequencies of a batch, summed with numpy."""
    splitter = word_splitter(vocab.conn)
    words: list[str] = []
    lens: list[int] = []
    for r in got:
        for c in (1, 2, 3):
            ws = splitter.split(r[c] or "")
            words.extend(ws)
            lens.append(len(ws))
    n = len(got)
    codes = vocab.codes(words)
    slot = np.repeat(np.arange(3 * n, dtype=np.int64), lens)  # row * 3 + column of each word
    weight = np.asarray(BM25_WEIGHTS[:3], np.float32)[slot % 3]
    rows, tids = slot // 3, codes
    multi = np.flatnonzero(codes == MULTI)
    if len(multi):  # rare: a word FTS5 splits; each of its tokens counts
        extra = [(i, t) for i in multi.tolist() for t in vocab.word_ids([words[i]])[words[i]]]
        at = np.asarray([i for i, _ in extra], np.int64)
        rows = np.concatenate([rows, rows[at]])
        weight = np.concatenate([weight, weight[at]])
        tids = np.concatenate([tids, np.asarray([t for _, t in extra], np.int64)])
    ok = tids >= 0
    key = tids[ok] * n + rows[ok]
    uniq, inverse = np.unique(key, return_inverse=True)
    freq = np.bincount(inverse, weights=weight[ok]).astype(np.float32)
    return RowBatch(
        keys=np.fromiter((r[0] for r in got), np.int64, n),
        doclen=np.fromiter((sum(varints(bytes(r[6] or b""))) for r in got), np.int32, n),
        page=np.fromiter((r[5] if r[5] is not None else -1 for r in got), np.int32, n),
        tids=(uniq // n).astype(np.int32),
        rows=(uniq % n + first_row).astype(np.int32),
        freq=freq,
        scope=[str(r[4] or "").split() for r in got],
    )
