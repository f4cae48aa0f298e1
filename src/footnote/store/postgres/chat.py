"""Chat sessions and messages in PostgreSQL, every read and write scoped to the owner."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from footnote.store.postgres.db import PgDatabase, Row
from footnote.store.records import ChatMessage, ChatSession, new_id


class PgChatStore:
    """`ChatStore` on the PostgreSQL database."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def create_session(self, user_id: str, title: str = "") -> ChatSession:
        """A new session with a server-generated id."""
        row = self.db.one(
            "INSERT INTO chat_sessions (user_id, id, title) VALUES (%s, %s, %s) RETURNING *",
            (user_id, new_id("ses"), title or "New conversation"),
        )
        assert row is not None
        return _session(row)

    def get_session(self, user_id: str, session_id: str) -> ChatSession | None:
        """The user's session, or None (also when it is somebody else's)."""
        row = self.db.one(
            "SELECT * FROM chat_sessions WHERE user_id = %s AND id = %s", (user_id, session_id)
        )
        return _session(row) if row else None

    def list_sessions(self, user_id: str, limit: int = 100, offset: int = 0) -> list[ChatSession]:
        """The user's sessions, most recently active first."""
        rows = self.db.all(
            "SELECT * FROM chat_sessions WHERE user_id = %s "
            "ORDER BY updated_at DESC, id LIMIT %s OFFSET %s",
            (user_id, limit, offset),
        )
        return [_session(r) for r in rows]

    def rename_session(self, user_id: str, session_id: str, title: str) -> bool:
        """Rename; False when the user has no such session."""
        n = self.db.run(
            "UPDATE chat_sessions SET title = %s, updated_at = fn_now() "
            "WHERE user_id = %s AND id = %s",
            (title, user_id, session_id),
        )
        return n > 0

    def delete_session(self, user_id: str, session_id: str) -> bool:
        """Delete a session with its messages, runs, events, traces and feedback."""
        with self.db.tx() as conn:
            n = conn.execute(
                "DELETE FROM chat_sessions WHERE user_id = %s AND id = %s", (user_id, session_id)
            ).rowcount
            if n:
                conn.execute(
                    "DELETE FROM runs WHERE user_id = %s AND session_id = %s",
                    (user_id, session_id),
                )
        return n > 0

    def set_summary(
        self, user_id: str, session_id: str, summary: str, upto: int, labels: tuple[str, ...]
    ) -> None:
        """Store the running summary of the messages up to `upto` (a seq) with its labels."""
        self.db.run(
            "UPDATE chat_sessions SET summary = %s, summary_upto = %s, summary_labels = %s "
            "WHERE user_id = %s AND id = %s",
            (summary, upto, json.dumps(list(labels)), user_id, session_id),
        )

    def add_message(
        self,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        status: str = "completed",
        run_id: str | None = None,
        data: dict[str, Any] | None = None,
        labels: Sequence[str] | None = None,
    ) -> ChatMessage:
        """Append a message to the session (which must be the user's); the session row's
        lock orders concurrent appends."""
        with self.db.tx() as conn:
            row = conn.execute(
                "UPDATE chat_sessions SET last_seq = last_seq + 1, updated_at = fn_now() "
                "WHERE user_id = %s AND id = %s RETURNING last_seq",
                (user_id, session_id),
            ).fetchone()
            if row is None:
                raise KeyError(session_id)
            msg = conn.execute(
                "INSERT INTO chat_messages (id, user_id, session_id, seq, role, content, status, "
                "run_id, data, labels) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING *",
                (new_id("msg"), user_id, session_id, row["last_seq"], role, content, status,
                 run_id, json.dumps(data or {}, ensure_ascii=False, default=str),
                 _labels(labels)),
            ).fetchone()  # fmt: skip
        assert msg is not None
        return _message(msg)

    def update_message(
        self,
        user_id: str,
        message_id: str,
        *,
        content: str,
        status: str,
        data: dict[str, Any],
        labels: Sequence[str] | None = None,
    ) -> ChatMessage | None:
        """Fill in a reply when its run ends, with the labels it was produced under."""
        row = self.db.one(
            "UPDATE chat_messages SET content = %s, status = %s, data = %s, labels = %s "
            "WHERE user_id = %s AND id = %s RETURNING *",
            (content, status, json.dumps(data, ensure_ascii=False, default=str),
             _labels(labels), user_id, message_id),
        )  # fmt: skip
        return _message(row) if row else None

    def get_message(self, user_id: str, message_id: str) -> ChatMessage | None:
        """The user's message, or None."""
        row = self.db.one(
            "SELECT * FROM chat_messages WHERE user_id = %s AND id = %s", (user_id, message_id)
        )
        return _message(row) if row else None

    def messages(
        self, user_id: str, session_id: str, *, after: int = 0, last: int | None = None
    ) -> list[ChatMessage]:
        """A session's messages in order (seq > `after`; only the `last` n when given)."""
        sql = "SELECT * FROM chat_messages WHERE user_id = %s AND session_id = %s AND seq > %s "
        if last is None:
            rows = self.db.all(sql + "ORDER BY seq", (user_id, session_id, after))
        else:
            rows = self.db.all(
                f"SELECT * FROM ({sql} ORDER BY seq DESC LIMIT %s) m ORDER BY seq",
                (user_id, session_id, after, last),
            )
        return [_message(r) for r in rows]

    def last_final_seq(self, user_id: str, session_id: str) -> int:
        """The seq of the session's last finished (not pending) message; 0 when none."""
        row = self.db.one(
            "SELECT max(seq) AS m FROM chat_messages WHERE user_id = %s AND session_id = %s "
            "AND status != 'pending'",
            (user_id, session_id),
        )
        return int(row["m"] or 0) if row else 0

    def fail_pending_messages(self) -> int:
        """Mark replies left pending by a previous server process as failed."""
        return self.db.run("UPDATE chat_messages SET status = 'failed' WHERE status = 'pending'")


def _session(row: Row) -> ChatSession:
    return ChatSession(
        row["id"], row["user_id"], row["title"], row["summary"], row["summary_upto"],
        row["last_seq"], row["created_at"], row["updated_at"],
        tuple(json.loads(row["summary_labels"])),
    )  # fmt: skip


def _message(row: Row) -> ChatMessage:
    return ChatMessage(
        row["id"], row["session_id"], row["seq"], row["role"], row["content"], row["status"],
        row["run_id"], json.loads(row["data"]), row["created_at"],
        None if row["labels"] is None else tuple(json.loads(row["labels"])),
    )  # fmt: skip


def _labels(labels: Sequence[str] | None) -> str | None:
    """A message's labels as stored: JSON, or NULL when unknown (which counts as restricted)."""
    return None if labels is None else json.dumps(list(labels))
