"""`footnote migrate`: copy a workspace's store between SQLite and PostgreSQL, verified.

Every table of record is copied row for row (the two schemas have the same columns), in an
order the foreign keys accept. The search index is carried over, not recomputed: each block
gets a lexical row from the destination's own backend (its tokenisation), and every stored
vector is copied bit for bit under the block's new key, so nothing is embedded again. The
copy is then verified: per table the row count and a SHA-256 over the rows in key order,
and per embedding model the count and a hash of (block id, content hash, float32 bytes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from footnote.config import RetrievalSettings
from footnote.errors import UsageError
from footnote.store.base import DocumentStore
from footnote.store.postgres import PgStore
from footnote.store.sqlite import SqliteStore
from footnote.workspace.stores import open_stores

TABLES: list[tuple[str, str, str]] = [
    ("sources", "id, kind, title, uri, sha256, pages, lang, version, fetched_at, published_at, "
     "source_type, labels, acl_groups, warnings, sections, superseded_by, created_at, meta, "
     "parser, owner", "id"),
    ("blocks", "id, source_id, kind, text, page, bbox, section_path, ord, lang, data", "id"),
    ("users", "id, groups, created_at, admin", "id"),
    ("api_keys", "key_hash, user_id, label, created_at, last_used_at", "key_hash"),
    ("chat_sessions", "user_id, id, title, summary, summary_upto, last_seq, created_at, "
     "updated_at, summary_labels", "user_id, id"),
    ("chat_messages", "id, user_id, session_id, seq, role, content, status, run_id, data, "
     "created_at, labels", "id"),
    ("runs", "id, kind, user_id, session_id, input, status, output, created_at, finished_at",
     "id"),
    ("spans", "run_id, seq, kind, name, data, started_at, duration_s", "run_id, seq"),
    ("run_events", "run_id, seq, type, data, at", "run_id, seq"),
    ("run_links", "parent_id, child_id", "parent_id, child_id"),
    ("feedback", "id, user_id, run_id, message_id, rating, comment, created_at", "id"),
    ("research_runs", "id, user_id, question, options, state, created_at, updated_at", "id"),
    ("research_artifacts", "run_id, stage, key, seq, data, updated_at", "run_id, stage, key"),
    ("research_cards", "id, run_id, seq, snapshot_id, block_id, data", "run_id, id"),
    ("snapshot_blobs", "sha256, raw", "sha256"),
    ("snapshots", "id, sha256, url, final_url, fetched_at, data", "id"),
    ("review_actions", "run_id, seq, at, actor, action, target, data, prev_hash, hash",
     "run_id, seq"),
    ("review_signoffs", "run_id, version, version_hash, reviewer, signed_at, coverage, brief, "
     "action_seq", "run_id, version"),
]  # fmt: skip
DERIVED = {"index_blocks", "block_vectors", "index_generation", "index_scope_changes",
           "blocks_fts", "_migrations", "sqlite_sequence"}  # fmt: skip
"""Tables migrate does not copy row for row: the search index (rebuilt / re-keyed) and
each engine's own bookkeeping."""
"""(table, columns, order) in foreign-key order: what a workspace's record consists of."""
BATCH = 1000


@dataclass
class TableCheck:
    """One table's (or one model's vectors') count and hash on both sides."""

    name: str
    rows: int
    copied: int
    source_hash: str
    copy_hash: str

    @property
    def ok(self) -> bool:
        """Counts and hashes equal."""
        return self.rows == self.copied and self.source_hash == self.copy_hash


