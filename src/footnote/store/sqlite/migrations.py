"""Ordered schema migrations. Append new ones; never edit an applied one.

Each migration is `(name, sql)`; applied names are recorded in `_migrations`. A migration
whose SQL starts with `-- foreign_keys: off` rebuilds a table and runs with foreign keys off
(checked before it commits). Processes opening one database at the same time take turns:
an exclusive lock on `<db>.migrate.lock` is held while pending migrations are found and applied.
"""

from __future__ import annotations

import contextlib
import fcntl
import sqlite3
from collections.abc import Iterator
from pathlib import Path

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
        "0003_runs_traces",
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
        "0004_sessions_messages_events",
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
        "0005_fts_scope",
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
        "0006_lexical_generations",
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
        "0007_scope_changes",
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
    (
        "0008_source_metadata",
        # Bibliographic metadata (authors, DOI, arXiv id) as JSON, and what read the file
        # beyond its text layer (`Source.parser`, e.g. the OCR engine).
        """
        ALTER TABLE sources ADD COLUMN meta TEXT NOT NULL DEFAULT '{}';
        ALTER TABLE sources ADD COLUMN parser TEXT NOT NULL DEFAULT '';
        """,
    ),
]


_SCOPE_VIEW = """
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
"""
_SOURCE_TRIGGERS = """
        CREATE TRIGGER sources_scope_au
        AFTER UPDATE OF superseded_by, labels, acl_groups ON sources BEGIN
            UPDATE blocks_fts SET scope = (
                SELECT v.scope FROM index_scope v WHERE v.key = blocks_fts.rowid
            ) WHERE rowid IN (
                SELECT ib.key FROM blocks b JOIN index_blocks ib ON ib.block_id = b.id
                WHERE b.source_id = new.id
            );
        END;
        CREATE TRIGGER sources_scope_gen_au
        AFTER UPDATE OF superseded_by, labels, acl_groups ON sources BEGIN
            UPDATE index_generation SET gen = gen + 1 WHERE name = 'lexical_scope';
        END;
        CREATE TRIGGER sources_scope_log_au
        AFTER UPDATE OF superseded_by, labels, acl_groups ON sources BEGIN
            INSERT INTO index_scope_changes(source_id) VALUES (new.id);
            DELETE FROM index_scope_changes
            WHERE seq <= (SELECT max(seq) FROM index_scope_changes) - 10000;
        END;
"""

MIGRATIONS += [
    (
        "0009_source_owners",
        # Sources get an owner (the uploading user; '' for the operator) and the same bytes
        # may be stored as several records (one per owner and visibility): sha256 is no longer
        # unique. SQLite cannot drop a constraint, so the table is rebuilt (with the view and
        # triggers that name it).
        "-- foreign_keys: off\n"
        """
        DROP VIEW index_scope;
        CREATE TABLE sources_new (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            uri TEXT NOT NULL,
            sha256 TEXT NOT NULL,
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
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            meta TEXT NOT NULL DEFAULT '{}',
            parser TEXT NOT NULL DEFAULT '',
            owner TEXT NOT NULL DEFAULT ''
        );
        INSERT INTO sources_new (id, kind, title, uri, sha256, pages, lang, version, fetched_at,
            published_at, source_type, labels, acl_groups, warnings, sections, superseded_by,
            created_at, meta, parser)
        SELECT id, kind, title, uri, sha256, pages, lang, version, fetched_at, published_at,
            source_type, labels, acl_groups, warnings, sections, superseded_by, created_at, meta,
            parser
        FROM sources;
        DROP TABLE sources;
        ALTER TABLE sources_new RENAME TO sources;
        CREATE INDEX sources_uri ON sources(uri, owner);
        CREATE INDEX sources_sha ON sources(sha256);
        """ + _SCOPE_VIEW + _SOURCE_TRIGGERS,
    ),
    (
        "0010_admins_summary_labels",
        # Admin users (delete any source, read everything) and the labels a session's running
        # summary carries (the sources its folded turns cited), which travel into prompts.
        """
        ALTER TABLE users ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE chat_sessions ADD COLUMN summary_labels TEXT NOT NULL DEFAULT '[]';
        """,
    ),
    (
        "0011_research",
        # Research briefs (design §5 `research`): one row per research run, every stage's
        # artifact (outline, plan, sub-question results, merge decisions, conflicts, drafts,
        # checks, checklist, brief) keyed by (run, stage, key) so a run resumes and can be
        # inspected; evidence cards by id; snapshots of fetched pages with their raw bytes
        # content-addressed (one blob per sha256, however many URLs served it).
        """
        CREATE TABLE research_runs (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            question TEXT NOT NULL,
            options TEXT NOT NULL,
            state TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE INDEX research_runs_user ON research_runs(user_id, created_at);
        CREATE TABLE research_artifacts (
            run_id TEXT NOT NULL REFERENCES research_runs(id) ON DELETE CASCADE,
            stage TEXT NOT NULL,
            key TEXT NOT NULL,
            seq INTEGER NOT NULL,
            data TEXT NOT NULL,
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            PRIMARY KEY (run_id, stage, key)
        );
        CREATE TABLE research_cards (
            id TEXT NOT NULL,
            run_id TEXT NOT NULL REFERENCES research_runs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            snapshot_id TEXT,
            block_id TEXT,
            data TEXT NOT NULL,
            PRIMARY KEY (run_id, id)
        );
        CREATE TABLE snapshot_blobs (
            sha256 TEXT PRIMARY KEY,
            raw BLOB NOT NULL
        );
        CREATE TABLE snapshots (
            id TEXT PRIMARY KEY,
            sha256 TEXT NOT NULL REFERENCES snapshot_blobs(sha256),
            url TEXT NOT NULL,
            final_url TEXT NOT NULL,
            fetched_at TEXT NOT NULL,
            data TEXT NOT NULL
        );
        CREATE INDEX snapshots_sha ON snapshots(sha256);
        """,
    ),
]


