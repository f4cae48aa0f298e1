"""The API contract: one error shape everywhere, sessions, messages, runs, feedback, traces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from server_support import StubAsk, parse_sse, wait_run

from footnote.server import create_app
from footnote.server.state import ServerDeps, ServerState
from footnote.workspace import Workspace


def error_of(resp: Any, status: int, code: str) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "detail"}
    assert body["error"]["code"] == code and body["error"]["message"]
    return dict(body["error"])


def test_every_error_has_the_one_shape(client: TestClient) -> None:
    error_of(client.get("/v1/nothing-here"), 404, "not_found")
    error_of(client.delete("/v1/sessions"), 405, "method_not_allowed")
    err = error_of(client.post("/v1/sessions", json={"title": 5}), 422, "invalid_request")
    assert err["detail"][0]["loc"] == ["body", "title"]
    error_of(client.post("/v1/sessions", content=b"{not json"), 422, "invalid_request")
    error_of(client.get("/v1/sessions/ses_nope"), 404, "not_found")
    error_of(client.get("/v1/runs/run_nope/events"), 404, "not_found")
    big = b"x" * 20_000
    error_of(client.post("/v1/sources", files={"file": ("a.md", big)}), 413, "payload_too_large")
    error_of(
        client.post("/v1/sources", files={"file": ("a.exe", b"MZ")}), 415, "unsupported_media_type"
    )


def test_paging_out_of_range_is_a_clean_422(client: TestClient) -> None:
    """Found by the API fuzzer: an offset past SQLite's integer range was a 500."""
    for query in ("offset=99999999999999999999", "offset=-1", "limit=0", "limit=201"):
        err = error_of(client.get(f"/v1/sessions?{query}"), 422, "invalid_request")
        assert err["detail"][0]["loc"][0] == "query"
    assert client.get("/v1/sessions?limit=200&offset=0").status_code == 200
    assert client.get("/v1/research?limit=200").status_code == 200
    error_of(client.get("/v1/research?limit=99999999999999999999"), 422, "invalid_request")


def test_unhandled_errors_use_the_shape_too(workspace: Workspace) -> None:
    app = create_app(workspace, ServerDeps(use_models=False))

    @app.get("/v1/boom")
    async def boom() -> None:
        raise RuntimeError("kaput")

    app.router.routes.insert(0, app.router.routes.pop())  # ahead of the web app's `/` mount

    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        err = error_of(client.get("/v1/boom"), 500, "internal")
    assert "kaput" not in err["message"]


def test_session_lifecycle(client: TestClient) -> None:
    s = client.post("/v1/sessions", json={"title": "first"}).json()
    assert s["id"].startswith("ses_") and len(s["id"]) > 20
    assert client.patch(f"/v1/sessions/{s['id']}", json={"title": "renamed"}).json()["title"] == (
        "renamed"
    )
    assert [x["id"] for x in client.get("/v1/sessions").json()] == [s["id"]]
    assert client.delete(f"/v1/sessions/{s['id']}").status_code == 204
    error_of(client.get(f"/v1/sessions/{s['id']}"), 404, "not_found")


def test_message_starts_a_run_that_streams_and_persists(client: TestClient, stub: StubAsk) -> None:
    sid = client.post("/v1/sessions", json={}).json()["id"]
    started = client.post(f"/v1/sessions/{sid}/messages", json={"content": "what is BM25?"})
    assert started.status_code == 202
    turn = started.json()
    with client.stream("GET", turn["stream_url"]) as resp:
        assert resp.headers["content-type"].startswith("text/event-stream")
        assert resp.headers["cache-control"] == "no-cache"
        assert resp.headers["x-accel-buffering"] == "no"
        frames = parse_sse(resp.iter_lines())
    assert [f["id"] for f in frames] == list(range(1, len(frames) + 1))
    assert frames[-1]["event"] == "done" and frames[-2]["event"] == "final"
    assert "".join(f["data"]["text"] for f in frames if f["event"] == "answer_delta") == (
        "t0 t1 t2 t3 t4 "
    )
    run = wait_run(client, turn["run_id"])
    assert run["status"] == "completed" and run["events"] == len(frames)
    msgs = client.get(f"/v1/sessions/{sid}/messages").json()
    assert [m["role"] for m in msgs] == ["user", "assistant"]
    assert msgs[1]["status"] == "completed" and msgs[1]["content"] == "About what is BM25?"
    assert stub.calls[0]["session_id"] == sid and stub.calls[0]["user_groups"] is None
    # resume from an id: exactly the rest
    with client.stream("GET", turn["stream_url"], headers={"Last-Event-ID": "3"}) as resp:
        rest = parse_sse(resp.iter_lines())
    assert rest == frames[3:]


