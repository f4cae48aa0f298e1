"""Users and API keys in PostgreSQL (only a key's hash is kept)."""

from __future__ import annotations

import json
from typing import Any

from footnote.store.postgres.db import PgDatabase
from footnote.store.records import ApiKey, User, hash_key
from footnote.store.sqlite.auth import (
    KEYS_ORDER,
    KEYS_SQL,
    check_key_id,
    check_user,
    key_record,
    new_key,
    one_key,
    stale,
    user_record,
    utc_now,
)


class PgAuthStore:
    """`AuthStore` on the PostgreSQL database."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def add_user(self, user_id: str, groups: tuple[str, ...] = (), *, admin: bool = False) -> None:
        """Create a user or replace its groups and admin flag."""
        check_user(user_id, groups)
        self.db.run(
            "INSERT INTO users (id, groups, admin) VALUES (%s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET groups = excluded.groups, admin = excluded.admin",
            (user_id, json.dumps(list(groups)), int(admin)),
        )

    def add_key(
        self, user_id: str, groups: tuple[str, ...] = (), label: str = "", *, admin: bool = False
    ) -> str:
        """Create (or update) the user and return a new API key for it; only its hash is kept."""
        self.add_user(user_id, groups, admin=admin)
        key = new_key()
        self.db.run(
            "INSERT INTO api_keys (key_hash, user_id, label) VALUES (%s, %s, %s)",
            (hash_key(key), user_id, label),
        )
        return key

    def has_keys(self) -> bool:
        """Whether any API key exists."""
        return self.db.one("SELECT 1 AS x FROM api_keys LIMIT 1") is not None

    def user_for_key(self, key: str) -> User | None:
        """The user an API key belongs to, or None; notes when the key was used."""
        digest, now = hash_key(key), utc_now()
        row = self.db.one(
            "SELECT u.id, u.groups, u.admin, k.last_used_at FROM api_keys k "
            "JOIN users u ON u.id = k.user_id WHERE k.key_hash = %s",
            (digest,),
        )
        if row and stale(row["last_used_at"], now):
            self.db.run("UPDATE api_keys SET last_used_at = %s WHERE key_hash = %s", (now, digest))
        return (
            user_record(row["id"], json.loads(row["groups"]), bool(row["admin"])) if row else None
        )

    def list_keys(self) -> list[ApiKey]:
        """Every API key (no secrets), oldest first."""
        return [key_record(r) for r in self.db.all(KEYS_SQL + KEYS_ORDER)]

    @staticmethod
    def _hash_for(conn: Any, key_id: str) -> str:
        key_id = check_key_id(key_id)
        rows = conn.execute(
            "SELECT key_hash FROM api_keys WHERE substr(key_hash, 1, %s) = %s FOR UPDATE",
            (len(key_id), key_id),
        ).fetchall()
        return one_key(rows, key_id)

    def revoke_key(self, key_id: str) -> ApiKey:
        """Revoke (delete) the key with this id or unique id prefix; the key as it was."""
        with self.db.tx() as conn:
            digest = self._hash_for(conn, key_id)
            row = conn.execute(KEYS_SQL + " WHERE k.key_hash = %s", (digest,)).fetchone()
            conn.execute("DELETE FROM api_keys WHERE key_hash = %s", (digest,))
        return key_record(row)

    def rotate_key(self, key_id: str) -> tuple[str, ApiKey]:
        """A new secret for the same user and label; the old key revoked in the same
        transaction. The new secret (shown once) and the new key as listed."""
        key = new_key()
        with self.db.tx() as conn:
            old = self._hash_for(conn, key_id)
            conn.execute(
                "INSERT INTO api_keys (key_hash, user_id, label) "
                "SELECT %s, user_id, label FROM api_keys WHERE key_hash = %s",
                (hash_key(key), old),
            )
            conn.execute("DELETE FROM api_keys WHERE key_hash = %s", (old,))
            row = conn.execute(KEYS_SQL + " WHERE k.key_hash = %s", (hash_key(key),)).fetchone()
        return key, key_record(row)
