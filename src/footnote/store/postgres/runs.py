"""Runs, their trace spans and the runs they started, in PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from footnote.store.postgres.db import PgDatabase
from footnote.store.records import Span


class PgRunStore:
    """`RunStore` on the PostgreSQL database."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

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
        self.db.run(
            "INSERT INTO runs (id, kind, user_id, session_id, input, status) "
            "VALUES (%s, %s, %s, %s, %s, 'running')",
            (run_id, kind, user_id, session_id, json.dumps(input, ensure_ascii=False)),
        )

    def add_span(self, span: Span) -> None:
        """Append a span."""
        self.db.run(
            "INSERT INTO spans (run_id, seq, kind, name, data, started_at, duration_s) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (span.run_id, span.seq, span.kind, span.name,
             json.dumps(span.data, ensure_ascii=False, default=str), span.started_at,
             span.duration_s),
        )  # fmt: skip

    def finish(self, run_id: str, status: str, output: dict[str, Any] | None) -> None:
        """Record a run's outcome."""
        self.db.run(
            "UPDATE runs SET status = %s, output = %s, finished_at = fn_now() WHERE id = %s",
            (status, json.dumps(output, ensure_ascii=False, default=str), run_id),
        )

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """A run's row as a dict, or None."""
        out = self.db.one("SELECT * FROM runs WHERE id = %s", (run_id,))
        if out is None:
            return None
        out["input"] = json.loads(out["input"])
        out["output"] = json.loads(out["output"]) if out["output"] else None
        return out

    def spans(self, run_id: str) -> list[Span]:
        """A run's spans in order."""
        rows = self.db.all("SELECT * FROM spans WHERE run_id = %s ORDER BY seq", (run_id,))
        return [
            Span(r["run_id"], r["seq"], r["kind"], r["name"], json.loads(r["data"]),
                 r["started_at"], r["duration_s"])
            for r in rows
        ]  # fmt: skip

    def run_owner(self, run_id: str) -> tuple[str, str | None] | None:
        """(user_id, session_id) of a run, or None."""
        row = self.db.one("SELECT user_id, session_id FROM runs WHERE id = %s", (run_id,))
        return (row["user_id"], row["session_id"]) if row else None

    def link_runs(self, parent_id: str, child_id: str) -> None:
        """Record that `child_id` was started by `parent_id`."""
        self.db.run(
            "INSERT INTO run_links (parent_id, child_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (parent_id, child_id),
        )

    def run_family(self, run_id: str) -> list[str]:
        """The run and every run it started, recursively, in start order."""
        rows = self.db.all(
            "WITH RECURSIVE fam(id) AS (SELECT %s::text UNION "
            "SELECT l.child_id FROM run_links l JOIN fam ON l.parent_id = fam.id) "
            "SELECT r.id FROM runs r JOIN fam ON r.id = fam.id ORDER BY r.created_at, r.id",
            (run_id,),
        )
        return [r["id"] for r in rows]

    def session_runs(self, user_id: str, session_id: str) -> list[str]:
        """Ids of every run of a session, oldest first."""
        rows = self.db.all(
            "SELECT id FROM runs WHERE user_id = %s AND session_id = %s ORDER BY created_at, id",
            (user_id, session_id),
        )
        return [r["id"] for r in rows]

    def fail_orphaned_runs(
        self, kinds: tuple[str, ...], *, alive: Callable[[str], bool] | None = None
    ) -> list[str]:
        """Mark runs left `running` by a server process that is gone as failed; their ids.
        `alive(run_id)` spares runs another replica executes (its lease is held)."""
        rows = self.db.all(
            "SELECT id FROM runs WHERE status IN ('queued', 'running') AND kind = ANY(%s)",
            (list(kinds),),
        )
        gone = [r["id"] for r in rows if alive is None or not alive(r["id"])]
        if gone:
            self.db.run(
                "UPDATE runs SET status = 'failed', finished_at = fn_now() "
                "WHERE id = ANY(%s) AND status IN ('queued', 'running')",
                (gone,),
            )
        return gone