def test_feedback_leads_to_the_trace(client: TestClient) -> None:
    sid = client.post("/v1/sessions", json={}).json()["id"]
    turn = client.post(f"/v1/sessions/{sid}/messages", json={"content": "q"}).json()
    wait_run(client, turn["run_id"])
    fb = client.post(
        "/v1/feedback", json={"rating": "down", "message_id": turn["reply"]["id"], "comment": "no"}
    )
    assert fb.status_code == 201 and fb.json()["run_id"] == turn["run_id"]
    trace = client.get(fb.json()["trace_url"]).json()
    assert trace["feedback"][0]["rating"] == -1 and trace["feedback"][0]["comment"] == "no"
    by_session = client.get(f"/v1/sessions/{sid}/traces").json()
    assert [t["run_id"] for t in by_session["traces"]] == [turn["run_id"]]
    error_of(
        client.post("/v1/feedback", json={"rating": "meh", "run_id": "x"}), 422, "invalid_request"
    )


def test_keys_make_users_and_others_get_404(client: TestClient) -> None:
    state: ServerState = client.app.state.footnote  # type: ignore[attr-defined]
    alice = {"Authorization": "Bearer " + state.auth.add_key("alice", ("lab",))}
    bob = {"X-API-Key": state.auth.add_key("bob")}
    error_of(client.get("/v1/sessions"), 401, "unauthorized")
    error_of(client.get("/v1/sessions", headers={"X-API-Key": "fn_wrong"}), 401, "unauthorized")
    sid = client.post("/v1/sessions", json={}, headers=alice).json()["id"]
    turn = client.post(f"/v1/sessions/{sid}/messages", json={"content": "q"}, headers=alice).json()
    wait_run(client, turn["run_id"], alice)
    for method, url, body in [
        ("GET", f"/v1/sessions/{sid}", None),
        ("PATCH", f"/v1/sessions/{sid}", {"title": "mine"}),
        ("DELETE", f"/v1/sessions/{sid}", None),
        ("GET", f"/v1/sessions/{sid}/messages", None),
        ("POST", f"/v1/sessions/{sid}/messages", {"content": "hi"}),
        ("GET", f"/v1/sessions/{sid}/traces", None),
        ("GET", f"/v1/runs/{turn['run_id']}", None),
        ("GET", f"/v1/runs/{turn['run_id']}/events", None),
        ("GET", f"/v1/runs/{turn['run_id']}/trace", None),
        ("POST", f"/v1/runs/{turn['run_id']}/cancel", None),
        ("POST", "/v1/feedback", {"rating": "up", "message_id": turn["reply"]["id"]}),
        ("POST", "/v1/feedback", {"rating": "up", "run_id": turn["run_id"]}),
    ]:
        resp = client.request(method, url, json=body, headers=bob)
        error_of(resp, 404, "not_found")
    assert client.get("/v1/sessions", headers=bob).json() == []
    assert client.get(f"/v1/sessions/{sid}", headers=alice).status_code == 200


def test_openapi_and_heartbeats(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "ws", overrides={"server": {"sse_ping_s": 0.05}})
    app = create_app(ws, ServerDeps(ask=StubAsk(tokens=3, delay=0.2), use_models=False))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        paths = client.get("/openapi.json").json()["paths"]
        assert {"/v1/sessions/{session_id}/messages", "/v1/runs/{run_id}/events"} <= set(paths)
        sid = client.post("/v1/sessions", json={}).json()["id"]
        turn = client.post(f"/v1/sessions/{sid}/messages", json={"content": "q"}).json()
        with client.stream("GET", turn["stream_url"]) as resp:
            lines = list(resp.iter_lines())
    assert any(line.startswith(":") for line in lines)  # comment pings while the model is idle
    assert parse_sse(lines)[-1]["event"] == "done"
    ws.close()
