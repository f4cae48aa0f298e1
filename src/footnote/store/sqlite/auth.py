"""Users and API keys in SQLite (only a key's hash is kept)."""

from __future__ import annotations

import json
import secrets
import threading

from footnote.errors import UsageError
from footnote.store.records import User, hash_key
from footnote.store.sqlite.documents import SqliteStore
from footnote.types import PERSONAL_PREFIX, personal_group


def user_record(user_id: str, groups: list[str], admin: bool) -> User:
    """A stored user as a caller: admins are unrestricted; others get their personal group."""
    if admin:
        return User(user_id, None, admin=True)
    return User(user_id, tuple(dict.fromkeys([*groups, personal_group(user_id)])))


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
                "SELECT u.id, u.groups, u.admin FROM api_keys k JOIN users u ON u.id = k.user_id "
                "WHERE k.key_hash = ?",
                (hash_key(key),),
            ).fetchone()
        return user_record(row["id"], json.loads(row["groups"]), bool(row["admin"])) if row else None
