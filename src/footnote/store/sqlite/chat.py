"""Chat sessions and their messages in SQLite. Every read and write takes the owner's
`user_id`: a row that belongs to somebody else is indistinguishable from one that does not exist.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

from footnote.store.records import ChatMessage, ChatSession, new_id
from footnote.store.sqlite.documents import SqliteStore, rollback


class SqliteChatStore:
    """`ChatStore` on the workspace database."""

    def __init__(self, store: SqliteStore) -> None:
        self.conn = store.conn
        self.lock: threading.RLock = store.lock

    def create_session(self, user_id: str, title: str = "") -> ChatSession:
        """A new session with a server-generated id."""
        sid = new_id("ses")
        with self.lock:
            self.conn.execute(
                "INSERT INTO chat_sessions (user_id, id, title) VALUES (?, ?, ?)",
                (user_id, sid, title or "New conversation"),
            )
        session = self.get_session(user_id, sid)
        assert session is not None
        return session

    def get_session(self, user_id: str, session_id: str) -> ChatSession | None:
        """The user's session, or None (also when it is somebody else's)."""
        with self.lock:
            row = self.conn.execute(
                "SELECT * FROM chat_sessions WHERE user_id = ? AND id = ?", (user_id, session_id)
            ).fetchone()
        return _session(row) if row else None

    def list_sessions(self, user_id: str, limit: int = 100, offset: int = 0) -> list[ChatSession]:
        """The user's sessions, most recently active first."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT * FROM chat_sessions WHERE user_id = ? "
                "ORDER BY updated_at DESC, id LIMIT ? OFFSET ?",
                (user_id, limit, offset),
            ).fetchall()
        return [_session(r) for r in rows]

    def rename_session(self, user_id: str, session_id: str, title: str) -> bool:
        """Rename; False when the user has no such session."""
        with self.lock:
            cur = self.conn.execute(
                "UPDATE chat_sessions SET title = ?, "
                "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE user_id = ? AND id = ?",
                (title, user_id, session_id),
            )
        return cur.rowcount > 0

    def delete_session(self, user_id: str, session_id: str) -> bool:
        """Delete a session with its messages, runs, events, traces and feedback."""
        with self.lock:
            cur = self.conn.execute(
                "DELETE FROM chat_sessions WHERE user_id = ? AND id = ?", (user_id, session_id)
            )
            if cur.rowcount:
                self.conn.execute(
                    "DELETE FROM runs WHERE user_id = ? AND session_id = ?", (user_id, session_id)
                )
        return cur.rowcount > 0

    def set_summary(
        self, user_id: str, session_id: str, summary: str, upto: int, labels: tuple[str, ...]
    ) -> None:
        """Store the running summary of the messages up to `upto` (a seq) with its labels."""
        with self.lock:
            self.conn.execute(
                "UPDATE chat_sessions SET summary = ?, summary_upto = ?, summary_labels = ? "
                "WHERE user_id = ? AND id = ?",
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
        """Append a message to the session (which must be the user's)."""
        mid = new_id("msg")
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                cur = self.conn.execute(
                    "UPDATE chat_sessions SET last_seq = last_seq + 1, "
                    "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                    "WHERE user_id = ? AND id = ? RETURNING last_seq",
                    (user_id, session_id),
                )
                row = cur.fetchone()
                if row is None:
                    raise KeyError(session_id)
                self.conn.execute(
                    "INSERT INTO chat_messages (id, user_id, session_id, seq, role, content, "
                    "status, run_id, data, labels) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (mid, user_id, session_id, row[0], role, content, status, run_id,
                     json.dumps(data or {}, ensure_ascii=False, default=str), _labels(labels)),
                )  # fmt: skip
                self.conn.execute("COMMIT")
            except BaseException:
                rollback(self.conn)
                raise
        msg = self.get_message(user_id, mid)
        assert msg is not None
        return msg

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
        with self.lock:
            self.conn.execute(
                "UPDATE chat_messages SET content = ?, status = ?, data = ?, labels = ? "
                "WHERE user_id = ? AND id = ?",
                (content, status, json.dumps(data, ensure_ascii=False, default=str),
                 _labels(labels), user_id, message_id),
            )  # fmt: skip
        return self.get_message(user_id, message_id)

    def get_message(self, user_id: str, message_id: str) -> ChatMessage | None:
        """The user's message, or None."""
        with self.lock:
            row = self.conn.execute(
                "SELECT * FROM chat_messages WHERE user_id = ? AND id = ?", (user_id, message_id)
            ).fetchone()
        return _message(row) if row else None

    def messages(
        self, user_id: str, session_id: str, *, after: int = 0, last: int | None = None
    ) -> list[ChatMessage]:
        """A session's messages in order (seq > `after`; only the `last` n when given)."""
        sql = "SELECT * FROM chat_messages WHERE user_id = ? AND session_id = ? AND seq > ? "
        with self.lock:
            if last is None:
                rows = self.conn.execute(sql + "ORDER BY seq", (user_id, session_id, after))
            else:
                rows = self.conn.execute(
                    f"SELECT * FROM ({sql} ORDER BY seq DESC LIMIT ?) ORDER BY seq",
                    (user_id, session_id, after, last),
                )
            return [_message(r) for r in rows.fetchall()]

    def last_final_seq(self, user_id: str, session_id: str) -> int:
        """The seq of the session's last finished (not pending) message; 0 when none."""
        with self.lock:
            row = self.conn.execute(
                "SELECT max(seq) FROM chat_messages WHERE user_id = ? AND session_id = ? "
                "AND status != 'pending'",
                (user_id, session_id),
            ).fetchone()
        return int(row[0] or 0)

    def fail_pending_messages(self) -> int:
        """Mark replies left pending by a previous server process as failed."""
        with self.lock:
            cur = self.conn.execute(
                "UPDATE chat_messages SET status = 'failed' WHERE status = 'pending'"
            )
        return cur.rowcount


def _session(row: Any) -> ChatSession:
    return ChatSession(
        row["id"], row["user_id"], row["title"], row["summary"], row["summary_upto"],
        row["last_seq"], row["created_at"], row["updated_at"],
        tuple(json.loads(row["summary_labels"])),
    )  # fmt: skip


def _message(row: Any) -> ChatMessage:
    return ChatMessage(
        row["id"], row["session_id"], row["seq"], row["role"], row["content"], row["status"],
        row["run_id"], json.loads(row["data"]), row["created_at"],
        None if row["labels"] is None else tuple(json.loads(row["labels"])),
    )  # fmt: skip


def _labels(labels: Sequence[str] | None) -> str | None:
    """A message's labels as stored: JSON, or NULL when unknown (which counts as restricted)."""
    return None if labels is None else json.dumps(list(labels))
