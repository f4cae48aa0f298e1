"""`/v1/research` end to end: outline proposed, confirmed (or edited) before any search, the run
streamed as typed SSE through the run hub, the brief as JSON and Markdown, cards, snapshots and
artifacts readable by their owner only."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from research_support import MARKET_Q, parts, role, web_settings, writer_script

from footnote.eval.fixture_web import FixtureWeb
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration


def parse_sse(lines: Iterable[str]) -> list[dict[str, Any]]:
    frames, cur = [], {}
    for line in lines:
        if not line:
            if "event" in cur:
                frames.append(cur)
            cur = {}
        elif line.startswith("id:"):
            cur["id"] = int(line[3:].strip())
        elif line.startswith("event:"):
            cur["event"] = line[6:].strip()
        elif line.startswith("data:"):
            cur["data"] = json.loads(line[5:].strip())
    return frames


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


@pytest.fixture()
def client(tmp_path: Path, web: FixtureWeb) -> Iterator[TestClient]:
    ws = Workspace.open(tmp_path / "ws", overrides=web_settings(web))
    deps = ServerDeps(use_models=False, research=parts(writer=role("compose", writer_script())))
    with TestClient(
        create_app(ws, deps), base_url="http://127.0.0.1", raise_server_exceptions=False
    ) as c:
        yield c
    ws.close()


def wait_state(client: TestClient, run_id: str, states: set[str]) -> dict[str, Any]:
    for _ in range(200):
        out: dict[str, Any] = client.get(f"/v1/research/{run_id}").json()
        if out["state"] in states:
            return out
        time.sleep(0.05)
    raise AssertionError(f"run stuck in {out['state']}")


def test_propose_confirm_stream_and_read(client: TestClient, web: FixtureWeb) -> None:
    before = len(web.requests)
    created = client.post("/v1/research", json={"question": MARKET_Q, "budget_tokens": 20000})
    assert created.status_code == 201
    run = created.json()
    assert run["state"] == "outline_proposed" and len(run["outline"]["items"]) == 6
    assert len(web.requests) == before  # proposing searches nothing
    items = [i for i in run["outline"]["items"] if i["id"] in ("size", "growth")]
    started = client.post(f"/v1/research/{run['id']}/start", json={"outline": {"items": items}})
    assert started.status_code == 202
    with client.stream("GET", started.json()["stream_url"]) as resp:
        assert resp.headers["content-type"].startswith("text/event-stream")
        frames = parse_sse(resp.iter_lines())
    kinds = [f["event"] for f in frames]
    for kind in ("outline", "plan", "subquestion_start", "subquestion_stop", "card", "conflict",
                 "draft", "check", "checklist", "budget", "brief"):  # fmt: skip
        assert kind in kinds, kind
    assert kinds[-1] == "done"
    stops = [f["data"] for f in frames if f["event"] == "subquestion_stop"]
    assert {s["stop_reason"] for s in stops} <= {
        "done",
        "budget_tokens",
        "budget_searches",
        "budget_fetches",
        "budget_time",
        "budget_calls",
    }
    brief = next(f["data"]["brief"] for f in frames if f["event"] == "brief")
    assert [s["item_id"] for s in brief["sections"]] == ["size", "growth"]
    assert wait_state(client, run["id"], {"completed", "wrapped_up"})
    assert client.get(f"/v1/research/{run['id']}/brief").json()["run_id"] == run["id"]
    md = client.get(f"/v1/research/{run['id']}/brief", params={"format": "markdown"})
    assert md.headers["content-type"].startswith("text/markdown") and "## Checklist" in md.text
    cards = client.get(f"/v1/research/{run['id']}/cards").json()
    snap_id = next(c["snapshot_id"] for c in cards if c["snapshot_id"])
    snap = client.get(f"/v1/research/{run['id']}/snapshots/{snap_id}").json()
    assert snap["sha256"] and snap["final_url"] and snap["text"]
    assert client.get(f"/v1/research/{run['id']}/snapshots/deadbeefdeadbeef").status_code == 404
    merge = client.get(f"/v1/research/{run['id']}/artifacts/merge").json()
    assert merge and "independence" in merge[0]["data"]
    # the outline cannot change once the run has started
    again = client.post(f"/v1/research/{run['id']}/start", json={})
    assert again.status_code == 409


def test_other_users_see_nothing(tmp_path: Path, web: FixtureWeb) -> None:
    ws = Workspace.open(tmp_path / "ws", overrides=web_settings(web))
    alice, bob = ws.auth.add_key("alice"), ws.auth.add_key("bob")
    with TestClient(
        create_app(ws, ServerDeps(use_models=False, research=parts())),
        base_url="http://127.0.0.1",
        raise_server_exceptions=False,
    ) as c:
        run = c.post(
            "/v1/research", json={"question": MARKET_Q}, headers={"X-API-Key": alice}
        ).json()
        for path in ("", "/brief", "/cards", "/artifacts/outline"):
            assert (
                c.get(f"/v1/research/{run['id']}{path}", headers={"X-API-Key": bob}).status_code
                == 404
            )
        assert (
            c.post(
                f"/v1/research/{run['id']}/start", json={}, headers={"X-API-Key": bob}
            ).status_code
            == 404
        )
        assert c.get("/v1/research", headers={"X-API-Key": bob}).json() == []
        bad = c.post(
            "/v1/research",
            json={"question": MARKET_Q, "template": "horoscope"},
            headers={"X-API-Key": alice},
        )
        assert (
            bad.status_code == 422 and "unknown report template" in bad.json()["error"]["message"]
        )
    ws.close()
