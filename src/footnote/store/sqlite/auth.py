"""Users and API keys in SQLite (only a key's hash is kept)."""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from footnote.access import PERSONAL_PREFIX, personal_group
from footnote.errors import NotFound, UsageError
from footnote.store.records import KEY_ID_LEN, ApiKey, User, hash_key
from footnote.store.sqlite.documents import SqliteStore


def user_record(user_id: str, groups: list[str], admin: bool) -> User:
    """A stored user as a caller: admins are unrestricted; others get their personal group."""
    if admin:
        return User(user_id, None, admin=True)
    return User(user_id, tuple(dict.fromkeys([*groups, personal_group(user_id)])))


def new_key() -> str:
    """A fresh API key (the secret, shown once)."""
    return "fn_" + secrets.token_urlsafe(24)


def utc_now() -> str:
    """Now, as the stores write times (ISO 8601, milliseconds, Z)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def stale(last_used_at: str | None, now: str, minutes: float = 1.0) -> bool:
    """Whether a key's last use is unset or older than `minutes` before `now` (both as
    `utc_now` writes them), so the time is written at most once a minute."""
    if not last_used_at:
        return True
    cut = datetime.fromisoformat(now.replace("Z", "+00:00")) - timedelta(minutes=minutes)
    return datetime.fromisoformat(last_used_at.replace("Z", "+00:00")) < cut


def key_record(row: Any) -> ApiKey:
    """A listed key from a joined api_keys/users row."""
    return ApiKey(row["key_hash"][:KEY_ID_LEN], row["user_id"], tuple(json.loads(row["groups"])),
                  bool(row["admin"]), row["label"], row["created_at"], row["last_used_at"])  # fmt: skip


def check_key_id(key_id: str) -> str:
    """UsageError unless `key_id` looks like a key id (hex, at least 6 digits); lower-cased."""
    key_id = key_id.strip().lower()
    if len(key_id) < 6 or any(ch not in "0123456789abcdef" for ch in key_id):
        raise UsageError(f"{key_id!r} is not a key id (see `footnote keys ls`)")
    return key_id


def one_key(rows: list[Any], key_id: str) -> str:
    """The one stored hash a key id names (NotFound for none, UsageError for several)."""
    if not rows:
        raise NotFound(f"no API key {key_id!r} (see `footnote keys ls`)")
    if len(rows) > 1:
        raise UsageError(f"{key_id!r} matches {len(rows)} keys; give more of the id")
    return str(rows[0]["key_hash"])


KEYS_ORDER = " ORDER BY k.created_at, k.user_id, k.key_hash"
KEYS_SQL = ("SELECT k.key_hash, k.user_id, k.label, k.created_at, k.last_used_at, u.groups, "
            "u.admin FROM api_keys k JOIN users u ON u.id = k.user_id")  # fmt: skip


def check_user(user_id: str, groups: tuple[str, ...]) -> None:
    """UsageError for an empty user id or a group name that is somebody's personal group."""
    if not user_id.strip() or ":" in user_id:
        raise UsageError(f"invalid user id {user_id!r} (non-empty, no ':')")
    bad = [g for g in groups if g.startswith(PERSONAL_PREFIX) or not g.strip()]
    if bad:
        raise UsageError(f"group names may not be empty or start with {PERSONAL_PREFIX!r}: {bad}")


class SqliteAuthStore:
    """`AuthStore` on the workspace database."""

    def __init__(self, store: SqliteStore) -> None:
        self.conn = store.conn
        self.lock: threading.RLock = store.lock

    def add_user(self, user_id: str, groups: tuple[str, ...] = (), *, admin: bool = False) -> None:
        """Create a user or replace its groups and admin flag."""
        check_user(user_id, groups)
        with self.lock:
            self.conn.execute(
                "INSERT INTO users (id, groups, admin) VALUES (?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET groups = excluded.groups, admin = excluded.admin",
                (user_id, json.dumps(list(groups)), int(admin)),
            )

    def add_key(
        self, user_id: str, groups: tuple[str, ...] = (), label: str = "", *, admin: bool = False
    ) -> str:
        """Create (or update) the user and return a new API key for it; only its hash is kept."""
        self.add_user(user_id, groups, admin=admin)
        key = new_key()
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
        """The user an API key belongs to, or None; notes when the key was used."""
        digest, now = hash_key(key), utc_now()
        with self.lock:
            row = self.conn.execute(
                "SELECT u.id, u.groups, u.admin, k.last_used_at FROM api_keys k "
                "JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?",
                (digest,),
            ).fetchone()
            if row and stale(row["last_used_at"], now):
                self._note_use(digest, now)
        if row is None:
            return None
        return user_record(row["id"], json.loads(row["groups"]), bool(row["admin"]))

    def _note_use(self, digest: str, now: str) -> None:
        """Write the key's last use, waiting at most 100 ms for another writer (a request is
        never held up by a long write elsewhere: the time is noted on a later use)."""
        wait = int(self.conn.execute("PRAGMA busy_timeout").fetchone()[0])
        self.conn.execute("PRAGMA busy_timeout = 100")
        try:
            with contextlib.suppress(sqlite3.OperationalError):
                self.conn.execute(
                    "UPDATE api_keys SET last_used_at = ? WHERE key_hash = ?", (now, digest)
                )
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {wait}")

    def list_keys(self) -> list[ApiKey]:
        """Every API key (no secrets), oldest first."""
        with self.lock:
            rows = self.conn.execute(KEYS_SQL + KEYS_ORDER).fetchall()
        return [key_record(r) for r in rows]

    def _hash_for(self, key_id: str) -> str:
        key_id = check_key_id(key_id)
        rows = self.conn.execute(
            "SELECT key_hash FROM api_keys WHERE substr(key_hash, 1, ?) = ?", (len(key_id), key_id)
        ).fetchall()
        return one_key(rows, key_id)

    def revoke_key(self, key_id: str) -> ApiKey:
        """Revoke (delete) the key with this id or unique id prefix; the key as it was."""
        with self.lock, self.conn:  # commits, or rolls back on an error
            self.conn.execute("BEGIN IMMEDIATE")
            digest = self._hash_for(key_id)
            row = self.conn.execute(KEYS_SQL + " WHERE k.key_hash = ?", (digest,)).fetchone()
            self.conn.execute("DELETE FROM api_keys WHERE key_hash = ?", (digest,))
        return key_record(row)

    def rotate_key(self, key_id: str) -> tuple[str, ApiKey]:
        """A new secret for the same user and label; the old key revoked in the same
        transaction. The new secret (shown once) and the new key as listed."""
        key = new_key()
        with self.lock, self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            old = self._hash_for(key_id)
            self.conn.execute(
                "INSERT INTO api_keys (key_hash, user_id, label) "
                "SELECT ?, user_id, label FROM api_keys WHERE key_hash = ?",
                (hash_key(key), old),
            )
            self.conn.execute("DELETE FROM api_keys WHERE key_hash = ?", (old,))
            row = self.conn.execute(KEYS_SQL + " WHERE k.key_hash = ?", (hash_key(key),)).fetchone()
        return key, key_record(row)
