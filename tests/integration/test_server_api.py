"""The HTTP API on a real uvicorn (loopback) with a real SSE client, real SQLite, real Redis,
the real embedder (wordllama) and extractive ask; scripted fakes only for chat models."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.store.sqlite import (
    SqliteAuthStore,
    SqliteEventStore,
)
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration

PAPER = """# Retrieval study

## Method

Hybrid retrieval indexes every paragraph with BM25 and dense vectors, then fuses the rankings with reciprocal rank fusion.

## Results

Hybrid retrieval reached a recall@10 of 0.74, ahead of BM25 at 0.61.

The corpus contains 1,213 annotated papers collected from the ACL Anthology.
"""
ENV = {
    "FOOTNOTE_MODELS__EMBED__URL": "local:wordllama",
    "FOOTNOTE_ASK__MODE": "extractive",
    "FOOTNOTE_ASK__USE_JUDGE": "false",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rewrite_script(messages: Sequence[Message]) -> str:
    """A scripted rewrite model: resolves "it" to the topic of the previous user turn."""
    prompt = messages[-1].content
    if "SLOW" in prompt:
        time.sleep(3)
    text = re.findall(r"Latest question: (.*)", prompt)[-1]
    if "rankings" in prompt:
        text = text.replace(" it ", " hybrid retrieval ")
    return text


class Server:
    """uvicorn in a background thread on a free loopback port."""

    def __init__(self, ws: Workspace, deps: ServerDeps) -> None:
        self.app = create_app(ws, deps)
        self.port = free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> httpx.Client:
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            assert time.time() < deadline, "server did not start"
            time.sleep(0.02)
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=30)
        return self.client

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(10)


def make_workspace(tmp: Path, redis_url: str = "") -> Workspace:
    for k, v in ENV.items():
        os.environ[k] = v
    ws = Workspace.open(tmp / "ws", overrides={"server": {"redis_url": redis_url,
                                                          "max_upload_mb": 0.05}})  # fmt: skip
    doc = tmp / "study.md"
    doc.write_text(PAPER, encoding="utf-8")
    assert ws.ingest([doc]).results[0].outcome == "added"
    return ws


def agent_script(messages: Sequence[Message]) -> str:
    """A scripted agent: search, then answer citing the block the search returned."""
    last = messages[-1].content
    if "Observation from search_library" in last:
        block = re.search(r"[0-9a-f]{8}-p\d+-[0-9a-f]{6,}", last)
        assert block is not None
        answer = (
            f"Hybrid retrieval reached a recall@10 of 0.74, ahead of BM25 at 0.61 [{block[0]}]."
        )
        return json.dumps({"thought": "found it", "final": answer})
    return json.dumps({"thought": "search", "tool": "search_library",
                       "arguments": {"query": "hybrid retrieval recall@10"}})  # fmt: skip


def deps() -> ServerDeps:
    def fake(script: Any, role: str) -> RoleModel:
        return RoleModel(role, FakeChatModel(script), ledger=Ledger(), external=False)

    return ServerDeps(
        rewrite_model=fake(rewrite_script, "summarise"),
        agent_model=fake(agent_script, "compose"),
        use_models=False,
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Workspace]]:
    saved = {k: os.environ.get(k) for k in ENV}
    ws = make_workspace(tmp_path_factory.mktemp("srv"))
    with Server(ws, deps()) as client:
        yield client, ws
    ws.close()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def sse(client: httpx.Client, url: str, *, last_id: int | None = None, stop_after: int | None = None,
        headers: dict[str, str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Read SSE frames with httpx streaming, parsing them by hand; stop early to 'disconnect'."""
    hdrs = dict(headers or {})
    if last_id is not None:
        hdrs["Last-Event-ID"] = str(last_id)
    frames: list[dict[str, Any]] = []
    cur: dict[str, Any] = {}
    with client.stream("GET", url, headers=hdrs) as resp:
        assert resp.status_code == 200, resp.read()
        assert resp.headers["cache-control"] == "no-cache"
        assert resp.headers["x-accel-buffering"] == "no"
        for line in resp.iter_lines():
            if line.startswith(":"):
                continue
            if not line:
                if cur:
                    frames.append(cur)
                    cur = {}
                    if stop_after is not None and len(frames) >= stop_after:
                        break
                continue
            field, _, value = line.partition(": ")
            cur[field] = (
                int(value) if field == "id" else json.loads(value) if field == "data" else value
            )
    return frames


def persisted(ws: Workspace, run_id: str) -> list[dict[str, Any]]:
    return [
        {"id": e.seq, "event": e.type, "data": json.loads(e.data)}
        for e in SqliteEventStore(ws.store).events(run_id)
    ]


