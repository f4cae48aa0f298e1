"""`/v1/research/{id}/review` over HTTP: the review view, decisions, an edit re-checked, ticks,
conflict resolutions, the sign-off (409 with its reasons until the figures are ticked and the
conflicts resolved), the audit log, exports, and nothing of it for another user."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from research_support import MARKET_Q, parts, web_settings

from footnote.eval.fixture_web import FixtureWeb
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def brief_run(c: TestClient, headers: dict[str, str]) -> str:
    run = c.post("/v1/research", json={"question": MARKET_Q}, headers=headers).json()
    items = [i for i in run["outline"]["items"] if i["id"] in ("size", "growth")]
    started = c.post(f"/v1/research/{run['id']}/start", json={"outline": {"items": items}},
                     headers=headers)  # fmt: skip
    assert started.status_code == 202
    with c.stream("GET", started.json()["stream_url"], headers=headers) as resp:
        for _ in resp.iter_lines():
            pass
    return str(run["id"])


def test_review_and_sign_off_over_http(tmp_path: Path, web: FixtureWeb) -> None:
    ws = Workspace.open(tmp_path / "ws", overrides=web_settings(web, writer="extractive"))
    alice, bob = ws.auth.add_key("alice"), ws.auth.add_key("bob")
    a, b = {"X-API-Key": alice}, {"X-API-Key": bob}
    with TestClient(create_app(ws, ServerDeps(use_models=False, research=parts())),
                    base_url="http://127.0.0.1", raise_server_exceptions=False) as c:  # fmt: skip
        run_id = brief_run(c, a)
        base = f"/v1/research/{run_id}"
        for path in ("/review", "/review/log", "/export"):
            assert c.get(base + path, headers=b).status_code == 404
        assert c.post(base + "/review/signoff", headers=b).status_code == 404
        view: dict[str, Any] = c.get(base + "/review", headers=a).json()
        claims = [cl for s in view["sections"] for cl in s["claims"]]
        blocked = c.post(base + "/review/signoff", headers=a)
        assert blocked.status_code == 409 and "key number not ticked" in blocked.text
        plain = next(cl for cl in claims if cl["kind"] == "claim")
        resp = c.post(base + f"/review/claims/{plain['id']}", headers=a,
                      json={"action": "edit", "text": "It grew 999% in 2023."})  # fmt: skip
        assert resp.status_code == 200 and resp.json()["result"]["accepted"] is False
        assert c.post(base + "/review/claims/nope", headers=a,
                      json={"action": "approve"}).status_code == 404  # fmt: skip
        for cl in claims:
            assert c.post(base + "/review/seen", json={"claim_id": cl["id"]}, headers=a).json()[
                "first_time"
            ]
            c.post(base + f"/review/claims/{cl['id']}", json={"action": "approve"}, headers=a)
            if cl["key_number"]:
                c.post(base + f"/review/ticks/{cl['id']}", json={}, headers=a)
        for conflict in view["conflicts"]:
            r = c.post(base + f"/review/conflicts/{conflict['id']}", headers=a,
                       json={"resolution": "choose", "card_id": conflict["values"][0]["card_id"]})  # fmt: skip
            assert r.status_code == 200
        for group in view["origins"]:
            r = c.post(base + f"/review/origins/{group['id']}", headers=a,
                       json={"decision": "same", "reason": "one figure, one origin"})  # fmt: skip
            assert r.status_code == 200
        signed = c.post(base + "/review/signoff", headers=a)
        assert signed.status_code == 201, signed.text
        out = signed.json()
        assert out["reviewer"] == "alice" and out["version"] == 1
        assert out["coverage"]["approved"] == len(claims)
        after = c.get(base + "/review", headers=a).json()
        assert after["review"]["state"] == "signed"
        log = c.get(base + "/review/log", headers=a).json()
        assert log["verified"] and log["entries"][-1]["action"] == "sign_off"
        assert {e["actor"] for e in log["entries"]} == {"alice"}
        dl = c.get(base + "/review/log", params={"download": True}, headers=a)
        assert "attachment" in dl.headers["content-disposition"]
        md = c.get(base + "/export", params={"format": "markdown"}, headers=a)
        assert md.status_code == 200 and "SIGNED OFF" in md.text
        assert md.headers["content-type"].startswith("text/markdown")
        assert c.get(base + "/export", params={"version": 2}, headers=a).status_code == 404
        assert c.get(base + "/export", params={"format": "rtf"}, headers=a).status_code == 422
    ws.close()
