"""The embedded SQLite store (WAL): sources and blocks, atomically written."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from footnote.errors import StoreError
from footnote.serialize import section_from_dict, section_to_dict
from footnote.store.records import SourceRecord
from footnote.store.rows import (
    BLOCK_COLUMNS as _BLOCK_COLS,
)
from footnote.store.rows import (
    SOURCE_COLUMNS as _SOURCE_COLS,
)
from footnote.store.rows import (
    block_from_row,
    block_row,
    context_lists,
    record_from_row,
    source_meta,
)
from footnote.store.sqlite.migrations import apply_migrations
from footnote.types import Block, Document


def connect(path: Path) -> sqlite3.Connection:
    """Open a SQLite database with the pragmas footnote relies on, migrated to the latest schema."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA synchronous=NORMAL")
    apply_migrations(conn, journal_mode="WAL")
    return conn


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already done so itself (it does on
    SQLITE_FULL and some I/O errors): a second ROLLBACK would raise and mask the first error."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


class SqliteStore:
    """`DocumentStore` on one SQLite file. Thread-safe for the server's worker threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = connect(path)
        self.lock = threading.RLock()

    # -- writing -------------------------------------------------------------------------
    def save_document(self, document: Document) -> bool:
        """Store a document and its blocks in one transaction; False if already stored.

        "Already stored" means the same source id (the same bytes for the same owner and
        visibility, see `access.scoped_source_id`). It becomes the newest version of its
        (uri, owner); any exception rolls the whole write back and releases the lock."""
        src = document.source
        with self.lock:
            if self.conn.execute("SELECT 1 FROM sources WHERE id = ?", (src.id,)).fetchone():
                return False
            previous = self.find_source_by_uri(src.uri, owner=src.owner)
            version = previous.source.version + 1 if previous else 1
            src = replace(src, version=version)
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.execute(
                    f"INSERT INTO sources ({_SOURCE_COLS.replace(', created_at', '')}) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        src.id,
                        src.kind,
                        src.title,
                        src.uri,
                        src.sha256,
                        src.pages,
                        src.lang,
                        src.version,
                        src.fetched_at,
                        src.published_at,
                        src.source_type,
                        json.dumps(list(src.labels)),
                        json.dumps(list(src.acl_groups)),
                        json.dumps(list(src.warnings), ensure_ascii=False),
                        json.dumps(
                            [section_to_dict(s) for s in document.sections], ensure_ascii=False
                        ),
                        None,
                        json.dumps(source_meta(src), ensure_ascii=False),
                        src.parser,
                        src.owner,
                    ),
                )
                self.conn.executemany(
                    f"INSERT INTO blocks ({_BLOCK_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    [block_row(b) for b in document.blocks],
                )
                if previous:
                    self.conn.execute(
                        "UPDATE sources SET superseded_by = ? WHERE uri = ? AND owner = ? "
                        "AND id != ? AND superseded_by IS NULL",
                        (src.id, src.uri, src.owner, src.id),
                    )
                self.conn.execute("COMMIT")
            except BaseException as exc:
                rollback(self.conn)
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"could not store {src.uri}: {exc}") from exc
                raise
        return True

    def delete_source(self, source_id: str) -> bool:
        """Delete a source and its blocks (and, by cascade, everything indexed from them).

        The versions it superseded are handed on to its own successor (or become current
        again when it was the newest), so deleting a version never hides an older one."""
        with self.lock:
            row = self.conn.execute(
                "SELECT superseded_by FROM sources WHERE id = ?", (source_id,)
            ).fetchone()
            if row is None:
                return False
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.execute(
                    "UPDATE sources SET superseded_by = ? WHERE superseded_by = ?",
                    (row["superseded_by"], source_id),
                )
                cur = self.conn.execute("DELETE FROM sources WHERE id = ?", (source_id,))
                self.conn.execute("COMMIT")
            except BaseException:
                rollback(self.conn)
                raise
            return cur.rowcount > 0

    # -- reading -------------------------------------------------------------------------
    def _count_blocks(self, source_id: str) -> int:
        row = self.conn.execute("SELECT count(*) FROM blocks WHERE source_id = ?", (source_id,))
        return int(row.fetchone()[0])

    def get_source(self, source_id: str) -> SourceRecord | None:
        """A source by id, or None."""
        with self.lock:
            row = self.conn.execute(
                f"SELECT {_SOURCE_COLS} FROM sources WHERE id = ?", (source_id,)
            ).fetchone()
            return record_from_row(row, self._count_blocks(source_id)) if row else None

    def find_source_by_uri(self, uri: str, *, owner: str = "") -> SourceRecord | None:
        """The newest version `owner` ingested from `uri`, or None."""
        with self.lock:
            row = self.conn.execute(
                f"SELECT {_SOURCE_COLS} FROM sources WHERE uri = ? AND owner = ? "
                "ORDER BY version DESC LIMIT 1",
                (uri, owner),
            ).fetchone()
            return record_from_row(row, self._count_blocks(row["id"])) if row else None

    def list_sources(self, *, include_superseded: bool = False) -> list[SourceRecord]:
        """Sources, newest first."""
        where = "" if include_superseded else "WHERE s.superseded_by IS NULL"
        with self.lock:
            rows = self.conn.execute(
                f"SELECT {', '.join('s.' + c.strip() for c in _SOURCE_COLS.split(','))}, "
                f"(SELECT count(*) FROM blocks b WHERE b.source_id = s.id) AS n "
                f"FROM sources s {where} ORDER BY s.created_at DESC, s.id"
            ).fetchall()
        return [record_from_row(r, r["n"]) for r in rows]

    def get_block(self, block_id: str) -> Block | None:
        """One block by id, or None."""
        return self.get_blocks([block_id]).get(block_id)

    def get_blocks(self, block_ids: Sequence[str]) -> dict[str, Block]:
        """Blocks by id."""
        out: dict[str, Block] = {}
        ids = list(dict.fromkeys(block_ids))
        with self.lock:
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for row in self.conn.execute(
                    f"SELECT {_BLOCK_COLS} FROM blocks WHERE id IN ({marks})", chunk
                ):
                    out[row["id"]] = block_from_row(row)
        return out

    def iter_blocks(self, source_id: str) -> Iterator[Block]:
        """A source's blocks in reading order."""
        with self.lock:
            rows = self.conn.execute(
                f"SELECT {_BLOCK_COLS} FROM blocks WHERE source_id = ? ORDER BY ord", (source_id,)
            ).fetchall()
        for row in rows:
            yield block_from_row(row)

    def neighbours(self, block_id: str, radius: int = 1) -> list[Block]:
        """Blocks within `radius` positions of `block_id` in its source (itself included)."""
        with self.lock:
            row = self.conn.execute(
                "SELECT source_id, ord FROM blocks WHERE id = ?", (block_id,)
            ).fetchone()
            if row is None:
                return []
            rows = self.conn.execute(
                f"SELECT {_BLOCK_COLS} FROM blocks WHERE source_id = ? AND ord BETWEEN ? AND ? "
                "ORDER BY ord",
                (row["source_id"], row["ord"] - radius, row["ord"] + radius),
            ).fetchall()
        return [block_from_row(r) for r in rows]

    def get_document(self, source_id: str) -> Document | None:
        """A stored document with its section tree."""
        record = self.get_source(source_id)
        if record is None:
            return None
        with self.lock:
            row = self.conn.execute("SELECT sections FROM sources WHERE id = ?", (source_id,))
            sections = json.loads(row.fetchone()[0])
        return Document(
            source=record.source,
            blocks=tuple(self.iter_blocks(source_id)),
            sections=tuple(section_from_dict(s) for s in sections),
        )

    def context_ids(self, blocks: Sequence[Block], radius: int) -> dict[str, list[str]]:
        """For each block: its neighbours within `radius` and its section's heading (two queries)."""
        if not blocks:
            return {}
        conds = " OR ".join(["(source_id = ? AND ord BETWEEN ? AND ?)"] * len(blocks))
        heads = " UNION ALL ".join(
            [
                "SELECT ?, (SELECT id FROM blocks WHERE source_id = ? AND ord < ? "
                "AND kind = 'heading' ORDER BY ord DESC LIMIT 1)"
            ]
            * len(blocks)
        )
        near_params: list[object] = []
        head_params: list[object] = []
        for b in blocks:
            near_params += [b.source_id, b.order - radius, b.order + radius]
            head_params += [b.id, b.source_id, b.order]
        with self.lock:
            near = self.conn.execute(
                f"SELECT id, source_id, ord FROM blocks WHERE {conds}", near_params
            ).fetchall()
            head_of = dict(self.conn.execute(heads, head_params).fetchall())
        return context_lists(blocks, radius, [tuple(r) for r in near], head_of)

    def close(self) -> None:
        """Close the connection."""
        with self.lock:
            self.conn.close()
