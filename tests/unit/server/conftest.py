"""Fixtures: an app over a fresh workspace with a stub ask (no embedder, no model)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from server_support import StubAsk

from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/pgtest.py
from pgtest import fresh_database


@pytest.fixture(params=["sqlite", "postgres"])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Workspace]:
    """The API's workspace on the embedded store and on PostgreSQL (skipped, with the
    reason, when the test server cannot start)."""
    overrides: dict[str, object] = {"server": {"max_upload_mb": 0.01}}
    if request.param == "postgres":
        overrides["store"] = {"url": fresh_database()}
    ws = Workspace.open(tmp_path / "ws", overrides=overrides)
    yield ws
    ws.close()


@pytest.fixture()
def stub() -> StubAsk:
    return StubAsk()


@pytest.fixture()
def client(workspace: Workspace, stub: StubAsk) -> Iterator[TestClient]:
    app = create_app(workspace, ServerDeps(ask=stub, use_models=False))
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c
