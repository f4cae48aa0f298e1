"""Isolation findings of issue #15, each reproduced through the HTTP API with real ingestion
(SQLite, FTS5, wordllama vectors): uploads, ownership, pending jobs, the single-user guard,
quotas and what error text reaches a client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from server_support import StubAsk, wait_run

from footnote.server import create_app
from footnote.server.state import ServerDeps, ServerState
from footnote.workspace import Workspace

NOTE = b"# Confidential memo\n\nThe client's revenue grew 17 percent in the third quarter.\n"
FAST = {"models": {"embed": {"url": "local:wordllama"}}}


@pytest.fixture()
def app_ws(tmp_path: Path) -> Iterator[tuple[TestClient, Workspace]]:
    ws = Workspace.open(tmp_path / "ws", overrides=FAST)
    app = create_app(ws, ServerDeps(ask=StubAsk(), use_models=False))
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c, ws
    ws.close()


def keys(client: TestClient) -> dict[str, dict[str, str]]:
    state: ServerState = client.app.state.footnote  # type: ignore[attr-defined]
    users = {"alice": ("team-a",), "carol": ("team-a",), "bob": ("team-b",), "dave": ()}
    out = {u: {"X-API-Key": state.auth.add_key(u, g)} for u, g in users.items()}
    try:
        out["root"] = {"X-API-Key": state.auth.add_key("root", admin=True)}
    except TypeError:  # a store without admins (before issue #15): root is an ordinary user
        out["root"] = {"X-API-Key": state.auth.add_key("root")}
    return out


def upload(client: TestClient, who: dict[str, str], body: bytes = NOTE, name: str = "memo.md",
           **form: str) -> dict:  # fmt: skip
    resp = client.post("/v1/sources", files={"file": (name, body)}, data=form, headers=who)
    assert resp.status_code == 202, resp.text
    return resp.json()


def settle(client: TestClient, who: dict[str, str], source_id: str) -> dict:
    for _ in range(600):
        got = client.get(f"/v1/sources/{source_id}", headers=who).json()
        if got.get("status") != "processing":
            return got
        time.sleep(0.05)
    raise AssertionError("upload did not finish")


def test_same_bytes_from_another_user_is_their_own_record(app_ws) -> None:
    client, _ = app_ws
    k = keys(client)
    a = settle(client, k["alice"], upload(client, k["alice"], title="x")["id"])
    assert a["status"] == "ready" and "team-a" in a["acl_groups"]
    b_up = upload(client, k["bob"])
    assert b_up["id"] != a["id"]  # never alice's record (title, labels, groups)
    assert b_up.get("acl_groups", []) == [] and b_up.get("title") is None
    b = settle(client, k["bob"], b_up["id"])
    assert b["status"] == "ready" and b["acl_groups"] == ["team-b", "user:bob"]
    assert client.get(f"/v1/sources/{a['id']}", headers=k["bob"]).status_code == 404
    assert [s["id"] for s in client.get("/v1/sources", headers=k["bob"]).json()] == [b["id"]]
    again = upload(client, k["bob"])  # the same user again: their own record, deduplicated
    assert again["id"] == b["id"] and again["status"] == "ready"


def test_uploads_carry_the_uploaders_groups_and_only_the_owner_deletes(app_ws) -> None:
    client, _ = app_ws
    k = keys(client)
    a = settle(client, k["alice"], upload(client, k["alice"])["id"])
    assert set(a["acl_groups"]) == {"team-a", "user:alice"}
    assert client.get(f"/v1/sources/{a['id']}", headers=k["carol"]).status_code == 200
    assert client.get(f"/v1/sources/{a['id']}", headers=k["bob"]).status_code == 404
    resp = client.delete(f"/v1/sources/{a['id']}", headers=k["carol"])  # sees it, not hers
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "forbidden"
    assert client.delete(f"/v1/sources/{a['id']}", headers=k["bob"]).status_code == 404
    assert client.delete(f"/v1/sources/{a['id']}", headers=k["alice"]).status_code == 204
    d = settle(client, k["dave"], upload(client, k["dave"], b"private notes", "n.txt")["id"])
    assert d["acl_groups"] == ["user:dave"]  # no groups: private to its owner
    assert client.get(f"/v1/sources/{d['id']}", headers=k["alice"]).status_code == 404
    assert client.delete(f"/v1/sources/{d['id']}", headers=k["root"]).status_code == 204


def test_groups_and_public_need_the_right(app_ws) -> None:
    client, _ = app_ws
    k = keys(client)
    resp = client.post("/v1/sources", files={"file": ("m.md", NOTE)}, data={"acl_groups": "team-b"},
                       headers=k["alice"])  # fmt: skip
    assert resp.status_code == 422
    resp = client.post("/v1/sources", files={"file": ("m.md", NOTE)}, data={"public": "true"},
                       headers=k["alice"])  # fmt: skip
    assert resp.status_code == 403
    pub = settle(client, k["root"], upload(client, k["root"], public="true")["id"])
    assert pub["acl_groups"] == []
    assert client.get(f"/v1/sources/{pub['id']}", headers=k["bob"]).status_code == 200


def test_pending_and_failed_uploads_are_the_uploaders_only(app_ws) -> None:
    client, _ = app_ws
    k = keys(client)
    bad = upload(client, k["alice"], b"%PDF-1.7 not really a pdf", "client-secret-plan.pdf")
    assert settle(client, k["alice"], bad["id"])["status"] == "failed"
    listed = client.get("/v1/sources", headers=k["bob"]).json()
    assert all(s.get("filename") != "client-secret-plan.pdf" for s in listed)
    assert client.get(f"/v1/sources/{bad['id']}", headers=k["bob"]).status_code == 404
    mine = client.get("/v1/sources", headers=k["alice"]).json()
    assert [s["status"] for s in mine if s["id"] == bad["id"]] == ["failed"]


def test_single_user_mode_refuses_cross_origin_and_foreign_hosts(app_ws) -> None:
    client, _ = app_ws
    ok = client.post("/v1/sessions", json={}, headers={"Origin": "http://127.0.0.1"})
    assert ok.status_code == 201
    evil = client.post("/v1/sessions", json={}, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403 and evil.json()["error"]["code"] == "forbidden"
    form = client.post("/v1/sessions", content=b"title=x", headers={
        "Content-Type": "application/x-www-form-urlencoded", "Origin": "null"})  # fmt: skip
    assert form.status_code == 403
    site = client.delete("/v1/sessions/x", headers={"Sec-Fetch-Site": "cross-site"})
    assert site.status_code == 403
    rebinding = client.get("/v1/sources", headers={"Host": "attacker.example:8765"})
    assert rebinding.status_code == 403 and "host" in rebinding.json()["error"]["message"]
    assert client.get("/v1/sources", headers={"Host": "localhost:8765"}).status_code == 200


def test_keys_lift_the_single_user_guard(app_ws) -> None:
    client, _ = app_ws
    k = keys(client)
    got = client.get("/v1/sources", headers={**k["bob"], "Host": "footnote.example.org"})
    assert got.status_code == 200


def test_quotas_per_user(tmp_path: Path) -> None:
    over = {**FAST, "server": {"max_sessions_per_minute": 2, "max_runs_in_flight": 1,
                                "max_upload_mb_per_day": 0.0002}}  # fmt: skip
    ws = Workspace.open(tmp_path / "ws", overrides=over)
    app = create_app(ws, ServerDeps(ask=StubAsk(tokens=50, delay=0.05), use_models=False))
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        k = keys(client)
        s1 = client.post("/v1/sessions", json={}, headers=k["alice"]).json()["id"]
        s2 = client.post("/v1/sessions", json={}, headers=k["alice"]).json()["id"]
        third = client.post("/v1/sessions", json={}, headers=k["alice"])
        assert third.status_code == 429 and third.headers["Retry-After"]
        assert client.post("/v1/sessions", json={}, headers=k["bob"]).status_code == 201
        first = client.post(f"/v1/sessions/{s1}/messages", json={"content": "q"},
                            headers=k["alice"])  # fmt: skip
        assert first.status_code == 202
        second = client.post(f"/v1/sessions/{s2}/messages", json={"content": "q"},
                             headers=k["alice"])  # fmt: skip
        assert second.status_code == 429
        assert second.json()["error"]["detail"]["quota"] == "runs_in_flight"
        # every way to start a run takes a slot: the OpenAI endpoint and research runs too
        oai = client.post("/v1/chat/completions", headers=k["alice"], json={
            "model": "footnote", "messages": [{"role": "user", "content": "q"}]})  # fmt: skip
        assert oai.status_code == 429, oai.text
        research = client.post("/v1/research", json={"question": "What is the market size?"},
                               headers=k["alice"])  # fmt: skip
        assert research.status_code == 201, research.text
        started = client.post(f"/v1/research/{research.json()['id']}/start", json={},
                              headers=k["alice"])  # fmt: skip
        assert started.status_code == 429, started.text
        client.post(f"/v1/runs/{first.json()['run_id']}/cancel", headers=k["alice"])
        upload(client, k["alice"], b"a" * 150, "a.txt")
        big = client.post("/v1/sources", files={"file": ("b.txt", b"b" * 150)}, headers=k["alice"])
        assert big.status_code == 429  # 300 bytes would pass 0.0002 MiB (~210 bytes) today
    ws.close()


def test_a_full_model_queue_answers_429_with_retry_after(tmp_path: Path) -> None:
    """`server.max_runs_total`: runs executing for everyone together (the model queue)."""
    over = {**FAST, "server": {"max_runs_total": 1}}
    ws = Workspace.open(tmp_path / "ws", overrides=over)
    app = create_app(ws, ServerDeps(ask=StubAsk(tokens=50, delay=0.05), use_models=False))
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        k = keys(client)
        sa = client.post("/v1/sessions", json={}, headers=k["alice"]).json()["id"]
        sb = client.post("/v1/sessions", json={}, headers=k["bob"]).json()["id"]
        first = client.post(f"/v1/sessions/{sa}/messages", json={"content": "q"},
                            headers=k["alice"])  # fmt: skip
        assert first.status_code == 202
        full = client.post(f"/v1/sessions/{sb}/messages", json={"content": "q"},
                           headers=k["bob"])  # fmt: skip
        assert full.status_code == 429 and full.headers["Retry-After"] == "2"
        assert full.json()["error"]["detail"]["quota"] == "runs_total"
        client.post(f"/v1/runs/{first.json()['run_id']}/cancel", headers=k["alice"])
        wait_run(client, first.json()["run_id"], headers=k["alice"])
        again = client.post(f"/v1/sessions/{sb}/messages", json={"content": "q"},
                            headers=k["bob"])  # fmt: skip
        assert again.status_code == 202
    ws.close()


def test_internal_errors_keep_their_text_inside(app_ws) -> None:
    client, ws = app_ws
    secret = "sqlite3 at /srv/secret/path.db: disk I/O error"

    def broken(*_a: object, **_k: object) -> None:
        from footnote.errors import StoreError

        raise StoreError(secret)

    ws.chats.create_session = broken  # type: ignore[method-assign]
    resp = client.post("/v1/sessions", json={})
    assert resp.status_code == 500 and secret not in resp.text
    assert resp.json()["error"] == {"code": "internal", "message": "internal server error",
                                    "detail": None}  # fmt: skip


def test_id_prefixes_and_paths_reveal_nothing_of_other_users(app_ws, tmp_path: Path) -> None:
    """Source references given over HTTP resolve only among the caller's readable sources,
    and never as server paths: before, a one-letter prefix answered 'matches N sources'
    (counting everyone's) and a path answered whether that file exists on the server."""
    client, ws = app_ws
    k = keys(client)
    for i in range(20):  # 20 ids over 16 first hex digits: some first digit repeats
        (tmp_path / f"n{i}.md").write_text(f"# Note {i}\n\nPrivate note number {i}.\n")
    assert not ws.ingest([tmp_path], acl_groups=("team-a",), index=False).failed
    probes = [*"0123456789abcdef", "~nobody", str(tmp_path / "n1.md"), "/etc/passwd"]
    for ref in probes:
        for resp in (
            client.get(f"/v1/sources/{ref}/crosschecks", headers=k["bob"]),
            client.post(
                f"/v1/sessions/{client.post('/v1/sessions', json={}, headers=k['bob']).json()['id']}/messages",
                json={"content": "q", "sources": [ref]},
                headers=k["bob"],
            ),
        ):
            assert resp.status_code in (404, 422), (ref, resp.status_code, resp.text)
            text = resp.text
            assert "matches" not in text and "ingested" not in text, (ref, text)
