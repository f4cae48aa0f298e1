"""Research briefs with real models (slow): the embedded model from the CLI, and the
OpenAI-compatible server on loopback (llama-cpp-python's, the 0.5B model) through the API —
chosen by config alone. Every citation must resolve to a card of its chapter whose snippet is
the text at its span, whatever the model writes."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from llama_server import LlamaServer
from research_support import MARKET_Q
from typer.testing import CliRunner

from footnote.cli import app
from footnote.eval.fixture_web import FixtureWeb
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace
from footnote.workspace.research import research_store

pytestmark = [pytest.mark.slow, pytest.mark.integration]
OUTLINE = {"items": [
    {"id": "size", "title": "Market size", "asks": "How large is the market, in which currency and year, by whose estimate?",
     "standard": {"min_independent": 1, "web": True}},
    {"id": "growth", "title": "Growth", "asks": "How fast is the market expected to grow, and according to whom?",
     "standard": {"min_independent": 1, "web": True}},
]}  # fmt: skip


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def research_cfg(web: FixtureWeb) -> dict[str, Any]:
    return {"search_url": f"searxng+{web.base}", "allowed_domains": ["example"], "allow_loopback": True,
            "resolve": {"*.example": "127.0.0.1"}, "select": "model", "writer": "model",
            "target_pages": 1}  # fmt: skip  # a short brief: the test is that the model works


def assert_grounded(ws: Workspace, brief: dict[str, Any]) -> None:
    store = research_store(ws)
    cards = {c["id"]: c for c in brief["cards"]}
    claims = [c for s in brief["sections"] for c in s["claims"]]
    assert claims, "the model's brief kept no claim"
    for s in brief["sections"]:
        for claim in s["claims"]:
            assert claim["verdict"] in ("supported", "weak")
            for cid in claim["card_ids"]:
                assert cid in s["bound_cards"]
                card = cards[cid]
                snap = store.get_snapshot(card["snapshot_id"])
                a, b = card["span"]
                assert snap is not None and snap.text[a:b] == card["snippet"]


def test_cli_brief_with_the_embedded_model(
    tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("llama_cpp")
    folder = tmp_path / "ws"
    folder.mkdir()
    cfg = research_cfg(web)
    lines = ["[research]"] + [f"{k} = {json.dumps(v)}" for k, v in cfg.items() if k != "resolve"]
    lines += ['resolve = {"*.example" = "127.0.0.1"}', "[models.embed]", 'url = "local:wordllama"']
    (folder / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    outline = tmp_path / "outline.json"
    outline.write_text(json.dumps(OUTLINE), encoding="utf-8")
    t0 = time.time()
    result = CliRunner().invoke(
        app, ["research", MARKET_Q, "--outline", str(outline), "--json", "-w", str(folder)]
    )
    assert result.exit_code == 0, result.output
    brief = json.loads(result.stdout)
    with Workspace.open(folder) as ws:
        assert_grounded(ws, brief)
    used = brief["budget_used"]
    assert used["calls"] >= 3 and used["tokens"] > 0  # the model selected, wrote and judged
    print(f"embedded brief: {used} in {time.time() - t0:.0f} s")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    from llama_server import gguf_05b

    srv = LlamaServer(gguf_05b(), tmp_path_factory.mktemp("llsrv") / "server.log")
    yield srv
    srv.stop()


def test_api_brief_against_the_openai_compatible_server(
    tmp_path: Path, web: FixtureWeb, server: LlamaServer
) -> None:
    url = {"url": server.url, "timeout_s": 180}
    ws = Workspace.open(tmp_path / "ws", overrides={
        "research": research_cfg(web),
        "models": {"embed": {"url": "local:wordllama"}, "compose": url, "understand": url, "judge": url},
    })  # fmt: skip
    with TestClient(
        create_app(ws, ServerDeps(use_models=False)),
        base_url="http://127.0.0.1",
        raise_server_exceptions=False,
    ) as client:
        run = client.post(
            "/v1/research", json={"question": MARKET_Q, "confirm": True, "outline": OUTLINE}
        ).json()
        with client.stream("GET", run["stream_url"]) as resp:
            body = "".join(resp.iter_text())
        assert "event: brief" in body, body[-2000:]
        brief = client.get(run["brief_url"]).json()
    assert_grounded(ws, brief)
    assert brief["budget_used"]["calls"] >= 3
    ws.close()
