"""A pooled PostgreSQL database (psycopg 3): what every PostgreSQL store class shares."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from footnote.errors import StoreError
from footnote.store.postgres.migrations import apply_migrations

Row = dict[str, Any]
Conn = psycopg.Connection[Row]


class PgDatabase:
    """A connection pool on one database, migrated on open. Each call takes a connection
    from the pool for one statement or one transaction (`tx`), so the server's worker
    threads and several processes share the database without a process-wide lock."""

    def __init__(self, url: str, *, pool_size: int = 8, timeout_s: float = 30.0) -> None:
        self.url = url
        self.pool: ConnectionPool[Conn] = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"autocommit": True, "row_factory": dict_row},
            timeout=timeout_s,
            open=False,
            name="footnote",
        )
        try:
            self.pool.open(wait=True, timeout=timeout_s)
        except Exception as exc:
            raise StoreError(f"cannot connect to PostgreSQL at {_redacted(url)}: {exc}") from exc
        with self.pool.connection() as conn:
            apply_migrations(conn)
        self.lock = threading.RLock()
        """Held by nobody here; kept so code written for one connection can share a lock."""

    @contextmanager
    def tx(self) -> Iterator[Conn]:
        """One transaction on a pooled connection (rolled back on any exception)."""
        with self.pool.connection() as conn, conn.transaction():
            yield conn

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Rows of one statement."""
        with self.pool.connection() as conn:
            return conn.execute(sql, params or None).fetchall()

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """The first row of one statement, or None."""
        with self.pool.connection() as conn:
            return conn.execute(sql, params or None).fetchone()

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute one statement; the rows it affected."""
        with self.pool.connection() as conn:
            return conn.execute(sql, params or None).rowcount

    def close(self) -> None:
        """Close every pooled connection."""
        self.pool.close()


def _redacted(url: str) -> str:
    """The URL without its password."""
    head, sep, tail = url.partition("@")
    if not sep or "://" not in head:
        return url
    scheme, _, cred = head.partition("://")
    user = cred.split(":", 1)[0]
    return f"{scheme}://{user}@{tail}"
