"""Feedback (👍/👎 with a comment) on runs, in SQLite."""

from __future__ import annotations

import threading
from typing import Any

from footnote.store.records import new_id
from footnote.store.sqlite.documents import SqliteStore


class SqliteFeedbackStore:
    """`FeedbackStore` on the workspace database."""

    def __init__(self, store: SqliteStore) -> None:
        self.conn = store.conn
        self.lock: threading.RLock = store.lock

    def add_feedback(
        self, user_id: str, run_id: str, message_id: str | None, rating: int, comment: str
    ) -> str:
        """Store a 👍 (1) or 👎 (-1) with the run it is about."""
        fid = new_id("fb")
        with self.lock:
            self.conn.execute(
                "INSERT INTO feedback (id, user_id, run_id, message_id, rating, comment) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (fid, user_id, run_id, message_id, rating, comment),
            )
        return fid

    def feedback(self, run_ids: list[str]) -> list[dict[str, Any]]:
        """Feedback on these runs, oldest first."""
        if not run_ids:
            return []
        marks = ",".join("?" * len(run_ids))
        with self.lock:
            rows = self.conn.execute(
                f"SELECT id, user_id, run_id, message_id, rating, comment, created_at "
                f"FROM feedback WHERE run_id IN ({marks}) ORDER BY created_at, id",
                run_ids,
            ).fetchall()
        return [dict(r) for r in rows]
