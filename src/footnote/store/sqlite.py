"""The embedded SQLite store (WAL): sources and blocks, atomically written."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from footnote.errors import ConfigError, StoreError
from footnote.store.base import SourceRecord
from footnote.store.codec import block_to_dict, section_from_dict, section_to_dict
from footnote.store.migrations import apply_migrations
from footnote.types import BBox, Block, BlockKind, Document, Source, SourceKind, SourceType, Table

_BLOCK_COLS = "id, source_id, kind, text, page, bbox, section_path, ord, lang, data"
_SOURCE_COLS = (
    "id, kind, title, uri, sha256, pages, lang, version, fetched_at, published_at, "
    "source_type, labels, acl_groups, warnings, sections, superseded_by, created_at"
)


def connect(path: Path) -> sqlite3.Connection:
    """Open a SQLite database with the pragmas footnote relies on, migrated to the latest schema."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=10000")
    apply_migrations(conn)
    return conn


def _row_to_block(row: sqlite3.Row) -> Block:
    data: dict[str, Any] = json.loads(row["data"])
    table = data.get("table")
    bbox = json.loads(row["bbox"]) if row["bbox"] else None
    return Block(
        id=row["id"],
        source_id=row["source_id"],
        kind=cast(BlockKind, row["kind"]),
        text=row["text"],
        page=row["page"],
        bbox=cast(BBox, tuple(bbox)) if bbox else None,
        section_path=tuple(json.loads(row["section_path"])),
        order=row["ord"],
        lang=row["lang"],
        table=Table(
            header=tuple(tuple(r) for r in table["header"]),
            rows=tuple(tuple(r) for r in table["rows"]),
            caption=table.get("caption", ""),
        )
        if table
        else None,
        formula_number=data.get("formula_number"),
        links=tuple(data.get("links", ())),
    )


def _row_to_record(row: sqlite3.Row, blocks: int) -> SourceRecord:
    source = Source(
        id=row["id"],
        kind=cast(SourceKind, row["kind"]),
        title=row["title"],
        uri=row["uri"],
        sha256=row["sha256"],
        pages=row["pages"],
        lang=row["lang"],
        version=row["version"],
        fetched_at=row["fetched_at"],
        published_at=row["published_at"],
        source_type=cast(SourceType, row["source_type"]),
        labels=tuple(json.loads(row["labels"])),
        acl_groups=tuple(json.loads(row["acl_groups"])),
        warnings=tuple(json.loads(row["warnings"])),
    )
    return SourceRecord(
        source=source,
        blocks=blocks,
        created_at=row["created_at"],
        superseded_by=row["superseded_by"],
    )


class SqliteStore:
    """`DocumentStore` on one SQLite file. Thread-safe for the server's worker threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = connect(path)
        self.lock = threading.RLock()

    # -- writing -------------------------------------------------------------------------
    def save_document(self, document: Document) -> bool:
        """Store a document and its blocks in one transaction; False if already stored."""
        src = document.source
        with self.lock:
            if self.conn.execute(
                "SELECT 1 FROM sources WHERE sha256 = ?", (src.sha256,)
            ).fetchone():
                return False
            previous = self.find_source_by_uri(src.uri)
            version = previous.source.version + 1 if previous else 1
            src = replace(src, version=version)
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                self.conn.execute(
                    f"INSERT INTO sources ({_SOURCE_COLS.replace(', created_at', '')}) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
                    ),
                )
                self.conn.executemany(
                    f"INSERT INTO blocks ({_BLOCK_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    [self._block_row(b) for b in document.blocks],
                )
                if previous:
                    self.conn.execute(
                        "UPDATE sources SET superseded_by = ? WHERE uri = ? AND id != ? "
                        "AND superseded_by IS NULL",
                        (src.id, src.uri, src.id),
                    )
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self.conn.execute("ROLLBACK")
                raise StoreError(f"could not store {src.uri}: {exc}") from exc
        return True

    @staticmethod
    def _block_row(b: Block) -> tuple[Any, ...]:
        extra = block_to_dict(b)
        data = {k: extra[k] for k in ("table", "formula_number", "links") if k in extra}
        return (
            b.id,
            b.source_id,
            b.kind,
            b.text,
            b.page,
            json.dumps(list(b.bbox)) if b.bbox else None,
            json.dumps(list(b.section_path), ensure_ascii=False),
            b.order,
            b.lang,
            json.dumps(data, ensure_ascii=False),
        )

    def delete_source(self, source_id: str) -> bool:
        """Delete a source and its blocks (and, by cascade, everything indexed from them)."""
        with self.lock:
            cur = self.conn.execute("DELETE FROM sources WHERE id = ?", (source_id,))
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
            return _row_to_record(row, self._count_blocks(source_id)) if row else None

    def find_source_by_uri(self, uri: str) -> SourceRecord | None:
        """The newest version ingested from `uri`, or None."""
        with self.lock:
            row = self.conn.execute(
                f"SELECT {_SOURCE_COLS} FROM sources WHERE uri = ? ORDER BY version DESC LIMIT 1",
                (uri,),
            ).fetchone()
            return _row_to_record(row, self._count_blocks(row["id"])) if row else None

    def list_sources(self, *, include_superseded: bool = False) -> list[SourceRecord]:
        """Sources, newest first."""
        where = "" if include_superseded else "WHERE s.superseded_by IS NULL"
        with self.lock:
            rows = self.conn.execute(
                f"SELECT {', '.join('s.' + c.strip() for c in _SOURCE_COLS.split(','))}, "
                f"(SELECT count(*) FROM blocks b WHERE b.source_id = s.id) AS n "
                f"FROM sources s {where} ORDER BY s.created_at DESC, s.id"
            ).fetchall()
        return [_row_to_record(r, r["n"]) for r in rows]

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
                    out[row["id"]] = _row_to_block(row)
        return out

    def iter_blocks(self, source_id: str) -> Iterator[Block]:
        """A source's blocks in reading order."""
        with self.lock:
            rows = self.conn.execute(
                f"SELECT {_BLOCK_COLS} FROM blocks WHERE source_id = ? ORDER BY ord", (source_id,)
            ).fetchall()
        for row in rows:
            yield _row_to_block(row)

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
        return [_row_to_block(r) for r in rows]

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

    def close(self) -> None:
        """Close the connection."""
        with self.lock:
            self.conn.close()


def open_store(url: str) -> SqliteStore:
    """Open the store named by a URL (`sqlite:///path`)."""
    if url.startswith("sqlite:///"):
        return SqliteStore(Path(url[len("sqlite:///") :]))
    raise ConfigError(f"unsupported store URL {url!r}: the embedded store is sqlite:///PATH")
