"""The analyst's review in PostgreSQL: the hash-chained action log and the signed versions,
both append-only (the migration's triggers raise on any UPDATE or DELETE). Appends to one
run's log are ordered by a transaction-scoped advisory lock on the run id."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from footnote.errors import UsageError
from footnote.store.postgres.db import Conn, PgDatabase, Row
from footnote.store.records import (
    GENESIS_HASH,
    ReviewAction,
    SignOff,
    action_hash,
    review_action_from_row,
    review_json,
    signoff_from_row,
)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _lock_run(conn: Conn, run_id: str) -> None:
    conn.execute("SELECT pg_advisory_xact_lock(hashtext('review:' || %s))", (run_id,))


def _append(
    conn: Conn, run_id: str, actor: str, action: str, target: str, data: dict[str, Any]
) -> ReviewAction:
    row = conn.execute(
        "SELECT seq, hash FROM review_actions WHERE run_id = %s ORDER BY seq DESC LIMIT 1",
        (run_id,),
    ).fetchone()
    seq, prev = (int(row["seq"]) + 1, str(row["hash"])) if row else (1, GENESIS_HASH)
    at = _now()
    data = json.loads(review_json(data))  # the hash covers exactly what is stored
    digest = action_hash(prev, run_id, seq, at, actor, action, target, data)
    conn.execute(
        "INSERT INTO review_actions (run_id, seq, at, actor, action, target, data, prev_hash, "
        "hash) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (run_id, seq, at, actor, action, target, review_json(data), prev, digest),
    )
    return ReviewAction(run_id, seq, at, actor, action, target, data, prev, digest)


class PgReviewStore:
    """`ReviewStore` on the PostgreSQL database."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def append_action(
        self, run_id: str, actor: str, action: str, target: str, data: dict[str, Any]
    ) -> ReviewAction:
        """Append one action to the run's log, chained to the one before; returns it."""
        with self.db.tx() as conn:
            _lock_run(conn, run_id)
            return _append(conn, run_id, actor, action, target, data)

    def actions(self, run_id: str) -> list[ReviewAction]:
        """The run's log in order."""
        rows = self.db.all("SELECT * FROM review_actions WHERE run_id = %s ORDER BY seq", (run_id,))
        return [review_action_from_row(r) for r in rows]

    def add_signoff(
        self, run_id: str, reviewer: str, version_hash: str, coverage: dict[str, Any],
        brief: dict[str, Any], *, after_seq: int | None = None,
    ) -> SignOff:  # fmt: skip
        """Record a sign-off (logged as a `sign_off` action); the next version number. With
        `after_seq`, refused when the log has grown since (the signed state would be stale)."""
        with self.db.tx() as conn:
            _lock_run(conn, run_id)
            head = conn.execute(
                "SELECT coalesce(max(seq), 0) AS n FROM review_actions WHERE run_id = %s",
                (run_id,),
            ).fetchone()
            if after_seq is not None and int(head["n"] if head else 0) != after_seq:
                raise UsageError("the review changed while signing: look again, then sign")
            row = conn.execute(
                "SELECT coalesce(max(version), 0) AS n FROM review_signoffs WHERE run_id = %s",
                (run_id,),
            ).fetchone()
            version = int(row["n"] if row else 0) + 1
            logged = _append(conn, run_id, reviewer, "sign_off", f"v{version}",
                             {"version": version, "version_hash": version_hash,
                              "coverage": coverage})  # fmt: skip
            conn.execute(
                "INSERT INTO review_signoffs (run_id, version, version_hash, reviewer, "
                "signed_at, coverage, brief, action_seq) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (run_id, version, version_hash, reviewer, logged.at, review_json(coverage),
                 review_json(brief), logged.seq),
            )  # fmt: skip
        return SignOff(run_id, version, version_hash, reviewer, logged.at, coverage, brief,
                       logged.seq)  # fmt: skip

    def signoffs(self, run_id: str) -> list[SignOff]:
        """The run's signed versions, oldest first."""
        rows: list[Row] = self.db.all(
            "SELECT * FROM review_signoffs WHERE run_id = %s ORDER BY version", (run_id,)
        )
        return [signoff_from_row(r) for r in rows]
