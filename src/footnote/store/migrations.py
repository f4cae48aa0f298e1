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
    (
        "0002_search_index",
        """
        CREATE TABLE index_blocks (
            key INTEGER PRIMARY KEY,
            block_id TEXT NOT NULL UNIQUE REFERENCES blocks(id) ON DELETE CASCADE
        );
        CREATE VIRTUAL TABLE blocks_fts USING fts5(
            section, body, cjk, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER index_blocks_fts_ad AFTER DELETE ON index_blocks BEGIN
            DELETE FROM blocks_fts WHERE rowid = old.key;
        END;
        CREATE TABLE block_vectors (
            key INTEGER NOT NULL REFERENCES index_blocks(key) ON DELETE CASCADE,
            model TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, key)
        );
        CREATE INDEX block_vectors_key ON block_vectors(key);
        CREATE INDEX block_vectors_hash ON block_vectors(model, content_hash);
        CREATE TABLE index_generation (name TEXT PRIMARY KEY, gen INTEGER NOT NULL);
        INSERT INTO index_generation(name, gen) VALUES ('vectors', 0);
        CREATE TRIGGER block_vectors_ai AFTER INSERT ON block_vectors BEGIN
            UPDATE index_generation SET gen = gen + 1 WHERE name = 'vectors';
        END;
        CREATE TRIGGER block_vectors_ad AFTER DELETE ON block_vectors BEGIN
            UPDATE index_generation SET gen = gen + 1 WHERE name = 'vectors';
        END;
        """,
    ),
    (
        "0100_runs_traces",
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            user_id TEXT NOT NULL DEFAULT 'local',
            session_id TEXT,
            input TEXT NOT NULL,
            status TEXT NOT NULL,
            output TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            finished_at TEXT
        );
        CREATE INDEX runs_session ON runs(session_id, created_at);
        CREATE TABLE spans (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            data TEXT NOT NULL,
            started_at REAL NOT NULL,
            duration_s REAL NOT NULL,
            PRIMARY KEY (run_id, seq)
        );
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