@dataclass
class MigrationReport:
    """What `migrate` copied and how it checked."""

    source: str
    destination: str
    tables: list[TableCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every table and every model's vectors verified."""
        return all(t.ok for t in self.tables)


class _Side:
    """Raw row access on either store implementation (placeholders, batches)."""

    def __init__(self, store: DocumentStore) -> None:
        if not isinstance(store, SqliteStore | PgStore):
            raise UsageError(f"cannot migrate a {type(store).__name__}")
        self.store = store

    def rows(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        if isinstance(self.store, SqliteStore):
            with self.store.lock:
                lite = self.store.conn.execute(sql, params)
                while batch := lite.fetchmany(BATCH):
                    yield from (tuple(r) for r in batch)
            return
        with (
            self.store.db.pool.connection() as conn,
            conn.transaction(),
            conn.cursor(name="footnote_migrate") as cur,
        ):
            cur.execute(sql.replace("?", "%s"), list(params) or None)
            while rows := cur.fetchmany(BATCH):
                yield from (tuple(r.values()) for r in rows)

    def insert(self, table: str, cols: str, rows: list[tuple[Any, ...]]) -> None:
        n = len(cols.split(","))
        if isinstance(self.store, SqliteStore):
            with self.store.lock:
                self.store.conn.execute("BEGIN IMMEDIATE")
                try:
                    self.store.conn.executemany(
                        f"INSERT INTO {table} ({cols}) VALUES ({','.join('?' * n)})", rows
                    )
                    self.store.conn.execute("COMMIT")
                except BaseException:
                    self.store.conn.execute("ROLLBACK")
                    raise
            return
        with self.store.db.tx() as conn, conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {table} ({cols}) VALUES ({','.join(['%s'] * n)})", rows)

    def count(self, table: str) -> int:
        return int(next(self.rows(f"SELECT count(*) FROM {table}"))[0])


def _canonical(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, float):
        return repr(value)
    return value


def _table_hash(side: _Side, table: str, cols: str, order: str) -> tuple[int, str]:
    h, n = hashlib.sha256(), 0
    for row in side.rows(f"SELECT {cols} FROM {table} ORDER BY {order}"):
        h.update(json.dumps([_canonical(v) for v in row], ensure_ascii=False).encode())
        h.update(b"\n")
        n += 1
    return n, h.hexdigest()


_VECTORS = {
    "sqlite": "SELECT ib.block_id, v.model, v.content_hash, v.vector FROM block_vectors v "
    "JOIN index_blocks ib ON ib.key = v.key ORDER BY v.model, ib.block_id",
    "postgres": "SELECT ib.block_id, v.model, v.content_hash, v.embedding::real[] "
    "FROM block_vectors v JOIN index_blocks ib ON ib.key = v.key ORDER BY v.model, ib.block_id",
}


def _vectors(side: _Side) -> Iterator[tuple[str, str, str, np.ndarray[Any, Any]]]:
    """(block id, model, content hash, float32 vector) in (model, block id) order."""
    kind = "sqlite" if isinstance(side.store, SqliteStore) else "postgres"
    for block_id, model, chash, vec in side.rows(_VECTORS[kind]):
        arr = np.frombuffer(vec, np.float32) if kind == "sqlite" else np.asarray(vec, np.float32)
        yield block_id, model, chash, arr


def _vector_hashes(side: _Side) -> dict[str, tuple[int, str]]:
    out: dict[str, tuple[int, hashlib._Hash]] = {}
    for block_id, model, chash, vec in _vectors(side):
        n, h = out.get(model, (0, hashlib.sha256()))
        h.update(f"{block_id}\t{chash}\t".encode() + vec.astype("<f4").tobytes() + b"\n")
        out[model] = (n + 1, h)
    return {m: (n, h.hexdigest()) for m, (n, h) in out.items()}


def migrate(
    source_url: str, destination_url: str, *, settings: RetrievalSettings, index_dir: Path
) -> MigrationReport:
    """Copy the store at `source_url` into the empty store at `destination_url`, with its
    search index (lexical rows rebuilt by the destination's backend, vectors copied), and
    verify it. UsageError when the destination already holds sources."""
    from footnote.index.base import LexicalBackend, VectorBackend
    from footnote.index.lexical import SqliteLexical
    from footnote.index.postgres import PgLexical, PgVectors
    from footnote.index.vectors import SqliteVectors

    src_stores, dst_stores = open_stores(source_url), open_stores(destination_url)
    src, dst = _Side(src_stores.documents), _Side(dst_stores.documents)
    report = MigrationReport(source_url, destination_url)
    try:
        if dst.count("sources") or dst.count("users") or dst.count("runs"):
            raise UsageError(f"{destination_url} is not empty: migrate copies into a new store")
        for table, cols, _ in TABLES:
            batch: list[tuple[Any, ...]] = []
            for row in src.rows(f"SELECT {cols} FROM {table}"):
                batch.append(row)
                if len(batch) >= BATCH:
                    dst.insert(table, cols, batch)
                    batch = []
            if batch:
                dst.insert(table, cols, batch)
        # the index: lexical rows by the destination backend, vectors copied per model
        indexed = [r[0] for r in src.rows("SELECT block_id FROM index_blocks ORDER BY key")]
        by_model: dict[str, list[tuple[str, str, np.ndarray[Any, Any]]]] = {}
        for block_id, model, chash, vec in _vectors(src):
            by_model.setdefault(model, []).append((block_id, chash, vec))
        store = dst.store

        def backends(model: str, dim: int) -> tuple[LexicalBackend, VectorBackend]:
            if isinstance(store, PgStore):
                return PgLexical(store), PgVectors(store, model, dim, settings)
            assert isinstance(store, SqliteStore)
            lex = SqliteLexical(
                store, memory_threshold=settings.lexical_memory_threshold, index_dir=index_dir
            )
            return lex, SqliteVectors(store, model, dim, settings, index_dir)

        lexical, _ = backends("", 1)
        keys: dict[str, int] = {}
        for i in range(0, len(indexed), BATCH):
            blocks = dst_stores.documents.get_blocks(indexed[i : i + BATCH])
            got, _ = lexical.add([blocks[b] for b in indexed[i : i + BATCH] if b in blocks])
            keys.update(got)
        for model, items in by_model.items():
            _, vectors = backends(model, len(items[0][2]))
            for i in range(0, len(items), BATCH):
                chunk = [x for x in items[i : i + BATCH] if x[0] in keys]
                vectors.put(
                    [keys[b] for b, _, _ in chunk],
                    [h for _, h, _ in chunk],
                    np.stack([v for _, _, v in chunk]).astype(np.float32),
                )
            vectors.sync()
        lexical.sync()
        for table, cols, order in TABLES:
            n, h = _table_hash(src, table, cols, order)
            m, g = _table_hash(dst, table, cols, order)
            report.tables.append(TableCheck(table, n, m, h, g))
        report.tables.append(
            TableCheck("index_blocks", len(indexed), dst.count("index_blocks"), "", "")
        )
        theirs = _vector_hashes(dst)
        for model, (n, h) in _vector_hashes(src).items():
            m, g = theirs.get(model, (0, ""))
            report.tables.append(TableCheck(f"vectors[{model}]", n, m, h, g))
    finally:
        src_stores.documents.close()
        dst_stores.documents.close()
    return report
