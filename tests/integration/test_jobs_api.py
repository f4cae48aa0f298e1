"""Uploads through the HTTP API are `ingest` jobs: the server works them itself
(`jobs.server_threads`), or leaves them to `footnote worker` processes sharing the queue (here a
real redis-server): the upload is `processing` until a worker ran it, any API process sharing
the queue reports its state, and a failed ingest says why."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from jobs_support import EmbedServer, redis_url, spawn_worker, write_config

from footnote.server import create_app
from footnote.server.state import ServerDeps, ServerState
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration
NOTE = b"# Memo\n\nThe recycling market grew by 11 percent in 2023, the association says.\n"


@pytest.fixture()
def embed() -> Iterator[EmbedServer]:
    server = EmbedServer()
    yield server
    server.stop()


def _app(ws: Workspace) -> TestClient:
    app = create_app(ws, ServerDeps(use_models=False))
    return TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False)


def _settle(client: TestClient, source_id: str, timeout_s: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got: dict[str, Any] = client.get(f"/v1/sources/{source_id}").json()
        if got.get("status") != "processing":
            return got
        time.sleep(0.05)
    raise AssertionError("the upload did not finish")


def test_the_server_ingests_uploads_as_jobs(tmp_path: Path, embed: EmbedServer) -> None:
    write_config(tmp_path / "ws", {"lease_s": 2.0}, embed.url)
    ws = Workspace.open(tmp_path / "ws")
    with _app(ws) as client:
        up = client.post("/v1/sources", files={"file": ("memo.md", NOTE)}).json()
        assert up["status"] == "processing"
        got = _settle(client, up["id"])
        assert got["status"] == "ready" and got["blocks"] >= 1
        state: ServerState = client.app.state.footnote  # type: ignore[attr-defined]
        rec = state.queue.wait(f"upload-{up['id']}", 180)  # stored first, then indexed
        assert rec.state == "done" and rec.attempts == 1
        bad = client.post("/v1/sources", files={"file": ("broken.pdf", b"%PDF-1.4 not a pdf")})
        failed = _settle(client, bad.json()["id"])
        assert failed["status"] == "failed" and failed["error"]
        listed = {s["id"]: s["status"] for s in client.get("/v1/sources").json()}
        assert listed == {up["id"]: "ready", bad.json()["id"]: "failed"}
    ws.close()


def test_with_no_server_threads_a_worker_process_ingests_the_upload(
    tmp_path: Path, embed: EmbedServer
) -> None:
    url, name = redis_url(), f"t{uuid.uuid4().hex[:12]}"
    ws_dir = tmp_path / "ws"
    write_config(ws_dir, {"url": url, "name": name, "server_threads": 0, "lease_s": 2.0}, embed.url)
    ws = Workspace.open(ws_dir)
    other = Workspace.open(ws_dir)  # a second API process on the same queue and store
    worker = None
    try:
        with _app(ws) as client, _app(other) as replica:
            up = client.post("/v1/sources", files={"file": ("memo.md", NOTE)}).json()
            time.sleep(1.0)  # nobody works the queue yet
            assert client.get(f"/v1/sources/{up['id']}").json()["status"] == "processing"
            assert replica.get(f"/v1/sources/{up['id']}").json()["status"] == "processing"
            state: ServerState = client.app.state.footnote  # type: ignore[attr-defined]
            assert state.worker is None and state.queue.pending() == 1
            worker = spawn_worker(ws_dir, "--idle-exit", "0.5")
            assert _settle(replica, up["id"])["status"] == "ready"
            assert worker.wait(180) == 0
    finally:
        if worker is not None and worker.poll() is None:
            worker.kill()
        ws.close()
        other.close()
        import redis

        r = redis.Redis.from_url(url)
        keys = list(r.scan_iter(f"footnote:jobs:{name}:*")) + list(r.scan_iter(f"huey.*.{name}"))
        if keys:
            r.delete(*keys)
