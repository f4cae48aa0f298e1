"""Research runs in SQLite: the run rows, every stage's artifact, evidence cards and snapshots."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

from footnote.serialize import from_plain, to_plain
from footnote.store.records import ResearchRecord
from footnote.store.sqlite.documents import SqliteStore
from footnote.types import EvidenceCard, Snapshot


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


class SqliteResearchStore:
    """`ResearchStore` on the workspace database."""

    def __init__(self, store: SqliteStore) -> None:
        self.conn = store.conn
        self.lock: threading.RLock = store.lock

    def create_research(
        self, run_id: str, user_id: str, question: str, options: dict[str, Any], state: str
    ) -> None:
        """Record a new research run."""
        with self.lock:
            self.conn.execute(
                "INSERT INTO research_runs (id, user_id, question, options, state) "
                "VALUES (?, ?, ?, ?, ?)",
                (run_id, user_id, question, _dumps(options), state),
            )

    def get_research(self, run_id: str) -> ResearchRecord | None:
        """A research run, or None."""
        with self.lock:
            row = self.conn.execute(
                "SELECT * FROM research_runs WHERE id = ?", (run_id,)
            ).fetchone()
        return _record(row) if row else None

    def list_research(self, user_id: str | None, limit: int = 50) -> list[ResearchRecord]:
        """The user's research runs (every user's with None: the operator), newest first."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT * FROM research_runs WHERE ? IS NULL OR user_id = ? "
                "ORDER BY created_at DESC, id DESC LIMIT ?",
                (user_id, user_id, limit),
            ).fetchall()
        return [_record(r) for r in rows]

    def set_research_state(
        self, run_id: str, state: str, options: dict[str, Any] | None = None
    ) -> None:
        """Move a run to `state` (and replace its options when given)."""
        now = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
        with self.lock:
            if options is None:
                self.conn.execute(
                    f"UPDATE research_runs SET state = ?, updated_at = {now} WHERE id = ?",
                    (state, run_id),
                )
            else:
                self.conn.execute(
                    f"UPDATE research_runs SET state = ?, options = ?, updated_at = {now} "
                    "WHERE id = ?",
                    (state, _dumps(options), run_id),
                )

    def put_artifact(self, run_id: str, stage: str, key: str, data: dict[str, Any]) -> None:
        """Store (or replace) one stage's artifact."""
        with self.lock:
            self.conn.execute(
                "INSERT INTO research_artifacts (run_id, stage, key, seq, data) VALUES (?, ?, ?, "
                "(SELECT coalesce(max(seq), 0) + 1 FROM research_artifacts WHERE run_id = ?), ?) "
                "ON CONFLICT(run_id, stage, key) DO UPDATE SET data = excluded.data, "
                "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
                (run_id, stage, key, run_id, _dumps(data)),
            )

    def get_artifact(self, run_id: str, stage: str, key: str = "") -> dict[str, Any] | None:
        """One artifact, or None."""
        with self.lock:
            row = self.conn.execute(
                "SELECT data FROM research_artifacts WHERE run_id = ? AND stage = ? AND key = ?",
                (run_id, stage, key),
            ).fetchone()
        return json.loads(row[0]) if row else None

    def artifacts(self, run_id: str, stage: str) -> list[tuple[str, dict[str, Any]]]:
        """A stage's artifacts as (key, data), in the order first written."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT key, data FROM research_artifacts WHERE run_id = ? AND stage = ? "
                "ORDER BY seq",
                (run_id, stage),
            ).fetchall()
        return [(r[0], json.loads(r[1])) for r in rows]

    def delete_artifacts(self, run_id: str, stages: Sequence[str]) -> None:
        """Forget these stages' artifacts."""
        marks = ",".join("?" * len(stages))
        with self.lock:
            self.conn.execute(
                f"DELETE FROM research_artifacts WHERE run_id = ? AND stage IN ({marks})",
                (run_id, *stages),
            )

    def put_cards(self, run_id: str, cards: Sequence[EvidenceCard]) -> None:
        """Store (or replace, by id) evidence cards of a run."""
        with self.lock:
            self.conn.execute("BEGIN")
            try:
                for card in cards:
                    self.conn.execute(
                        "INSERT INTO research_cards (id, run_id, seq, snapshot_id, block_id, data) "
                        "VALUES (?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM research_cards "
                        "WHERE run_id = ?), ?, ?, ?) ON CONFLICT(run_id, id) DO UPDATE SET "
                        "data = excluded.data",
                        (card.id, run_id, run_id, card.snapshot_id, card.block_id,
                         _dumps(to_plain(card))),
                    )  # fmt: skip
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def cards(self, run_id: str) -> list[EvidenceCard]:
        """A run's cards in the order first stored."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT data FROM research_cards WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        return [from_plain(EvidenceCard, json.loads(r[0])) for r in rows]

    def put_snapshot(self, snapshot: Snapshot, raw: bytes) -> None:
        """Store a snapshot and its raw bytes (idempotent; bytes kept once per sha256)."""
        with self.lock:
            self.conn.execute("BEGIN")
            try:
                self.conn.execute(
                    "INSERT OR IGNORE INTO snapshot_blobs (sha256, raw) VALUES (?, ?)",
                    (snapshot.sha256, raw),
                )
                self.conn.execute(
                    "INSERT OR IGNORE INTO snapshots (id, sha256, url, final_url, fetched_at, data) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (snapshot.id, snapshot.sha256, snapshot.url, snapshot.final_url,
                     snapshot.fetched_at, _dumps(to_plain(snapshot))),
                )  # fmt: skip
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def get_snapshot(self, snapshot_id: str) -> Snapshot | None:
        """A snapshot by id, or None."""
        with self.lock:
            row = self.conn.execute(
                "SELECT data FROM snapshots WHERE id = ?", (snapshot_id,)
            ).fetchone()
        return from_plain(Snapshot, json.loads(row[0])) if row else None

    def snapshot_raw(self, snapshot_id: str) -> bytes | None:
        """The raw bytes a snapshot was made from, or None."""
        with self.lock:
            row = self.conn.execute(
                "SELECT b.raw FROM snapshots s JOIN snapshot_blobs b ON b.sha256 = s.sha256 "
                "WHERE s.id = ?",
                (snapshot_id,),
            ).fetchone()
        return bytes(row[0]) if row else None


def _record(row: Any) -> ResearchRecord:
    return ResearchRecord(
        row["id"], row["user_id"], row["question"], json.loads(row["options"]), row["state"],
        row["created_at"], row["updated_at"],
    )  # fmt: skip
