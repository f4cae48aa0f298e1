"""The analyst's review in SQLite: the hash-chained action log and the signed versions, both
append-only (the migration's triggers abort any UPDATE or DELETE)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from typing import Any

from footnote.errors import UsageError
from footnote.store.records import (
    GENESIS_HASH,
    ReviewAction,
    SignOff,
    action_hash,
    review_action_from_row,
    review_json,
    signoff_from_row,
)
from footnote.store.sqlite.documents import SqliteStore


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SqliteReviewStore:
    """`ReviewStore` on the workspace database."""

    def __init__(self, store: SqliteStore) -> None:
        self.conn = store.conn
        self.lock: threading.RLock = store.lock

    def _append(
        self, run_id: str, actor: str, action: str, target: str, data: dict[str, Any]
    ) -> ReviewAction:
        row = self.conn.execute(
            "SELECT seq, hash FROM review_actions WHERE run_id = ? ORDER BY seq DESC LIMIT 1",
            (run_id,),
        ).fetchone()
        seq, prev = (int(row[0]) + 1, str(row[1])) if row else (1, GENESIS_HASH)
        at = _now()
        data = json.loads(review_json(data))  # the hash covers exactly what is stored
        digest = action_hash(prev, run_id, seq, at, actor, action, target, data)
        self.conn.execute(
            "INSERT INTO review_actions (run_id, seq, at, actor, action, target, data, prev_hash, "
            "hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, seq, at, actor, action, target, review_json(data), prev, digest),
        )
        return ReviewAction(run_id, seq, at, actor, action, target, data, prev, digest)

    def append_action(
        self, run_id: str, actor: str, action: str, target: str, data: dict[str, Any]
    ) -> ReviewAction:
        """Append one action to the run's log, chained to the one before; returns it."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                out = self._append(run_id, actor, action, target, data)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        return out

    def actions(self, run_id: str) -> list[ReviewAction]:
        """The run's log in order."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT * FROM review_actions WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        return [review_action_from_row(r) for r in rows]

    def add_signoff(
        self, run_id: str, reviewer: str, version_hash: str, coverage: dict[str, Any],
        brief: dict[str, Any], *, after_seq: int | None = None,
    ) -> SignOff:  # fmt: skip
        """Record a sign-off (logged as a `sign_off` action); the next version number. With
        `after_seq`, refused when the log has grown since (the signed state would be stale)."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                head = self.conn.execute(
                    "SELECT coalesce(max(seq), 0) FROM review_actions WHERE run_id = ?", (run_id,)
                ).fetchone()[0]
                if after_seq is not None and int(head) != after_seq:
                    raise UsageError("the review changed while signing: look again, then sign")
                row = self.conn.execute(
                    "SELECT coalesce(max(version), 0) FROM review_signoffs WHERE run_id = ?",
                    (run_id,),
                ).fetchone()
                version = int(row[0]) + 1
                logged = self._append(run_id, reviewer, "sign_off", f"v{version}",
                                      {"version": version, "version_hash": version_hash,
                                       "coverage": coverage})  # fmt: skip
                self.conn.execute(
                    "INSERT INTO review_signoffs (run_id, version, version_hash, reviewer, "
                    "signed_at, coverage, brief, action_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (run_id, version, version_hash, reviewer, logged.at, review_json(coverage),
                     review_json(brief), logged.seq),
                )  # fmt: skip
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        return SignOff(run_id, version, version_hash, reviewer, logged.at, coverage, brief,
                       logged.seq)  # fmt: skip

    def signoffs(self, run_id: str) -> list[SignOff]:
        """The run's signed versions, oldest first."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT * FROM review_signoffs WHERE run_id = ? ORDER BY version", (run_id,)
            ).fetchall()
        return [signoff_from_row(r) for r in rows]
