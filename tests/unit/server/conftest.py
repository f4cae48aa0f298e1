"""Fixtures: an app over a fresh workspace with a stub ask (no embedder, no model)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from server_support import StubAsk

from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace


@pytest.fixture()
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    ws = Workspace.open(tmp_path / "ws", overrides={"server": {"max_upload_mb": 0.01}})
    yield ws
    ws.close()


@pytest.fixture()
def stub() -> StubAsk:
    return StubAsk()


@pytest.fixture()
def client(workspace: Workspace, stub: StubAsk) -> Iterator[TestClient]:
    app = create_app(workspace, ServerDeps(ask=stub, use_models=False))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c
