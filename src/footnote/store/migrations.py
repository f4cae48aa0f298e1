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
    (
        "0200_sessions_messages_events",
        """
        CREATE TABLE users (
            id TEXT PRIMARY KEY,
            groups TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE TABLE api_keys (
            key_hash TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            label TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE TABLE chat_sessions (
            user_id TEXT NOT NULL,
            id TEXT NOT NULL,
            title TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '',
            summary_upto INTEGER NOT NULL DEFAULT 0,
            last_seq INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            PRIMARY KEY (user_id, id)
        );
        CREATE TABLE chat_messages (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            status TEXT NOT NULL,
            run_id TEXT,
            data TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            UNIQUE (user_id, session_id, seq),
            FOREIGN KEY (user_id, session_id) REFERENCES chat_sessions(user_id, id)
                ON DELETE CASCADE
        );
        CREATE INDEX chat_messages_run ON chat_messages(run_id);
        CREATE TABLE run_events (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            data TEXT NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (run_id, seq)
        );
        CREATE TABLE run_links (
            parent_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            child_id TEXT NOT NULL,
            PRIMARY KEY (parent_id, child_id)
        );
        CREATE TABLE feedback (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            message_id TEXT,
            rating INTEGER NOT NULL,
            comment TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE INDEX feedback_run ON feedback(run_id);
        """,
    ),
    (
        "0003_fts_scope",
        # Filters inside the FTS query: a `scope` column of tokens (kind, source, ACL,
        # labels, section-path prefixes, superseded) that the lexical MATCH can AND/NOT, and
        # the page as an UNINDEXED column. Token spelling (hex of the UTF-8 value, a final
        # "0" so the porter stemmer leaves it alone) is mirrored in footnote.index.scope.
        # Existing rows are rebuilt from their old FTS text plus blocks/sources; a trigger
        # keeps the tokens current when a source's ACL, labels or superseded_by change.
        """
        CREATE VIEW index_scope AS
        SELECT ib.key AS key, b.page AS page,
            'k' || lower(hex(b.kind)) || '0 s' || lower(hex(s.id)) || '0'
            || CASE WHEN s.superseded_by IS NULL THEN '' ELSE ' old0' END
            || CASE WHEN s.acl_groups = '[]' THEN ' pub0' ELSE ' rst0' || coalesce(
                (SELECT group_concat(' g' || lower(hex(value)) || '0', '')
                 FROM json_each(s.acl_groups)), '') END
            || coalesce((SELECT group_concat(' l' || lower(hex(value)) || '0', '')
                 FROM json_each(s.labels)), '')
            || coalesce((SELECT group_concat(' p' || (
                    SELECT group_concat(lower(hex(lower(j2.value))), 'x')
                    FROM json_each(b.section_path) j2 WHERE j2.key <= j1.key
                ) || '0', '') FROM json_each(b.section_path) j1), '') AS scope
        FROM index_blocks ib JOIN blocks b ON b.id = ib.block_id
        JOIN sources s ON s.id = b.source_id;
        DROP TRIGGER index_blocks_fts_ad;
        CREATE TEMP TABLE _fts_0003 AS SELECT rowid AS key, section, body, cjk FROM blocks_fts;
        DROP TABLE blocks_fts;
        CREATE VIRTUAL TABLE blocks_fts USING fts5(
            section, body, cjk, scope, page UNINDEXED,
            tokenize = 'porter unicode61 remove_diacritics 2'
        );
        INSERT INTO blocks_fts(rowid, section, body, cjk, scope, page)
            SELECT c.key, c.section, c.body, c.cjk, v.scope, v.page
            FROM temp._fts_0003 c JOIN index_scope v ON v.key = c.key;
        DROP TABLE temp._fts_0003;
        CREATE TRIGGER index_blocks_fts_ad AFTER DELETE ON index_blocks BEGIN
            DELETE FROM blocks_fts WHERE rowid = old.key;
        END;
        CREATE TRIGGER sources_scope_au
        AFTER UPDATE OF superseded_by, labels, acl_groups ON sources BEGIN
            UPDATE blocks_fts SET scope = (
                SELECT v.scope FROM index_scope v WHERE v.key = blocks_fts.rowid
            ) WHERE rowid IN (
                SELECT ib.key FROM blocks b JOIN index_blocks ib ON ib.block_id = b.id
                WHERE b.source_id = new.id
            );
        END;
        """,
    ),
    (
        "0004_lexical_generations",
        # Change counters for the in-memory lexical index (footnote.index.bm25): rows added
        # or removed, scope tokens rewritten (a source's ACL, labels or superseded flag), and
        # a full FTS rewrite (bumped by SqliteLexical.rebuild).
        """
        INSERT INTO index_generation(name, gen) VALUES
            ('lexical_rows', 0), ('lexical_scope', 0), ('lexical_text', 0);
        CREATE TRIGGER index_blocks_gen_ai AFTER INSERT ON index_blocks BEGIN
            UPDATE index_generation SET gen = gen + 1 WHERE name = 'lexical_rows';
        END;
        CREATE TRIGGER index_blocks_gen_ad AFTER DELETE ON index_blocks BEGIN
            UPDATE index_generation SET gen = gen + 1 WHERE name = 'lexical_rows';
        END;
        CREATE TRIGGER sources_scope_gen_au
        AFTER UPDATE OF superseded_by, labels, acl_groups ON sources BEGIN
            UPDATE index_generation SET gen = gen + 1 WHERE name = 'lexical_scope';
        END;
        """,
    ),
    (
        "0005_scope_changes",
        # Which sources had their scope tokens rewritten, so the in-memory lexical index
        # re-reads only their rows; the newest 10,000 entries are kept (an index further
        # behind re-reads every row).
        """
        CREATE TABLE index_scope_changes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            source_id TEXT NOT NULL
        );
        CREATE TRIGGER sources_scope_log_au
        AFTER UPDATE OF superseded_by, labels, acl_groups ON sources BEGIN
            INSERT INTO index_scope_changes(source_id) VALUES (new.id);
            DELETE FROM index_scope_changes
            WHERE seq <= (SELECT max(seq) FROM index_scope_changes) - 10000;
        END;
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
