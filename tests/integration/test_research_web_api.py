"""What the web app's research page needs from `/v1/research`: whether web search is on offer
(it is not without a provider), a budget and a choice of library sources that the run obeys,
each run's options in its listing, and a run started over HTTP listed by the CLI."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from research_support import MARKET_Q, web_settings
from typer.testing import CliRunner

from footnote.cli import app
from footnote.eval.fixture_web import FixtureWeb
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration
GROWTH_Q = "How fast did the recycling market grow?"


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


@contextlib.contextmanager
def _client(ws: Workspace) -> Iterator[TestClient]:
    with TestClient(
        create_app(ws, ServerDeps(use_models=False)),
        base_url="http://127.0.0.1",
        raise_server_exceptions=False,
    ) as c:
        yield c


def _wait(client: TestClient, run_id: str) -> dict[str, Any]:
    for _ in range(600):
        out: dict[str, Any] = client.get(f"/v1/research/{run_id}").json()
        if out["state"] in ("completed", "wrapped_up", "failed"):
            return out
        time.sleep(0.05)
    raise AssertionError(f"run stuck in {out['state']}")


def _library(tmp_path: Path, web: FixtureWeb | None) -> Workspace:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text(
        "# Alpha\n\nThe alpha report says the recycling market grew by 11% in 2023.\n"
    )
    (docs / "beta.md").write_text(
        "# Beta\n\nThe beta report says the recycling market grew by 19% in 2023.\n"
    )
    overrides: dict[str, Any] = (
        web_settings(web)
        if web
        else {"models": {"judge": {"url": ""}, "compose": {"url": ""}, "understand": {"url": ""}}}
    )
    overrides["models"]["embed"] = {"url": "local:wordllama"}
    overrides.setdefault("research", {}).update({"writer": "extractive", "select": "rules"})
    ws = Workspace.open(tmp_path / "ws", overrides=overrides)
    ws.ingest([docs / "alpha.md", docs / "beta.md"])
    return ws


def test_no_web_provider_no_web_search(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "ws", overrides={"models": {"judge": {"url": ""}}})
    with _client(ws) as c:
        options = c.get("/v1/research/options").json()
        assert options["web"] is False and options["web_providers"] == []
        run = c.post("/v1/research", json={"question": MARKET_Q}).json()
        assert run["options"]["web"] is False
        assert not any(i["standard"]["web"] for i in run["outline"]["items"])
        asked = c.post("/v1/research", json={"question": MARKET_Q, "web": True})
        assert asked.status_code == 422 and "search_url" in asked.text
    ws.close()


def test_a_configured_provider_is_offered(tmp_path: Path, web: FixtureWeb) -> None:
    ws = Workspace.open(tmp_path / "ws", overrides=web_settings(web, budget_tokens=9000))
    with _client(ws) as c:
        options = c.get("/v1/research/options").json()
        assert options["web"] is True and options["web_providers"] == ["searxng"]
        assert options["budget_tokens"] == 9000 and options["budget_minutes"] > 0
        run = c.post("/v1/research", json={"question": MARKET_Q}).json()
        assert run["options"]["web"] is True
        assert any(i["standard"]["web"] for i in run["outline"]["items"])
        off = c.post("/v1/research", json={"question": MARKET_Q, "web": False}).json()
        assert off["options"]["web"] is False
    ws.close()


def test_chosen_sources_and_budget_are_what_the_run_uses(tmp_path: Path) -> None:
    ws = _library(tmp_path, None)
    alpha, beta = sorted((r.source for r in ws.store.list_sources()), key=lambda s: s.title)
    assert "alpha" in alpha.title.lower()
    with _client(ws) as c:
        for chosen, seen, unseen in ((alpha, "11%", "19%"), (beta, "19%", "11%")):
            run = c.post(
                "/v1/research",
                json={"question": GROWTH_Q, "template": "market_size", "budget_tokens": 4000,
                      "budget_minutes": 2, "source_ids": [chosen.id]},
            ).json()  # fmt: skip
            assert run["options"]["source_ids"] == [chosen.id]
            assert run["options"]["budget_tokens"] == 4000
            assert run["options"]["budget_minutes"] == 2
            items = [i for i in run["outline"]["items"] if i["id"] == "growth"]
            c.post(f"/v1/research/{run['id']}/start", json={"outline": {"items": items}})
            assert _wait(c, run["id"])["state"] in ("completed", "wrapped_up")
            snippets = " ".join(
                x["snippet"] for x in c.get(f"/v1/research/{run['id']}/cards").json()
            )
            assert seen in snippets and unseen not in snippets
            listed = {r["id"]: r for r in c.get("/v1/research").json()}
            assert listed[run["id"]]["options"]["budget_tokens"] == 4000
            assert listed[run["id"]]["options"]["used"]["tokens"] >= 0
        unknown = c.post("/v1/research", json={"question": GROWTH_Q, "source_ids": ["nope"]})
        assert unknown.status_code == 422 and "no source 'nope' in your library" in unknown.text
    ws.close()


def test_a_source_the_caller_may_not_see_cannot_be_chosen(tmp_path: Path) -> None:
    ws = Workspace.open(
        tmp_path / "ws", overrides={"models": {"embed": {"url": "local:wordllama"}}}
    )
    doc = tmp_path / "secret.md"
    doc.write_text("# Secret\n\nThe board memo says the market grew by 19% in 2023.\n")
    ws.ingest([doc], acl_groups=("board",))
    (secret,) = (r.source for r in ws.store.list_sources())
    key = ws.auth.add_key("alice", groups=("staff",))
    with _client(ws) as c:
        asked = c.post(
            "/v1/research",
            json={"question": GROWTH_Q, "source_ids": [secret.id]},
            headers={"Authorization": f"Bearer {key}"},
        )
        assert asked.status_code == 422 and f"no source {secret.id!r} in your library" in asked.text
    ws.close()


def test_a_run_started_over_http_is_listed_by_the_cli(tmp_path: Path) -> None:
    from footnote.workspace.research import research_runs

    folder = tmp_path / "ws"
    ws = Workspace.open(folder, overrides={"models": {"judge": {"url": ""}}})
    key = ws.auth.add_key("alice")
    with _client(ws) as c:
        run = c.post(
            "/v1/research", json={"question": MARKET_Q},
            headers={"Authorization": f"Bearer {key}"},
        ).json()  # fmt: skip
    assert [(r.id, r.user_id) for r in research_runs(ws)] == [(run["id"], "alice")]
    assert research_runs(ws, user_id="bob") == []
    ws.close()
    listed = CliRunner().invoke(app, ["research", "ls", "--json", "-w", str(folder)])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    assert [(r["id"], r["user"]) for r in rows] == [(run["id"], "alice")]
    bob = CliRunner().invoke(app, ["research", "ls", "--user", "bob", "--json", "-w", str(folder)])
    assert bob.exit_code == 0 and json.loads(bob.stdout) == []
