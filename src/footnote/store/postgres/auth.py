"""Users and API keys in PostgreSQL (only a key's hash is kept)."""

from __future__ import annotations

import json
import secrets

from footnote.store.postgres.db import PgDatabase
from footnote.store.records import User, hash_key
from footnote.store.sqlite.auth import check_user, user_record


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
        key = "fn_" + secrets.token_urlsafe(24)
        self.db.run(
            "INSERT INTO api_keys (key_hash, user_id, label) VALUES (%s, %s, %s)",
            (hash_key(key), user_id, label),
        )
        return key

    def has_keys(self) -> bool:
        """Whether any API key exists."""
        return self.db.one("SELECT 1 AS x FROM api_keys LIMIT 1") is not None

    def user_for_key(self, key: str) -> User | None:
        """The user an API key belongs to, or None."""
        row = self.db.one(
            "SELECT u.id, u.groups, u.admin FROM api_keys k JOIN users u ON u.id = k.user_id "
            "WHERE k.key_hash = %s",
            (hash_key(key),),
        )
        return (
            user_record(row["id"], json.loads(row["groups"]), bool(row["admin"])) if row else None
        )