def wait_done(
    client: httpx.Client, run_id: str, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    for _ in range(500):
        run: dict[str, Any] = client.get(f"/v1/runs/{run_id}", headers=headers).json()
        if run["status"] != "running":
            return run
        time.sleep(0.02)
    raise AssertionError("run did not finish")


def ask(client: httpx.Client, sid: str, text: str, **kw: Any) -> dict[str, Any]:
    resp = client.post(f"/v1/sessions/{sid}/messages", json={"content": text}, **kw)
    assert resp.status_code == 202, resp.text
    return dict(resp.json())


def test_multi_turn_conversation(served: tuple[httpx.Client, Workspace]) -> None:
    client, ws = served
    sid = client.post("/v1/sessions", json={"title": "retrieval"}).json()["id"]
    turn1 = ask(client, sid, "How does hybrid retrieval fuse the rankings?")
    frames1 = sse(client, turn1["stream_url"])
    assert frames1[-1]["event"] == "done" and frames1 == persisted(ws, turn1["run_id"])
    final1 = next(f for f in frames1 if f["event"] == "final")["data"]["answer"]
    assert final1["status"] == "answered" and "reciprocal rank fusion" in final1["answer"]
    turn2 = ask(client, sid, "What recall did it reach?")
    frames2 = sse(client, turn2["stream_url"])
    rewrite = [f for f in frames2 if f["event"] == "status" and f["data"]["stage"] == "rewrite"]
    assert rewrite and "hybrid retrieval" in rewrite[0]["data"]["message"]
    final2 = next(f for f in frames2 if f["event"] == "final")["data"]["answer"]
    assert "0.74" in final2["answer"]
    assert all(
        c["verdict"] in ("supported", "weak") for s in final2["sentences"] for c in s["citations"]
    )
    msgs = client.get(f"/v1/sessions/{sid}/messages").json()
    assert [(m["role"], m["status"]) for m in msgs] == [
        ("user", "completed"),
        ("assistant", "completed"),
    ] * 2
    assert msgs[3]["data"]["standalone"] == "What recall did hybrid retrieval reach?"
    trace = client.get(f"/v1/runs/{turn2['run_id']}/trace").json()
    kinds = {(s["kind"], s["name"]) for r in trace["runs"] for s in r["spans"]}
    assert ("model", "rewrite") in kinds and ("retrieve", "hybrid") in kinds
    assert len(client.get(f"/v1/sessions/{sid}/traces").json()["traces"]) == 2


def test_disconnect_and_resume_with_last_event_id(served: tuple[httpx.Client, Workspace]) -> None:
    client, ws = served
    sid = client.post("/v1/sessions", json={}).json()["id"]
    turn = ask(client, sid, "How many annotated papers does the corpus contain?")
    head = sse(client, turn["stream_url"], stop_after=3)  # then the client drops the connection
    assert [f["id"] for f in head] == [1, 2, 3]
    rest = sse(client, turn["stream_url"], last_id=head[-1]["id"])
    everything = persisted(ws, turn["run_id"])
    assert head + rest == everything  # no duplicate, no gap, same payloads
    assert everything[-1]["event"] == "done"
    assert wait_done(client, turn["run_id"])["status"] == "completed"


def test_cancel_a_running_turn(served: tuple[httpx.Client, Workspace]) -> None:
    client, _ = served
    sid = client.post("/v1/sessions", json={}).json()["id"]
    ask(client, sid, "What does BM25 index?")
    wait_done(client, client.get(f"/v1/sessions/{sid}/messages").json()[-1]["run_id"])
    turn = ask(client, sid, "SLOW: and what did it reach?")  # the fake rewrite takes 3 s
    assert client.post(f"/v1/sessions/{sid}/messages", json={"content": "x"}).status_code == 409
    time.sleep(0.3)
    resp = client.post(f"/v1/runs/{turn['run_id']}/cancel")
    assert resp.status_code == 202, resp.text
    frames = sse(client, turn["stream_url"])
    assert [f["event"] for f in frames[-2:]] == ["error", "done"]
    assert frames[-2]["data"]["code"] == "cancelled"
    assert client.get(f"/v1/runs/{turn['run_id']}").json()["status"] == "cancelled"
    assert client.get(f"/v1/sessions/{sid}/messages").json()[-1]["status"] == "cancelled"
    assert client.post(f"/v1/runs/{turn['run_id']}/cancel").status_code == 409


def test_two_users_only_see_their_own(served: tuple[httpx.Client, Workspace]) -> None:
    client, ws = served
    store = SqliteAuthStore(ws.store)
    alice = {"Authorization": "Bearer " + store.add_key("alice", ("lab",))}
    bob = {"X-API-Key": store.add_key("bob")}
    try:
        assert client.get("/v1/sessions").status_code == 401
        sid = client.post("/v1/sessions", json={}, headers=alice).json()["id"]
        turn = ask(client, sid, "What does BM25 index?", headers=alice)
        wait_done(client, turn["run_id"], alice)
        for url in (f"/v1/sessions/{sid}", f"/v1/sessions/{sid}/messages",
                    f"/v1/runs/{turn['run_id']}", f"/v1/runs/{turn['run_id']}/events",
                    f"/v1/runs/{turn['run_id']}/trace", f"/v1/sessions/{sid}/traces"):  # fmt: skip
            resp = client.get(url, headers=bob)
            assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"
        guessed = sid[:-4] + "0000"
        assert client.get(f"/v1/sessions/{guessed}", headers=alice).status_code == 404
        assert client.delete(f"/v1/sessions/{sid}", headers=bob).status_code == 404
        assert client.get(f"/v1/sessions/{sid}", headers=alice).status_code == 200
    finally:
        with ws.store.lock:
            ws.store.conn.execute("DELETE FROM api_keys")


def test_upload_limits_and_malformed_requests(served: tuple[httpx.Client, Workspace]) -> None:
    client, _ = served
    resp = client.post("/v1/sources", files={"file": ("big.md", b"x" * 200_000)})
    assert resp.status_code == 413 and resp.json()["error"]["code"] == "payload_too_large"
    resp = client.post(
        "/v1/sessions", content=b"{oops", headers={"content-type": "application/json"}
    )
    assert resp.status_code == 422 and set(resp.json()["error"]) == {"code", "message", "detail"}
    sid = client.post("/v1/sessions", json={}).json()["id"]
    resp = client.post(f"/v1/sessions/{sid}/messages", json={"content": "", "mode": "nope"})
    assert resp.status_code == 422 and resp.json()["error"]["code"] == "invalid_request"
    note = b"# Notes\n\nThe tokenizer splits Chinese text with jieba before indexing it in FTS5.\n"
    up = client.post("/v1/sources", files={"file": ("notes.md", note)})
    assert up.status_code == 202 and up.json()["status"] == "processing"
    for _ in range(300):
        status = client.get(f"/v1/sources/{up.json()['id']}").json()
        if status["status"] != "processing":
            break
        time.sleep(0.05)
    assert status["status"] == "ready" and status["blocks"] >= 1
    assert client.delete(f"/v1/sources/{up.json()['id']}").status_code == 204


@pytest.fixture()
def own_redis() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            assert time.time() < deadline, "redis did not start"
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0", proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_redis_window_and_the_store_when_redis_dies(
    tmp_path: Path, own_redis: tuple[str, subprocess.Popen[bytes]]
) -> None:
    import redis

    url, proc = own_redis
    ws = make_workspace(tmp_path, redis_url=url)
    try:
        with Server(ws, deps()) as client:
            sid = client.post("/v1/sessions", json={}).json()["id"]
            turn = ask(client, sid, "How does hybrid retrieval fuse the rankings?")
            sse(client, turn["stream_url"])
            key = f"footnote:window:local:{sid}"
            cached = redis.Redis.from_url(url).lrange(key, 0, -1)
            assert [json.loads(c)["role"] for c in cached] == ["user", "assistant"]
            proc.kill()
            proc.wait()
            turn2 = ask(client, sid, "What recall did it reach?")
            frames = sse(client, turn2["stream_url"])
            final = next(f for f in frames if f["event"] == "final")["data"]["answer"]
            assert "0.74" in final["answer"]  # the rewrite still saw the history (from the store)
            assert client.get("/v1/health").json()["window_available"] is False
            msgs = client.get(f"/v1/sessions/{sid}/messages").json()
            assert len(msgs) == 4 and msgs[-1]["status"] == "completed"
    finally:
        ws.close()


def test_agent_mode_uses_tools_and_the_verification_gate(
    served: tuple[httpx.Client, Workspace],
) -> None:
    client, _ = served
    sid = client.post("/v1/sessions", json={}).json()["id"]
    resp = client.post(
        f"/v1/sessions/{sid}/messages",
        json={"content": "What recall was reached?", "mode": "agent"},
    )
    frames = sse(client, resp.json()["stream_url"])
    kinds = [f["event"] for f in frames]
    assert kinds.index("thinking") < kinds.index("tool_call") < kinds.index("tool_result")
    assert kinds.index("tool_result") < kinds.index("verification") < kinds.index("final")
    final = next(f for f in frames if f["event"] == "final")["data"]["answer"]
    assert final["status"] == "answered" and "0.74" in final["answer"]
    assert final["sentences"][0]["citations"][0]["verdict"] == "supported"
    trace = client.get(f"/v1/runs/{resp.json()['run_id']}/trace").json()
    spans = {(s["kind"], s["name"]) for r in trace["runs"] for s in r["spans"]}
    assert ("model", "agent_step") in spans and ("tool", "search_library") in spans
