"""Every `research.*` setting does something: the ones the pipeline tests do not already show."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from api_servers import S2, ApiServer, json_route
from research_support import MARKET_Q, collect, of_type, open_ws

from footnote.config import ResearchSettings
from footnote.errors import ConfigError
from footnote.eval.fixture_web import FixtureWeb
from footnote.ingest.web.search import BraveSearch, SearxngSearch
from footnote.workspace.research import (
    confirm_outline,
    fetcher,
    licensed_database,
    paper_search,
    research_models,
    research_store,
    start_research,
    web_search,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def test_provider_and_fetch_settings_are_what_gets_built(monkeypatch: pytest.MonkeyPatch) -> None:
    assert web_search(ResearchSettings()) is None and fetcher(ResearchSettings()) is None
    assert isinstance(
        web_search(ResearchSettings(search_url="searxng+http://127.0.0.1:1")), SearxngSearch
    )
    with pytest.raises(ConfigError, match="MY_BRAVE"):
        web_search(
            ResearchSettings(search_url="brave+https://api.example", search_api_key_env="MY_BRAVE")
        )
    monkeypatch.setenv("MY_BRAVE", "k")
    assert isinstance(web_search(ResearchSettings(search_url="brave+https://api.example",
                                                  search_api_key_env="MY_BRAVE")), BraveSearch)  # fmt: skip
    with pytest.raises(ConfigError, match="expected searxng"):
        web_search(ResearchSettings(search_url="google+https://x"))
    f = fetcher(ResearchSettings(allowed_domains=("example",), allow_loopback=True, resolve={"a.example": "127.0.0.1"},
                                 fetch_max_bytes=2048, fetch_timeout_s=3.0, max_redirects=1))  # fmt: skip
    assert f is not None
    p = f.policy
    assert (
        p.allowed_domains,
        p.allow_loopback,
        dict(p.resolve),
        p.max_bytes,
        p.timeout_s,
        p.max_redirects,
    ) == (("example",), True, {"a.example": "127.0.0.1"}, 2048, 3.0, 1)
    with pytest.raises(ConfigError, match="no-external-model"):
        licensed_database(ResearchSettings(licensed_url="http://x", licensed_labels=("internal",)))


def test_semantic_scholar_key_from_its_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    srv = ApiServer({"/graph/v1/paper/search": json_route(S2)})
    monkeypatch.setenv("S2_KEY_TEST", "s2-secret")
    try:
        (s2,) = paper_search(
            ResearchSettings(scholarly=(f"s2+{srv.base}",), scholarly_api_key_env="S2_KEY_TEST")
        )
        s2.search("graph", 1)
        assert srv.seen[-1][2]["x-api-key"] == "s2-secret"
    finally:
        srv.stop()


def test_mode_setting_makes_baseline_runs(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web, mode="baseline")
    run_id, _ = start_research(ws, MARKET_Q)
    confirm_outline(ws, run_id)
    brief = collect(ws, run_id)[-1].brief
    assert brief.mode == "baseline"


def test_writer_model_needs_a_bound_compose_role(tmp_path: Path, web: FixtureWeb) -> None:
    with pytest.raises(ConfigError, match="compose"):
        research_models(open_ws(tmp_path / "a", web, writer="model"), "run_x")
    assert (
        research_models(open_ws(tmp_path / "b", web, writer="extractive"), "run_x").writer is None
    )


@pytest.mark.parametrize("parallel", [1, 2])
def test_parallel_workers(tmp_path: Path, web: FixtureWeb, parallel: int) -> None:
    ws = open_ws(tmp_path / "ws", web, parallel=parallel)
    run_id, _ = start_research(ws, MARKET_Q)
    confirm_outline(ws, run_id)
    kinds = [
        e.type for e in collect(ws, run_id) if e.type in ("subquestion_start", "subquestion_stop")
    ]
    assert kinds[:2] == (
        ["subquestion_start", "subquestion_stop"] if parallel == 1 else ["subquestion_start"] * 2
    )


def test_sizes_reserve_and_sample_rate(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web, cards_per_question=2, results_per_search=2, fetches_per_search=1,
                 reserve_fraction=0.5, review_sample_rate=0.4)  # fmt: skip
    run_id, _ = start_research(ws, MARKET_Q, budget_tokens=60_000)
    confirm_outline(ws, run_id)
    events = collect(ws, run_id)
    assert all(s.cards <= 2 for s in of_type(events, "subquestion_stop"))
    assert events[-1].brief.budget_used["fetches"] <= 6  # one fetch per search
    plan = research_store(ws).get_artifact(run_id, "plan")
    assert (
        plan is not None and plan["sub_questions"][0]["budget"]["tokens"] == 5000
    )  # 60k × 0.5 / 6
    assert events[-1].brief.sample_rate == 0.4


def test_library_k_is_the_depth_of_library_searches(tmp_path: Path, web: FixtureWeb) -> None:
    from footnote.models.budget import Budget
    from footnote.pipelines.research.sources import SourceLog, Sources

    asked: list[int] = []
    ws = open_ws(tmp_path / "ws", web, library_k=7)
    sources = Sources(store=ws.store, research=research_store(ws), settings=ws.settings.research,
                      ingest=ws.settings.ingest, library=lambda _q, k, _f: asked.append(k) or [])  # fmt: skip
    sources.search_library("anything", Budget(), SourceLog())
    assert asked == [7]
