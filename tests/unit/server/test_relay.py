"""Two API replicas on one PostgreSQL store and one Redis: any replica streams any run, with
`Last-Event-ID` resume, and a run whose replica died is closed once (real PostgreSQL from
the pgserver wheel and a redis-server started here; skipped, naming which, when absent)."""

from __future__ import annotations

import atexit
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from server_support import StubAsk, parse_sse, wait_run

from footnote.server import create_app
from footnote.server.relay import RedisRelay
from footnote.server.state import ServerDeps
from footnote.store.records import new_id
from footnote.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/pgtest.py
from pgtest import fresh_database


def _start_redis() -> str:
    """A redis-server of this test module on a free loopback port (skip when not installed)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (scripts/setup installs it)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    atexit.register(proc.terminate)
    import redis

    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(100):
        try:
            redis.Redis.from_url(url, socket_timeout=1).ping()
            return url
        except Exception:
            time.sleep(0.05)
    pytest.skip("redis-server did not start")


REDIS = ""


@pytest.fixture
def replicas(tmp_path: Path):  # type: ignore[no-untyped-def]
    global REDIS
    REDIS = REDIS or _start_redis()
    url = fresh_database()
    settings = {
        "store": {"url": url, "pool_size": 3},
        "server": {"redis_url": REDIS, "run_lease_s": 1.0},
    }
    wss = [Workspace.open(tmp_path / name, overrides=settings) for name in ("a", "b")]
    stubs = [StubAsk(tokens=40, delay=0.02), StubAsk()]
    apps = [
        create_app(ws, ServerDeps(ask=s, use_models=False))
        for ws, s in zip(wss, stubs, strict=True)
    ]
    clients = [TestClient(app, base_url="http://127.0.0.1") for app in apps]
    for c in clients:
        c.__enter__()
    yield apps, clients
    for c in clients:
        c.__exit__(None, None, None)
    for ws in wss:
        ws.close()


def test_any_replica_streams_a_run_live_and_resumes(replicas) -> None:  # type: ignore[no-untyped-def]
    (app_a, app_b), (a, b) = replicas
    assert app_b.state.footnote.hub.relay is not None
    sid = a.post("/v1/sessions", json={}).json()["id"]
    run_id = a.post(f"/v1/sessions/{sid}/messages", json={"content": "q"}).json()["run_id"]
    assert run_id in app_a.state.footnote.hub.live  # executing on replica A …
    with b.stream("GET", f"/v1/runs/{run_id}/events") as resp:  # … streamed by replica B
        frames = parse_sse(resp.iter_lines())
    ids = [int(f["id"]) for f in frames]
    assert ids == list(range(1, len(ids) + 1)) and frames[-1]["event"] == "done"
    assert sum(f["event"] == "answer_delta" for f in frames) == 40
    assert wait_run(b, run_id)["status"] == "completed"
    with b.stream("GET", f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": "10"}) as resp:
        rest = parse_sse(resp.iter_lines())
    assert [int(f["id"]) for f in rest] == ids[10:]

    # resume on B in the middle of a live run on A: exactly the missing events, no repeats
    run2 = a.post(f"/v1/sessions/{sid}/messages", json={"content": "again"}).json()["run_id"]
    with a.stream("GET", f"/v1/runs/{run2}/events") as resp:
        first = []
        for line in resp.iter_lines():
            first.append(line)
            if line.startswith("id: 5"):
                break
    with b.stream("GET", f"/v1/runs/{run2}/events", headers={"Last-Event-ID": "5"}) as resp:
        tail = parse_sse(resp.iter_lines())
    assert int(tail[0]["id"]) == 6 and tail[-1]["event"] == "done"
    assert [int(f["id"]) for f in tail] == list(range(6, 6 + len(tail)))


def test_a_run_whose_replica_died_is_closed_once(replicas) -> None:  # type: ignore[no-untyped-def]
    (app_a, _), (a, b) = replicas
    state_a = app_a.state.footnote
    # a run recorded as running by a replica that is gone: no lease, no live task
    gone = new_id("run")
    state_a.runs.start(gone, "chat", {}, user_id="local", session_id=None)
    with b.stream("GET", f"/v1/runs/{gone}/events") as resp:
        frames = parse_sse(resp.iter_lines())
    assert [f["event"] for f in frames] == ["error", "done"]
    assert frames[0]["data"]["code"] == "interrupted"
    with a.stream("GET", f"/v1/runs/{gone}/events") as resp:  # closed once, not twice
        assert [f["event"] for f in parse_sse(resp.iter_lines())] == ["error", "done"]
    assert b.get(f"/v1/runs/{gone}").json()["status"] == "failed"


def test_starting_replica_spares_runs_another_replica_holds(tmp_path: Path, replicas) -> None:  # type: ignore[no-untyped-def]
    (app_a, _), _ = replicas
    state_a = app_a.state.footnote
    held = new_id("run")
    state_a.runs.start(held, "chat", {}, user_id="local", session_id=None)
    relay = RedisRelay(REDIS, lease_s=30)
    relay.hold(held)
    try:
        url = state_a.settings.store_url
        ws = Workspace.open(
            tmp_path / "c", overrides={"store": {"url": url}, "server": {"redis_url": REDIS}}
        )
        app = create_app(ws, ServerDeps(ask=StubAsk(), use_models=False))
        with TestClient(app, base_url="http://127.0.0.1") as c:
            assert c.get(f"/v1/runs/{held}").json()["status"] == "running"
        ws.close()
    finally:
        relay.release(held)


def test_replicas_share_rate_limits(replicas) -> None:  # type: ignore[no-untyped-def]
    import redis

    from footnote.server.quotas import RedisQuotas

    (app_a, app_b), (a, b) = replicas
    redis.Redis.from_url(REDIS).delete(RedisQuotas.key("local", "sessions"))
    for app in (app_a, app_b):  # the same limit on both replicas
        quotas = app.state.footnote.quotas
        assert isinstance(quotas, RedisQuotas)
        quotas.settings = quotas.settings.model_copy(update={"max_sessions_per_minute": 3})
    assert a.post("/v1/sessions", json={}).status_code == 201
    assert b.post("/v1/sessions", json={}).status_code == 201
    assert a.post("/v1/sessions", json={}).status_code == 201
    over = b.post("/v1/sessions", json={})  # the fourth this minute, on the other replica
    assert over.status_code == 429 and 1 <= int(over.headers["Retry-After"]) <= 60


def test_lease_and_pool_settings_take_effect(replicas) -> None:  # type: ignore[no-untyped-def]
    (app_a, _), _ = replicas
    state = app_a.state.footnote
    assert state.ws.store.db.pool.max_size == 3  # store.pool_size
    relay = state.hub.relay
    assert relay.lease_s == 1.0  # server.run_lease_s
    run_id = new_id("run")
    relay.hold(run_id)
    assert relay.alive(run_id)
    time.sleep(1.3)
    assert not relay.alive(run_id)  # not renewed: gone after the lease


def test_runs_in_flight_are_counted_across_replicas(replicas) -> None:  # type: ignore[no-untyped-def]
    """The runs-in-flight limit holds for a user over all replicas: a run executing on A takes
    the user's only slot on B too, and frees it when it ends (issue #18, shared limits)."""
    (app_a, app_b), (a, b) = replicas
    for app in (app_a, app_b):
        quotas = app.state.footnote.quotas
        quotas.settings = quotas.settings.model_copy(update={"max_runs_in_flight": 1})
    sid_a = a.post("/v1/sessions", json={}).json()["id"]
    sid_b = b.post("/v1/sessions", json={}).json()["id"]
    run_id = a.post(f"/v1/sessions/{sid_a}/messages", json={"content": "q"}).json()["run_id"]
    assert app_b.state.footnote.hub.in_flight("local") == 1  # A's run, counted on B
    assert app_b.state.footnote.hub.in_flight("*") == 1  # and in everyone's (the model queue)
    over = b.post(f"/v1/sessions/{sid_b}/messages", json={"content": "q2"})
    assert over.status_code == 429 and "runs in flight" in over.json()["error"]["message"]
    assert wait_run(a, run_id)["status"] == "completed"
    assert app_b.state.footnote.hub.in_flight("local") == 0
    assert b.post(f"/v1/sessions/{sid_b}/messages", json={"content": "q2"}).status_code == 202


