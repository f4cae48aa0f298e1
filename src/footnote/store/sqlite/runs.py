"""Runs and their trace spans in SQLite: every model call, retrieval, check and verdict of a run,
who owns a run, and which runs it started."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from footnote.store.records import Span
from footnote.store.sqlite.documents import SqliteStore


class SqliteRunStore:
    """`RunStore` on the workspace database."""

    def __init__(self, store: SqliteStore) -> None:
        self.conn = store.conn
        self.lock: threading.RLock = store.lock

    def start(
        self,
        run_id: str,
        kind: str,
        input: dict[str, Any],
        *,
        user_id: str = "local",
        session_id: str | None = None,
    ) -> None:
        """Record that a run started."""
        with self.lock:
            self.conn.execute(
                "INSERT INTO runs (id, kind, user_id, session_id, input, status) "
                "VALUES (?, ?, ?, ?, ?, 'running')",
                (run_id, kind, user_id, session_id, json.dumps(input, ensure_ascii=False)),
            )

    def add_span(self, span: Span) -> None:
        """Append a span."""
        with self.lock:
            self.conn.execute(
                "INSERT INTO spans (run_id, seq, kind, name, data, started_at, duration_s) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    span.run_id,
                    span.seq,
                    span.kind,
                    span.name,
                    json.dumps(span.data, ensure_ascii=False, default=str),
                    span.started_at,
                    span.duration_s,
                ),
            )

    def finish(self, run_id: str, status: str, output: dict[str, Any] | None) -> None:
        """Record a run's outcome."""
        with self.lock:
            self.conn.execute(
                "UPDATE runs SET status = ?, output = ?, "
                "finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                (status, json.dumps(output, ensure_ascii=False, default=str), run_id),
            )

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """A run's row as a dict, or None."""
        with self.lock:
            row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        out = dict(row)
        out["input"] = json.loads(out["input"])
        out["output"] = json.loads(out["output"]) if out["output"] else None
        return out

    def spans(self, run_id: str) -> list[Span]:
        """A run's spans in order."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT * FROM spans WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        return [
            Span(
                r["run_id"],
                r["seq"],
                r["kind"],
                r["name"],
                json.loads(r["data"]),
                r["started_at"],
                r["duration_s"],
            )
            for r in rows
        ]

    def run_owner(self, run_id: str) -> tuple[str, str | None] | None:
        """(user_id, session_id) of a run, or None."""
        with self.lock:
            row = self.conn.execute(
                "SELECT user_id, session_id FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
        return (row[0], row[1]) if row else None

    def link_runs(self, parent_id: str, child_id: str) -> None:
        """Record that `child_id` (e.g. an ask run) was started by `parent_id`."""
        with self.lock:
            self.conn.execute(
                "INSERT OR IGNORE INTO run_links (parent_id, child_id) VALUES (?, ?)",
                (parent_id, child_id),
            )

    def run_family(self, run_id: str) -> list[str]:
        """The run and every run it started, recursively, in start order."""
        with self.lock:
            rows = self.conn.execute(
                "WITH RECURSIVE fam(id) AS (SELECT ? UNION "
                "SELECT l.child_id FROM run_links l JOIN fam ON l.parent_id = fam.id) "
                "SELECT r.id FROM runs r JOIN fam ON r.id = fam.id ORDER BY r.created_at, r.id",
                (run_id,),
            ).fetchall()
        return [r[0] for r in rows]

    def session_runs(self, user_id: str, session_id: str) -> list[str]:
        """Ids of every run of a session, oldest first."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT id FROM runs WHERE user_id = ? AND session_id = ? ORDER BY created_at, id",
                (user_id, session_id),
            ).fetchall()
        return [r[0] for r in rows]

    def fail_orphaned_runs(
        self, kinds: tuple[str, ...], *, alive: Callable[[str], bool] | None = None
    ) -> list[str]:
        """Mark runs left `running` by a server process that is gone as failed; their ids.
        `alive(run_id)` spares runs another live process executes."""
        marks = ",".join("?" * len(kinds))
        with self.lock:
            ids = [
                r[0]
                for r in self.conn.execute(
                    f"SELECT id FROM runs WHERE status IN ('queued', 'running') "
                    f"AND kind IN ({marks})",
                    kinds,
                ).fetchall()
            ]
            gone = [i for i in ids if alive is None or not alive(i)]
            for run_id in gone:
                self.conn.execute(
                    "UPDATE runs SET status = 'failed', "
                    "finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                    (run_id,),
                )
        return gone
