"""Run events and feedback in PostgreSQL."""

from __future__ import annotations

import time
from typing import Any

from footnote.store.postgres.db import PgDatabase
from footnote.store.records import StoredEvent, new_id


class PgEventStore:
    """`EventStore` on the PostgreSQL database: what any replica replays to a reconnecting
    client (`Last-Event-ID`)."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def add_events(self, run_id: str, events: list[StoredEvent]) -> None:
        """Persist events of a run in one transaction (an event already stored is kept)."""
        now = time.time()
        with self.db.tx() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO run_events (run_id, seq, type, data, at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (run_id, seq) DO NOTHING",
                [(run_id, e.seq, e.type, e.data, now) for e in events],
            )

    def events(self, run_id: str, after: int = 0) -> list[StoredEvent]:
        """A run's persisted events with seq > `after`, in order."""
        rows = self.db.all(
            "SELECT seq, type, data FROM run_events WHERE run_id = %s AND seq > %s ORDER BY seq",
            (run_id, after),
        )
        return [StoredEvent(r["seq"], r["type"], r["data"]) for r in rows]


class PgFeedbackStore:
    """`FeedbackStore` on the PostgreSQL database."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def add_feedback(
        self, user_id: str, run_id: str, message_id: str | None, rating: int, comment: str
    ) -> str:
        """Store a 👍 (1) or 👎 (-1) with the run it is about."""
        fid = new_id("fb")
        self.db.run(
            "INSERT INTO feedback (id, user_id, run_id, message_id, rating, comment) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (fid, user_id, run_id, message_id, rating, comment),
        )
        return fid

    def feedback(self, run_ids: list[str]) -> list[dict[str, Any]]:
        """Feedback on these runs, oldest first."""
        if not run_ids:
            return []
        return self.db.all(
            "SELECT id, user_id, run_id, message_id, rating, comment, created_at "
            "FROM feedback WHERE run_id = ANY(%s) ORDER BY created_at, id",
            (list(run_ids),),
        )