def test_a_dead_replicas_runs_stop_counting_when_their_lease_ends(replicas) -> None:  # type: ignore[no-untyped-def]
    (_, app_b), _ = replicas
    relay = RedisRelay(REDIS, lease_s=1.0)
    relay.hold(new_id("run"), "ghost")  # a replica that took the lease and then died
    assert app_b.state.footnote.hub.in_flight("ghost") == 1
    time.sleep(1.3)
    assert app_b.state.footnote.hub.in_flight("ghost") == 0


def test_a_busy_replica_keeps_its_lease(replicas) -> None:  # type: ignore[no-untyped-def]
    """Found by bench/replicas_load.py at 50 sessions: a replica whose event loop was busy
    longer than the lease (1 s here) lost it, and a follower on the other replica closed a
    run that was still executing as `interrupted`. Leases are renewed off the event loop."""
    (app_a, _), (a, b) = replicas
    app_a.state.footnote.deps.ask.tokens, app_a.state.footnote.deps.ask.delay = 60, 0.05
    sid = a.post("/v1/sessions", json={}).json()["id"]
    run_id = a.post(f"/v1/sessions/{sid}/messages", json={"content": "q"}).json()["run_id"]
    task = app_a.state.footnote.hub.live[run_id].task
    task.get_loop().call_soon_threadsafe(time.sleep, 3.0)  # replica A's loop stalls for 3 s
    with b.stream("GET", f"/v1/runs/{run_id}/events") as resp:
        kinds = [f["event"] for f in parse_sse(resp.iter_lines())]
    assert "error" not in kinds and kinds[-2:] == ["final", "done"], kinds[-4:]
    assert wait_run(b, run_id)["status"] == "completed"


