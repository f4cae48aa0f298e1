"""Runs and their trace spans: every model call, retrieval, check and verdict of a run."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from footnote.store.sqlite import SqliteStore


@dataclass(frozen=True)
class Span:
    """One traced step of a run."""

    run_id: str
    seq: int
    kind: str
    name: str
    data: dict[str, Any]
    started_at: float
    duration_s: float


class RunStore:
    """Runs and spans in the workspace's SQLite database."""

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
