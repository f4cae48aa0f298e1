"""Ordered schema migrations. Append new ones; never edit an applied one.

Each migration is `(name, sql)`; applied names are recorded in `_migrations`.
"""

from __future__ import annotations

import sqlite3

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_sources_blocks",
        """
        CREATE TABLE sources (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            uri TEXT NOT NULL,
            sha256 TEXT NOT NULL UNIQUE,
            pages INTEGER NOT NULL,
            lang TEXT NOT NULL,
            version INTEGER NOT NULL,
            fetched_at TEXT,
            published_at TEXT,
            source_type TEXT NOT NULL,
            labels TEXT NOT NULL,
            acl_groups TEXT NOT NULL,
            warnings TEXT NOT NULL,
            sections TEXT NOT NULL,
            superseded_by TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE INDEX sources_uri ON sources(uri);
        CREATE TABLE blocks (
            id TEXT PRIMARY KEY,
            source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            page INTEGER NOT NULL,
            bbox TEXT,
            section_path TEXT NOT NULL,
            ord INTEGER NOT NULL,
            lang TEXT NOT NULL,
            data TEXT NOT NULL
        );
        CREATE INDEX blocks_source_ord ON blocks(source_id, ord);
        """,
    ),
]


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    """Apply pending migrations in order, each in its own transaction; return their names."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL "
        "DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied: list[str] = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        try:
            conn.executescript(
                f"BEGIN;\n{sql};\nINSERT INTO _migrations(name) VALUES ('{name}');\nCOMMIT;"
            )
        except sqlite3.Error:
            if conn.in_transaction:
                conn.rollback()
            raise
        applied.append(name)
    return applied
