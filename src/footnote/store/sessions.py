"""Users and API keys, chat sessions and messages, run events and links, feedback.

Every session-scoped read and write takes the owner's `user_id`: a row that belongs to
somebody else is indistinguishable from one that does not exist.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from footnote.store.sqlite import SqliteStore


def new_id(prefix: str) -> str:
    """A fresh unguessable id (`ses_…`, `msg_…`, `run_…`): 96 random bits."""
    return f"{prefix}_{secrets.token_hex(12)}"


def hash_key(key: str) -> str:
    """How an API key is stored (never the key itself)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class User:
    """A caller: id plus the ACL groups retrieval filters on (None: unrestricted local user)."""

    id: str
    groups: tuple[str, ...] | None


@dataclass(frozen=True)
class ChatSession:
    """A conversation owned by one user."""

    id: str
    user_id: str
    title: str
    summary: str
    summary_upto: int
    last_seq: int
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class ChatMessage:
    """One message; `seq` orders a session, `data` holds the rewrite and the answer JSON."""

    id: str
    session_id: str
    seq: int
    role: str
    content: str
    status: str
    run_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used by the API and the window cache."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "seq": self.seq,
            "role": self.role,
            "content": self.content,
            "status": self.status,
            "run_id": self.run_id,
            "data": self.data,
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChatMessage:
        """Inverse of `to_dict`."""
        return cls(
            d["id"], d["session_id"], int(d["seq"]), d["role"], d["content"], d["status"],
            d.get("run_id"), dict(d.get("data") or {}), d.get("created_at", ""),
        )  # fmt: skip


@dataclass(frozen=True)
class StoredEvent:
    """A persisted run event: `seq` is the SSE id (1, 2, … per run)."""

    seq: int
    type: str
    data: str


class SessionStore:
    """Sessions, messages, run events and feedback in the workspace's SQLite database."""

    def __init__(self, store: SqliteStore) -> None:
        self.conn = store.conn
        self.lock: threading.RLock = store.lock

    # -- users and keys -------------------------------------------------------------------
    def add_user(self, user_id: str, groups: tuple[str, ...] = ()) -> None:
        """Create a user or replace its groups."""
        with self.lock:
            self.conn.execute(
                "INSERT INTO users (id, groups) VALUES (?, ?) "
                "ON CONFLICT(id) DO UPDATE SET groups = excluded.groups",
                (user_id, json.dumps(list(groups))),
            )

    def add_key(self, user_id: str, groups: tuple[str, ...] = (), label: str = "") -> str:
        """Create (or update) the user and return a new API key for it; only its hash is kept."""
        self.add_user(user_id, groups)
        key = "fn_" + secrets.token_urlsafe(24)
        with self.lock:
            self.conn.execute(
                "INSERT INTO api_keys (key_hash, user_id, label) VALUES (?, ?, ?)",
                (hash_key(key), user_id, label),
            )
        return key

    def has_keys(self) -> bool:
        """Whether any API key exists (otherwise the server runs as one local user)."""
        with self.lock:
            return self.conn.execute("SELECT 1 FROM api_keys LIMIT 1").fetchone() is not None

    def user_for_key(self, key: str) -> User | None:
        """The user an API key belongs to, or None."""
        with self.lock:
            row = self.conn.execute(
                "SELECT u.id, u.groups FROM api_keys k JOIN users u ON u.id = k.user_id "
                "WHERE k.key_hash = ?",
                (hash_key(key),),
            ).fetchone()
        return User(row["id"], tuple(json.loads(row["groups"]))) if row else None

    # -- sessions -------------------------------------------------------------------------
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

    def set_summary(self, user_id: str, session_id: str, summary: str, upto: int) -> None:
        """Store the running summary of the messages up to `upto` (a seq)."""
        with self.lock:
            self.conn.execute(
                "UPDATE chat_sessions SET summary = ?, summary_upto = ? WHERE user_id = ? AND id = ?",
                (summary, upto, user_id, session_id),
            )

    # -- messages -------------------------------------------------------------------------
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
                    "status, run_id, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (mid, user_id, session_id, row[0], role, content, status, run_id,
                     json.dumps(data or {}, ensure_ascii=False, default=str)),
                )  # fmt: skip
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        msg = self.get_message(user_id, mid)
        assert msg is not None
        return msg

    def update_message(
        self, user_id: str, message_id: str, *, content: str, status: str, data: dict[str, Any]
    ) -> ChatMessage | None:
        """Fill in a reply when its run ends."""
        with self.lock:
            self.conn.execute(
                "UPDATE chat_messages SET content = ?, status = ?, data = ? "
                "WHERE user_id = ? AND id = ?",
                (content, status, json.dumps(data, ensure_ascii=False, default=str), user_id,
                 message_id),
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

    # -- runs: ownership, events, links -----------------------------------------------------
    def run_owner(self, run_id: str) -> tuple[str, str | None] | None:
        """(user_id, session_id) of a run, or None."""
        with self.lock:
            row = self.conn.execute(
                "SELECT user_id, session_id FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
        return (row[0], row[1]) if row else None

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
                self.conn.execute("ROLLBACK")
                raise

    def events(self, run_id: str, after: int = 0) -> list[StoredEvent]:
        """A run's persisted events with seq > `after`, in order."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT seq, type, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq",
                (run_id, after),
            ).fetchall()
        return [StoredEvent(r[0], r[1], r[2]) for r in rows]

    def link_runs(self, parent_id: str, child_id: str) -> None:
        """Record that `child_id` (e.g. an ask run) was started by `parent_id`."""
        with self.lock:
            self.conn.execute(
                "INSERT OR IGNORE INTO run_links (parent_id, child_id) VALUES (?, ?)",
                (parent_id, child_id),
            )

    def run_family(self, run_id: str) -> list[str]:
        """The run and every run it started, recursively, in start order."""
        with self.lock:
            rows = self.conn.execute(
                "WITH RECURSIVE fam(id) AS (SELECT ? UNION "
                "SELECT l.child_id FROM run_links l JOIN fam ON l.parent_id = fam.id) "
                "SELECT r.id FROM runs r JOIN fam ON r.id = fam.id ORDER BY r.created_at, r.id",
                (run_id,),
            ).fetchall()
        return [r[0] for r in rows]

    def session_runs(self, user_id: str, session_id: str) -> list[str]:
        """Ids of every run of a session, oldest first."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT id FROM runs WHERE user_id = ? AND session_id = ? ORDER BY created_at, id",
                (user_id, session_id),
            ).fetchall()
        return [r[0] for r in rows]

    def fail_orphaned_runs(self, kinds: tuple[str, ...]) -> int:
        """Mark runs left `running` by a previous server process as failed."""
        marks = ",".join("?" * len(kinds))
        with self.lock:
            cur = self.conn.execute(
                f"UPDATE runs SET status = 'failed', "
                f"finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                f"WHERE status IN ('queued', 'running') AND kind IN ({marks})",
                kinds,
            )
            self.conn.execute("UPDATE chat_messages SET status = 'failed' WHERE status = 'pending'")
        return cur.rowcount

    # -- feedback -------------------------------------------------------------------------
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


def _session(row: Any) -> ChatSession:
    return ChatSession(
        row["id"], row["user_id"], row["title"], row["summary"], row["summary_upto"],
        row["last_seq"], row["created_at"], row["updated_at"],
    )  # fmt: skip


def _message(row: Any) -> ChatMessage:
    return ChatMessage(
        row["id"], row["session_id"], row["seq"], row["role"], row["content"], row["status"],
        row["run_id"], json.loads(row["data"]), row["created_at"],
    )  # fmt: skip
