"""`server.research_jobs`: research runs started over HTTP are `research` jobs that `footnote
worker` processes execute; the API streams them from the store (any replica, any restart),
cancels them through the ledger, spares them at start-up, and counts them toward the user's
runs in flight. No model runs (the library only, extractive; embeddings from a loopback stub)."""

from __future__ import annotations

import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from jobs_support import (
    RESEARCH_CONFIG,
    EmbedServer,
    redis_url,
    research_library,
    spawn_worker,
    wait_for,
    write_config,
)
from test_research_api import parse_sse

from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace
from footnote.workspace.jobs import open_queue

pytestmark = pytest.mark.integration
QUESTION = "How fast did the recycling market grow, and how large is it?"


@pytest.fixture(params=["embedded", "scaled"])
def backend(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The embedded workspace (SQLite store and queue), or the scaled-out one: PostgreSQL
    (pgvector) store, the queue on Redis, run events relayed through Redis."""
    if request.param == "embedded":
        yield {"jobs": {}, "store_url": "", "redis_url": ""}
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/pgtest.py
    from pgtest import fresh_database

    url, name = redis_url(), f"t{uuid.uuid4().hex[:12]}"
    yield {"jobs": {"url": url, "name": name}, "store_url": fresh_database(), "redis_url": url}
    import redis

    r = redis.Redis.from_url(url)
    keys = list(r.scan_iter(f"footnote:jobs:{name}:*")) + list(r.scan_iter(f"huey.*.{name}"))
    if keys:
        r.delete(*keys)


def _config(
    ws: Path, embed: EmbedServer, backend: dict[str, Any], *, research_jobs: bool = True,
    **jobs: Any,
) -> None:  # fmt: skip
    extra = (
        f"""
[server]
research_jobs = {"true" if research_jobs else "false"}
redis_url = "{backend["redis_url"]}"
max_runs_in_flight = 1
"""
        + RESEARCH_CONFIG
    )
    write_config(ws, {"server_threads": 0, "lease_s": 1.5, **backend["jobs"], **jobs}, embed.url,
                 extra, store_url=backend["store_url"])  # fmt: skip


def _library(ws: Workspace, tmp: Path) -> None:
    ws.ingest(research_library(tmp))


@pytest.fixture()
def embed() -> Iterator[EmbedServer]:
    server = EmbedServer()
    yield server
    server.stop()


def _client(ws: Workspace) -> TestClient:
    return TestClient(create_app(ws, ServerDeps(use_models=False)), base_url="http://127.0.0.1",
                      raise_server_exceptions=False)  # fmt: skip


def _start(c: TestClient) -> str:
    run = c.post("/v1/research", json={"question": QUESTION, "template": "market_size",
                                       "web": False}).json()  # fmt: skip
    items = [i for i in run["outline"]["items"] if i["id"] in ("size", "growth")]
    started = c.post(f"/v1/research/{run['id']}/start", json={"outline": {"items": items}})
    assert started.status_code == 202, started.text
    return str(run["id"])


def _frames(c: TestClient, run_id: str, after: int = 0) -> list[dict[str, Any]]:
    headers = {"Last-Event-ID": str(after)} if after else {}
    with c.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as resp:
        assert resp.status_code == 200
        return parse_sse(resp.iter_lines())


def _stop(*procs: Any) -> None:
    for proc in procs:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_a_run_is_a_job_a_worker_executes_and_the_api_streams(
    tmp_path: Path, embed: EmbedServer, backend: dict[str, Any]
) -> None:
    _config(tmp_path / "ws", embed, backend)
    ws = Workspace.open(tmp_path / "ws")
    _library(ws, tmp_path)
    worker = None
    try:
        with _client(ws) as c:
            run_id = _start(c)
            job = ws.runs.get_run(run_id)["input"]["job"]  # type: ignore[index]
            assert job == f"research:{run_id}"
            assert open_queue(ws.settings).status(job).state == "queued"  # type: ignore[union-attr]
            # a second run is over the user's limit (1) while the first is queued
            over = c.post("/v1/research", json={"question": QUESTION, "template": "market_size",
                                                "web": False, "confirm": True})  # fmt: skip
            assert (
                over.status_code == 429
                and over.json()["error"]["detail"]["quota"] == "runs_in_flight"
            )
        # the API process restarts before any worker took the job: the run is not orphaned
        with _client(ws) as c:
            assert ws.runs.get_run(run_id)["status"] == "running"  # type: ignore[index]
            worker = spawn_worker(tmp_path / "ws", "--threads", "1")
            frames = _frames(c, run_id)
            kinds = [f["event"] for f in frames]
            assert [f["id"] for f in frames] == list(range(1, len(frames) + 1))
            for kind in ("outline", "plan", "subquestion_start", "card", "brief"):
                assert kind in kinds, kind
            assert kinds[-1] == "done" and kinds.count("done") == 1 and kinds[-2] == "brief"
            # a reconnect gets exactly what it missed
            assert _frames(c, run_id, after=frames[2]["id"]) == frames[3:]
            assert c.get(f"/v1/runs/{run_id}").json()["status"] == "completed"
            assert c.get(f"/v1/research/{run_id}/brief").status_code == 200
    finally:
        _stop(worker)
        ws.close()


def test_with_the_setting_off_the_api_process_drives_the_run(
    tmp_path: Path, embed: EmbedServer, backend: dict[str, Any]
) -> None:
    _config(tmp_path / "ws", embed, backend, research_jobs=False)
    ws = Workspace.open(tmp_path / "ws")
    _library(ws, tmp_path)
    try:
        with _client(ws) as c:
            run_id = _start(c)
            assert "job" not in ws.runs.get_run(run_id)["input"]  # type: ignore[index]
            assert [f["event"] for f in _frames(c, run_id)][-2:] == ["brief", "done"]
    finally:
        ws.close()


def test_cancel_a_queued_run_and_a_running_one(
    tmp_path: Path, embed: EmbedServer, backend: dict[str, Any]
) -> None:
    # a lease of 6 s: the cancel answer waits up to a lease for the worker to stop the run (it
    # does so at its next event), which a loaded machine may delay past a short one
    _config(tmp_path / "ws", embed, backend, max_attempts=1, lease_s=6.0)
    ws = Workspace.open(tmp_path / "ws")
    _library(ws, tmp_path)
    queue = open_queue(ws.settings)
    worker = None
    try:
        with _client(ws) as c:
            first = _start(c)
            assert c.post(f"/v1/runs/{first}/cancel").json()["status"] == "cancelled"
            kinds = [(f["event"], f["data"].get("code")) for f in _frames(c, first)]
            assert kinds == [("error", "cancelled"), ("done", None)]
            assert c.post(f"/v1/runs/{first}/cancel").status_code == 409
            rec = queue.status(f"research:{first}")
            assert rec is not None and rec.state == "failed" and rec.error == "cancelled"

            embed.hold = lambda texts: any("growth" in t.lower() for t in texts)
            second = _start(c)
            worker = spawn_worker(tmp_path / "ws", "--threads", "1")
            wait_for(embed.held.is_set, 120, "the worker to search for the second sub-question")
            embed.release()
            said = c.post(f"/v1/runs/{second}/cancel").json()["status"]
            assert said == "cancelled"
            frames = _frames(c, second)
            assert [f["event"] for f in frames][-2:] == ["error", "done"]
            assert frames[-2]["data"]["code"] == "cancelled" and "brief" not in {
                f["event"] for f in frames
            }
            assert ws.research_store.get_research(second).state == "cancelled"  # type: ignore[union-attr]
            assert ws.runs.get_run(second)["status"] == "cancelled"  # type: ignore[index]
            # the worker took the queued-then-cancelled first run never
            assert queue.status(f"research:{first}").attempts == 0  # type: ignore[union-attr]
            # a cancelled run resumes as a job and completes
            resumed = c.post(f"/v1/research/{second}/resume")
            assert resumed.status_code == 202, resumed.text
            frames = _frames(c, second, after=frames[-1]["id"])
            assert [f["event"] for f in frames][-2:] == ["brief", "done"], frames[-3:]
    finally:
        _stop(worker)
        queue.close()
        ws.close()


def test_a_run_whose_worker_died_on_its_last_try_is_closed_once(
    tmp_path: Path, embed: EmbedServer, backend: dict[str, Any]
) -> None:
    _config(tmp_path / "ws", embed, backend, max_attempts=1)
    ws = Workspace.open(tmp_path / "ws")
    _library(ws, tmp_path)
    worker = reaper = None
    try:
        with _client(ws) as c:
            embed.hold = lambda texts: any("growth" in t.lower() for t in texts)
            run_id = _start(c)
            worker = spawn_worker(tmp_path / "ws", "--threads", "1")
            wait_for(embed.held.is_set, 120, "the worker to search for the second sub-question")
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
            embed.release()
            reaper = spawn_worker(tmp_path / "ws", "--threads", "1", "--idle-exit", "1")
            frames = _frames(c, run_id)
            assert [f["event"] for f in frames][-2:] == ["error", "done"]
            assert frames[-2]["data"]["code"] == "interrupted"
            time.sleep(0.3)
            assert _frames(c, run_id) == frames  # closed once: a second follower adds nothing
            assert c.get(f"/v1/runs/{run_id}").json()["status"] == "failed"
    finally:
        _stop(worker, reaper)
        ws.close()
