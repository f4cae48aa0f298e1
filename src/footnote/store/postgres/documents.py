"""Sources and blocks in PostgreSQL, atomically written (the `DocumentStore` protocol)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace

import psycopg

from footnote.errors import StoreError
from footnote.serialize import section_from_dict, section_to_dict
from footnote.store.postgres.db import PgDatabase
from footnote.store.records import SourceRecord
from footnote.store.rows import (
    BLOCK_COLUMNS,
    SOURCE_COLUMNS,
    block_from_row,
    block_row,
    context_lists,
    record_from_row,
    source_meta,
)
from footnote.types import Block, Document

_INSERT_COLUMNS = SOURCE_COLUMNS.replace(", created_at", "")
_COUNT = "(SELECT count(*) FROM blocks b WHERE b.source_id = s.id) AS n"
_S_COLUMNS = ", ".join("s." + c.strip() for c in SOURCE_COLUMNS.split(","))


class PgStore:
    """`DocumentStore` on a pooled PostgreSQL database (`db`, shared by the other nouns)."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db
        self.url = db.url

    def save_document(self, document: Document) -> bool:
        """Store a document and its blocks in one transaction; False if already stored.
        Concurrent writers of the same (uri, owner) take turns on a transaction lock."""
        src = document.source
        try:
            with self.db.tx() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (src.uri + src.owner,))
                if conn.execute("SELECT 1 FROM sources WHERE id = %s", (src.id,)).fetchone():
                    return False
                prev = conn.execute(
                    "SELECT version FROM sources WHERE uri = %s AND owner = %s "
                    "ORDER BY version DESC LIMIT 1",
                    (src.uri, src.owner),
                ).fetchone()
                src = replace(src, version=int(prev["version"]) + 1 if prev else 1)
                conn.execute(
                    f"INSERT INTO sources ({_INSERT_COLUMNS}) VALUES ({', '.join(['%s'] * 19)})",
                    (
                        src.id, src.kind, src.title, src.uri, src.sha256, src.pages, src.lang,
                        src.version, src.fetched_at, src.published_at, src.source_type,
                        json.dumps(list(src.labels)), json.dumps(list(src.acl_groups)),
                        json.dumps(list(src.warnings), ensure_ascii=False),
                        json.dumps(
                            [section_to_dict(s) for s in document.sections], ensure_ascii=False
                        ),
                        None, json.dumps(source_meta(src), ensure_ascii=False), src.parser,
                        src.owner,
                    ),
                )  # fmt: skip
                with conn.cursor() as cur:
                    cur.executemany(
                        f"INSERT INTO blocks ({BLOCK_COLUMNS}) VALUES ({', '.join(['%s'] * 10)})",
                        [block_row(b) for b in document.blocks],
                    )
                if prev:
                    conn.execute(
                        "UPDATE sources SET superseded_by = %s WHERE uri = %s AND owner = %s "
                        "AND id != %s AND superseded_by IS NULL",
                        (src.id, src.uri, src.owner, src.id),
                    )
        except psycopg.Error as exc:
            raise StoreError(f"could not store {src.uri}: {exc}") from exc
        return True

    def delete_source(self, source_id: str) -> bool:
        """Delete a source and its blocks; the versions it superseded pass to its successor."""
        with self.db.tx() as conn:
            row = conn.execute(
                "SELECT superseded_by FROM sources WHERE id = %s FOR UPDATE", (source_id,)
            ).fetchone()
            if row is None:
                return False
            conn.execute(
                "UPDATE sources SET superseded_by = %s WHERE superseded_by = %s",
                (row["superseded_by"], source_id),
            )
            return conn.execute("DELETE FROM sources WHERE id = %s", (source_id,)).rowcount > 0

    def get_source(self, source_id: str) -> SourceRecord | None:
        """A source by id, or None."""
        row = self.db.one(
            f"SELECT {_S_COLUMNS}, {_COUNT} FROM sources s WHERE s.id = %s", (source_id,)
        )
        return record_from_row(row, int(row["n"])) if row else None

    def find_source_by_uri(self, uri: str, *, owner: str = "") -> SourceRecord | None:
        """The newest version `owner` ingested from `uri`, or None."""
        row = self.db.one(
            f"SELECT {_S_COLUMNS}, {_COUNT} FROM sources s WHERE s.uri = %s AND s.owner = %s "
            "ORDER BY s.version DESC LIMIT 1",
            (uri, owner),
        )
        return record_from_row(row, int(row["n"])) if row else None

    def list_sources(self, *, include_superseded: bool = False) -> list[SourceRecord]:
        """Sources, newest first."""
        where = "" if include_superseded else "WHERE s.superseded_by IS NULL"
        rows = self.db.all(
            f"SELECT {_S_COLUMNS}, {_COUNT} FROM sources s {where} ORDER BY s.created_at DESC, s.id"
        )
        return [record_from_row(r, int(r["n"])) for r in rows]

    def get_block(self, block_id: str) -> Block | None:
        """One block by id, or None."""
        return self.get_blocks([block_id]).get(block_id)

    def get_blocks(self, block_ids: Sequence[str]) -> dict[str, Block]:
        """Blocks by id."""
        ids = list(dict.fromkeys(block_ids))
        if not ids:
            return {}
        rows = self.db.all(f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE id = ANY(%s)", (ids,))
        return {r["id"]: block_from_row(r) for r in rows}

    def iter_blocks(self, source_id: str) -> Iterator[Block]:
        """A source's blocks in reading order."""
        rows = self.db.all(
            f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE source_id = %s ORDER BY ord", (source_id,)
        )
        for row in rows:
            yield block_from_row(row)

    def neighbours(self, block_id: str, radius: int = 1) -> list[Block]:
        """Blocks within `radius` positions of `block_id` in its source (itself included)."""
        rows = self.db.all(
            f"SELECT {', '.join('n.' + c.strip() for c in BLOCK_COLUMNS.split(','))} "
            "FROM blocks b JOIN blocks n ON n.source_id = b.source_id "
            "AND n.ord BETWEEN b.ord - %s AND b.ord + %s WHERE b.id = %s ORDER BY n.ord",
            (radius, radius, block_id),
        )
        return [block_from_row(r) for r in rows]

    def get_document(self, source_id: str) -> Document | None:
        """A stored document with its section tree."""
        record = self.get_source(source_id)
        row = self.db.one("SELECT sections FROM sources WHERE id = %s", (source_id,))
        if record is None or row is None:
            return None
        return Document(
            source=record.source,
            blocks=tuple(self.iter_blocks(source_id)),
            sections=tuple(section_from_dict(s) for s in json.loads(row["sections"])),
        )

    def context_ids(self, blocks: Sequence[Block], radius: int) -> dict[str, list[str]]:
        """For each block: its neighbours within `radius` and its section's heading (two
        queries over arrays of the blocks' positions)."""
        if not blocks:
            return {}
        sids = [b.source_id for b in blocks]
        ords = [b.order for b in blocks]
        near = self.db.all(
            "SELECT DISTINCT b.id, b.source_id, b.ord FROM unnest(%s::text[], %s::int[]) "
            "AS h(sid, ord) JOIN blocks b ON b.source_id = h.sid "
            "AND b.ord BETWEEN h.ord - %s AND h.ord + %s",
            (sids, ords, radius, radius),
        )
        heads = self.db.all(
            "SELECT h.id, (SELECT b.id FROM blocks b WHERE b.source_id = h.sid AND b.ord < h.ord "
            "AND b.kind = 'heading' ORDER BY b.ord DESC LIMIT 1) AS head "
            "FROM unnest(%s::text[], %s::text[], %s::int[]) AS h(id, sid, ord)",
            ([b.id for b in blocks], sids, ords),
        )
        rows = [(r["id"], r["source_id"], r["ord"]) for r in near]
        return context_lists(blocks, radius, rows, {r["id"]: r["head"] for r in heads})

    def close(self) -> None:
        """Close the pool."""
        self.db.close()
