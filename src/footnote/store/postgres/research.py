"""Research runs in PostgreSQL: the run rows, every stage's artifact, evidence cards and
page snapshots (raw bytes kept once per sha256)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from footnote.serialize import from_plain, to_plain
from footnote.store.postgres.db import PgDatabase, Row
from footnote.store.records import ResearchRecord
from footnote.types import EvidenceCard, Snapshot


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


class PgResearchStore:
    """`ResearchStore` on the PostgreSQL database."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def create_research(
        self, run_id: str, user_id: str, question: str, options: dict[str, Any], state: str
    ) -> None:
        """Record a new research run."""
        self.db.run(
            "INSERT INTO research_runs (id, user_id, question, options, state) "
            "VALUES (%s, %s, %s, %s, %s)",
            (run_id, user_id, question, _dumps(options), state),
        )

    def get_research(self, run_id: str) -> ResearchRecord | None:
        """A research run, or None."""
        row = self.db.one("SELECT * FROM research_runs WHERE id = %s", (run_id,))
        return _record(row) if row else None

    def list_research(self, user_id: str | None, limit: int = 50) -> list[ResearchRecord]:
        """The user's research runs (every user's with None: the operator), newest first."""
        rows = self.db.all(
            "SELECT * FROM research_runs WHERE %s::text IS NULL OR user_id = %s "
            "ORDER BY created_at DESC, id DESC LIMIT %s",
            (user_id, user_id, limit),
        )
        return [_record(r) for r in rows]

    def set_research_state(
        self, run_id: str, state: str, options: dict[str, Any] | None = None
    ) -> None:
        """Move a run to `state` (and replace its options when given)."""
        if options is None:
            self.db.run(
                "UPDATE research_runs SET state = %s, updated_at = fn_now() WHERE id = %s",
                (state, run_id),
            )
        else:
            self.db.run(
                "UPDATE research_runs SET state = %s, options = %s, updated_at = fn_now() "
                "WHERE id = %s",
                (state, _dumps(options), run_id),
            )

    def put_artifact(self, run_id: str, stage: str, key: str, data: dict[str, Any]) -> None:
        """Store (or replace) one stage's artifact; the run row's lock orders the seq."""
        with self.db.tx() as conn:
            conn.execute("SELECT 1 FROM research_runs WHERE id = %s FOR UPDATE", (run_id,))
            conn.execute(
                "INSERT INTO research_artifacts (run_id, stage, key, seq, data) VALUES "
                "(%s, %s, %s, (SELECT coalesce(max(seq), 0) + 1 FROM research_artifacts "
                "WHERE run_id = %s), %s) ON CONFLICT (run_id, stage, key) DO UPDATE SET "
                "data = excluded.data, updated_at = fn_now()",
                (run_id, stage, key, run_id, _dumps(data)),
            )

    def get_artifact(self, run_id: str, stage: str, key: str = "") -> dict[str, Any] | None:
        """One artifact, or None."""
        row = self.db.one(
            "SELECT data FROM research_artifacts WHERE run_id = %s AND stage = %s AND key = %s",
            (run_id, stage, key),
        )
        return dict(json.loads(row["data"])) if row else None

    def artifacts(self, run_id: str, stage: str) -> list[tuple[str, dict[str, Any]]]:
        """A stage's artifacts as (key, data), in the order first written."""
        rows = self.db.all(
            "SELECT key, data FROM research_artifacts WHERE run_id = %s AND stage = %s "
            "ORDER BY seq",
            (run_id, stage),
        )
        return [(r["key"], json.loads(r["data"])) for r in rows]

    def delete_artifacts(self, run_id: str, stages: Sequence[str]) -> None:
        """Forget these stages' artifacts."""
        self.db.run(
            "DELETE FROM research_artifacts WHERE run_id = %s AND stage = ANY(%s)",
            (run_id, list(stages)),
        )

    def put_cards(self, run_id: str, cards: Sequence[EvidenceCard]) -> None:
        """Store (or replace, by id) evidence cards of a run, in one transaction."""
        with self.db.tx() as conn:
            conn.execute("SELECT 1 FROM research_runs WHERE id = %s FOR UPDATE", (run_id,))
            for card in cards:
                conn.execute(
                    "INSERT INTO research_cards (id, run_id, seq, snapshot_id, block_id, data) "
                    "VALUES (%s, %s, (SELECT coalesce(max(seq), 0) + 1 FROM research_cards "
                    "WHERE run_id = %s), %s, %s, %s) ON CONFLICT (run_id, id) DO UPDATE SET "
                    "data = excluded.data",
                    (card.id, run_id, run_id, card.snapshot_id, card.block_id,
                     _dumps(to_plain(card))),
                )  # fmt: skip

    def cards(self, run_id: str) -> list[EvidenceCard]:
        """A run's cards in the order first stored."""
        rows = self.db.all(
            "SELECT data FROM research_cards WHERE run_id = %s ORDER BY seq", (run_id,)
        )
        return [from_plain(EvidenceCard, json.loads(r["data"])) for r in rows]

    def put_snapshot(self, snapshot: Snapshot, raw: bytes) -> None:
        """Store a snapshot and its raw bytes (idempotent)."""
        with self.db.tx() as conn:
            conn.execute(
                "INSERT INTO snapshot_blobs (sha256, raw) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (snapshot.sha256, raw),
            )
            conn.execute(
                "INSERT INTO snapshots (id, sha256, url, final_url, fetched_at, data) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (snapshot.id, snapshot.sha256, snapshot.url, snapshot.final_url,
                 snapshot.fetched_at, _dumps(to_plain(snapshot))),
            )  # fmt: skip

    def get_snapshot(self, snapshot_id: str) -> Snapshot | None:
        """A snapshot by id, or None."""
        row = self.db.one("SELECT data FROM snapshots WHERE id = %s", (snapshot_id,))
        return from_plain(Snapshot, json.loads(row["data"])) if row else None

    def snapshot_raw(self, snapshot_id: str) -> bytes | None:
        """The raw bytes a snapshot was made from, or None."""
        row = self.db.one(
            "SELECT b.raw FROM snapshots s JOIN snapshot_blobs b ON b.sha256 = s.sha256 "
            "WHERE s.id = %s",
            (snapshot_id,),
        )
        return bytes(row["raw"]) if row else None


def _record(row: Row) -> ResearchRecord:
    return ResearchRecord(
        row["id"], row["user_id"], row["question"], json.loads(row["options"]), row["state"],
        row["created_at"], row["updated_at"],
    )  # fmt: skip