def test_a_run_closed_elsewhere_stops_writing_here(replicas) -> None:  # type: ignore[no-untyped-def]
    """If another replica did close a run (its lease was judged lost), the replica executing
    it stops: the stored stream keeps exactly one ending, never a second `done`."""
    (app_a, _), (a, b) = replicas
    hub = app_a.state.footnote.hub
    app_a.state.footnote.deps.ask.tokens, app_a.state.footnote.deps.ask.delay = 200, 0.02
    sid = a.post("/v1/sessions", json={}).json()["id"]
    run_id = a.post(f"/v1/sessions/{sid}/messages", json={"content": "q"}).json()["run_id"]
    time.sleep(0.3)
    other = RedisRelay(REDIS, lease_s=1.0)
    assert other.claim_close(run_id)  # replica B decided the run was abandoned …
    hub.close_orphan(run_id)  # … and wrote its ending
    for _ in range(100):
        if run_id not in hub.live:
            break
        time.sleep(0.05)
    assert run_id not in hub.live  # replica A noticed and stopped the run
    time.sleep(0.3)
    with b.stream("GET", f"/v1/runs/{run_id}/events") as resp:
        frames = parse_sse(resp.iter_lines())
    kinds = [f["event"] for f in frames]
    assert kinds.count("done") == 1 and kinds[-2:] == ["error", "done"], kinds[-5:]
    ids = [f["id"] for f in frames]
    assert ids == list(range(1, len(ids) + 1))
    stored = [e.type for e in hub.events.events(run_id)]  # nothing was written after `done`
    assert stored[-1] == "done" and stored.count("done") == 1
