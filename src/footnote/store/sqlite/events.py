"""A run's events in SQLite: what its SSE stream replays to a client that reconnects."""

from __future__ import annotations

import threading
import time

from footnote.store.records import StoredEvent
from footnote.store.sqlite.documents import SqliteStore, rollback


class SqliteEventStore:
    """`EventStore` on the workspace database."""

    def __init__(self, store: SqliteStore) -> None:
        self.conn = store.conn
        self.lock: threading.RLock = store.lock

    def add_events(self, run_id: str, events: list[StoredEvent]) -> None:
        """Persist events of a run in one transaction."""
        now = time.time()
        with self.lock:
            self.conn.execute("BEGIN")
            try:
                self.conn.executemany(
                    "INSERT INTO run_events (run_id, seq, type, data, at) VALUES (?, ?, ?, ?, ?)",
                    [(run_id, e.seq, e.type, e.data, now) for e in events],
                )
                self.conn.execute("COMMIT")
            except BaseException:
                rollback(self.conn)
                raise

    def events(self, run_id: str, after: int = 0) -> list[StoredEvent]:
        """A run's persisted events with seq > `after`, in order."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT seq, type, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq",
                (run_id, after),
            ).fetchall()
        return [StoredEvent(r[0], r[1], r[2]) for r in rows]