MIGRATIONS += [
    (
        "0012_review",
        # Analyst review of research briefs: an append-only, hash-chained action log per run
        # (seen / approve / edit / reject / tick / resolve / sign-off / export; each row's hash
        # covers the previous row's hash) and the signed versions, each with the exact version
        # hash, the reviewed brief as signed and the review coverage. Neither table can be
        # updated or deleted from: triggers abort such statements.
        """
        CREATE TABLE review_actions (
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            data TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        );
        CREATE TABLE review_signoffs (
            run_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            version_hash TEXT NOT NULL,
            reviewer TEXT NOT NULL,
            signed_at TEXT NOT NULL,
            coverage TEXT NOT NULL,
            brief TEXT NOT NULL,
            action_seq INTEGER NOT NULL,
            PRIMARY KEY (run_id, version)
        );
        CREATE TRIGGER review_actions_no_update BEFORE UPDATE ON review_actions
        BEGIN SELECT RAISE(ABORT, 'the review log is append-only'); END;
        CREATE TRIGGER review_actions_no_delete BEFORE DELETE ON review_actions
        BEGIN SELECT RAISE(ABORT, 'the review log is append-only'); END;
        CREATE TRIGGER review_signoffs_no_update BEFORE UPDATE ON review_signoffs
        BEGIN SELECT RAISE(ABORT, 'a signed version is immutable'); END;
        CREATE TRIGGER review_signoffs_no_delete BEFORE DELETE ON review_signoffs
        BEGIN SELECT RAISE(ABORT, 'a signed version is immutable'); END
        """,
    ),
]

MIGRATIONS += [
    (
        "0013_key_last_used",
        # When each API key was last used (`footnote keys ls`), updated at most once a minute.
        "ALTER TABLE api_keys ADD COLUMN last_used_at TEXT",
    ),
]

MIGRATIONS += [
    (
        "0014_message_labels",
        # The labels each chat message was produced under (JSON), kept with it so chat memory
        # never recomputes them from live sources; NULL (client context, older rows): unknown,
        # which counts as restricted.
        "ALTER TABLE chat_messages ADD COLUMN labels TEXT",
    ),
]

RENAMED = {
    "0100_runs_traces": "0003_runs_traces",
    "0200_sessions_messages_events": "0004_sessions_messages_events",
    "0003_fts_scope": "0005_fts_scope",
    "0004_lexical_generations": "0006_lexical_generations",
    "0005_scope_changes": "0007_scope_changes",
    "0008_research": "0011_research",  # the research branch's earlier numbers
    "0009_research": "0011_research",
}
"""Earlier names of migrations (numbered out of order), recorded as applied in older workspaces."""


@contextlib.contextmanager
def _migration_lock(conn: sqlite3.Connection) -> Iterator[None]:
    """An exclusive lock beside the database file while migrations are checked and applied."""
    row = conn.execute("PRAGMA database_list").fetchone()
    path = row[2] if row else ""
    if not path:  # in-memory database: one connection, nothing to race
        yield
        return
    with Path(f"{path}.migrate.lock").open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def apply_migrations(conn: sqlite3.Connection, journal_mode: str | None = None) -> list[str]:
    """Apply pending migrations in order, each in its own transaction; return their names.

    `journal_mode` is set first, under the same lock: switching a new file to WAL upgrades a
    read lock to a write lock, and SQLite fails that at once ("database is locked") instead of
    waiting when another process opening the file holds a read lock."""
    with _migration_lock(conn):
        if journal_mode:
            conn.execute(f"PRAGMA journal_mode={journal_mode}")
        return _apply(conn)


def _apply(conn: sqlite3.Connection) -> list[str]:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL "
        "DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    if done & set(RENAMED):  # a workspace migrated under earlier names: rename in place
        with conn:
            for old, new in RENAMED.items():
                conn.execute("UPDATE _migrations SET name = ? WHERE name = ?", (new, old))
        done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied: list[str] = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        fk_off = sql.startswith("-- foreign_keys: off")
        if fk_off:
            conn.execute("PRAGMA foreign_keys=OFF")
        try:
            conn.executescript(f"BEGIN;\n{sql};")
            if fk_off and conn.execute("PRAGMA foreign_key_check").fetchall():
                raise sqlite3.IntegrityError(f"migration {name} breaks a foreign key")
            conn.execute("INSERT INTO _migrations(name) VALUES (?)", (name,))
            conn.execute("COMMIT")
        except sqlite3.Error:
            if conn.in_transaction:
                conn.rollback()
            raise
        finally:
            if fk_off:
                conn.execute("PRAGMA foreign_keys=ON")
        applied.append(name)
    return applied
