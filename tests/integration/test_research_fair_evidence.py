"""Chapters share a small library fairly: every chapter first gathers its first share of
cards, and only then do chapters grow towards what `research.target_pages` asks for. Through
the real pipeline over a real library (SQLite store, the search index, the checks), no model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from research_support import MARKET_Q, collect, of_type, site_review

from footnote.events import Event
from footnote.pipelines.research.length import MIN_CARDS
from footnote.pipelines.research.models import ResearchModels
from footnote.serialize import to_plain
from footnote.workspace import Workspace
from footnote.workspace.research import (
    ResearchParts,
    confirm_outline,
    research_store,
    run_research,
    start_research,
)

QUESTION = MARKET_Q


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return site_review(tmp_path_factory.mktemp("docs"))


def _run(path: Path, library: Path, only: str | None = None, depends: bool = False,
         **research: Any) -> tuple[Workspace, str, list[Event]]:  # fmt: skip
    ws = Workspace.open(path, overrides={
        "research": {"allowed_domains": [], **research},
        "models": {"embed": {"url": "local:wordllama"}, "judge": {"url": ""},
                   "compose": {"url": ""}, "understand": {"url": ""}}})  # fmt: skip
    ws.ingest([library])
    run_id, outline = start_research(ws, QUESTION, web=False)
    items = [to_plain(i) for i in outline.items if only in (None, i.id)]
    if depends:  # the growth chapter waits for the size chapter's cards
        items = [{**i, "depends_on": ["size"]} if i["id"] == "growth" else i for i in items]
    confirm_outline(ws, run_id, {"items": items})
    return ws, run_id, collect(ws, run_id)


def _per_chapter(events: list[Event]) -> list[int]:
    """Cards each chapter gathered, in the plan's order."""
    got: dict[str, int] = {}
    for e in of_type(events, "card"):
        got[e.card.sub_question] = got.get(e.card.sub_question, 0) + 1
    return [got.get(sq.id, 0) for sq in of_type(events, "plan")[0].sub_questions]


def test_no_chapter_is_left_without_the_evidence_the_library_holds_for_it(
    tmp_path: Path, library: Path
) -> None:
    _ws, _run_id, events = _run(tmp_path / "default", library)
    default = _per_chapter(events)
    _ws, _run_id, short_events = _run(tmp_path / "short", library, target_pages=1)
    short = _per_chapter(short_events)
    ids = [sq.item_id for sq in of_type(events, "plan")[0].sub_questions]
    alone = {i: sum(_per_chapter(_run(tmp_path / f"alone-{i}", library, only=i)[2])) for i in ids}
    assert all(alone.values())  # the library holds evidence for every chapter
    assert all(default), f"a chapter got no cards: {dict(zip(ids, default, strict=True))}"
    # fairer: the poorest chapter has no fewer cards than when nobody grows, none takes half
    assert min(default) >= min(short) and max(default) < sum(default) / 2
    # and every chapter gets its first share when the library still holds it
    assert all(n >= min(MIN_CARDS, alone[i], min(short)) for i, n in zip(ids, default, strict=True))
    assert sum(default) > sum(short)  # chapters still grow past six cards where evidence remains


def test_the_shares_are_deterministic_and_dependencies_wait(tmp_path: Path, library: Path) -> None:
    ws, run_id, first = _run(tmp_path / "one", library, depends=True)
    _ws2, _run_id2, second = _run(tmp_path / "two", library, depends=True)
    assert [e.card.id for e in of_type(first, "card")] == [
        e.card.id for e in of_type(second, "card")
    ]
    order = [(e.type, e.sub_question.id if e.type == "subquestion_start" else e.sub_question_id)
             for e in first if e.type in ("subquestion_start", "subquestion_stop")]  # fmt: skip
    size_stops = [n for n, o in enumerate(order) if o == ("subquestion_stop", "sq-size")]
    growth_starts = [n for n, o in enumerate(order) if o == ("subquestion_start", "sq-growth")]
    assert len(size_stops) >= len(growth_starts) >= 2  # chapters gather in more than one round
    # in each round the dependent chapter starts after its dependency stopped
    assert all(s < g for s, g in zip(size_stops, growth_starts, strict=False))
    # the stored record of a chapter holds all its cards, once each
    store = research_store(ws)
    for sq in of_type(first, "plan")[0].sub_questions:
        record = store.get_artifact(run_id, "investigate", sq.id) or {}
        mine = [e.card.id for e in of_type(first, "card") if e.card.sub_question == sq.id]
        assert record["card_ids"] == mine and not record.get("grow")
    assert of_type(first, "brief")


def test_growing_keeps_each_chapter_within_its_budget(tmp_path: Path, library: Path) -> None:
    ws, run_id, events = _run(tmp_path / "tight", library, budget_searches=24)
    store = research_store(ws)
    for sq in of_type(events, "plan")[0].sub_questions:
        record = store.get_artifact(run_id, "investigate", sq.id) or {}
        assert record["used"]["searches"] <= sq.budget["searches"]
    (brief,) = of_type(events, "brief")
    assert brief.brief.budget_used["searches"] <= 24


def test_a_run_stopped_between_rounds_resumes_where_it_stopped(
    tmp_path: Path, library: Path
) -> None:
    ws, run_id, whole = _run(tmp_path / "whole", library)
    chapters = len(of_type(whole, "plan")[0].sub_questions)
    store = research_store(ws)
    expected = {
        k: (r["card_ids"], r["searches"]) for k, r in store.artifacts(run_id, "investigate")
    }

    ws2 = Workspace.open(tmp_path / "stopped", overrides={
        "research": {"allowed_domains": []},
        "models": {"embed": {"url": "local:wordllama"}, "judge": {"url": ""},
                   "compose": {"url": ""}, "understand": {"url": ""}}})  # fmt: skip
    ws2.ingest([library])
    run2, _ = start_research(ws2, QUESTION, web=False)
    confirm_outline(ws2, run2)

    async def until_round_three() -> None:  # the run stops as the third round starts
        events = run_research(ws2, run2, ResearchParts(models=ResearchModels()))
        starts: dict[str, int] = {}
        async for e in events:
            if e.type == "subquestion_start":
                starts[e.sub_question.id] = starts.get(e.sub_question.id, 0) + 1
                if starts[e.sub_question.id] == 3:
                    break
        await events.aclose()  # type: ignore[attr-defined]

    asyncio.run(until_round_three())
    stored = [r for _k, r in research_store(ws2).artifacts(run2, "investigate")]
    assert len(stored) == chapters and any(r.get("grow") and r["round"] == 1 for r in stored)
    rest = collect(ws2, run2)
    assert of_type(rest, "brief")
    assert len(of_type(rest, "subquestion_start")) < len(of_type(whole, "subquestion_start"))
    resumed = {k: (r["card_ids"], r["searches"])
               for k, r in research_store(ws2).artifacts(run2, "investigate")}  # fmt: skip
    assert resumed == expected  # no round is redone or skipped: the same cards, the same searches
