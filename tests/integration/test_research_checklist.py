"""The checklist and the brief say what happened (#32 item 6, #30 finding 3), end to end on the
fixture web with scripted models behind the real RoleModel: a conflict sits in every chapter
it touches; an item never searched is "not searched (budget)", one searched in vain lists its
queries; the review sample's seed is logged; baseline mode uses the judge; and where no judge
was used, every rendering of the brief says so (Markdown, the HTML export, the review view)."""

from __future__ import annotations

from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import pytest
from research_support import collect, of_type, open_ws, parts, role, run_all, writer_script

from footnote.eval.fixture_web import FixtureWeb
from footnote.models.judge import judge_support
from footnote.pipelines.research.markdown import brief_markdown
from footnote.workspace.export import export_brief
from footnote.workspace.research import confirm_outline, research_store, start_research
from footnote.workspace.review import review_view

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def test_a_conflict_is_in_every_chapter_it_touches(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web)
    _run_id, events = run_all(ws, research_parts=parts(writer=role("compose", writer_script())))
    brief = events[-1].brief
    bound = {s.item_id: set(s.bound_cards) for s in brief.sections}
    assert brief.conflicts
    for conflict in brief.conflicts:
        touched = {i for i, cards in bound.items() if {v.card_id for v in conflict.values} & cards}
        assert set(conflict.item_ids) == touched
    shared = [c for c in brief.conflicts if len(c.item_ids) >= 2]
    assert shared, "the fixture has a forecast two chapters cite"
    states = {c.item_id: c.state for c in brief.checklist}
    md = brief_markdown(brief)
    for item_id in shared[0].item_ids:
        assert states[item_id] == "conflicting"
        title = next(s.title for s in brief.sections if s.item_id == item_id)
        chapter = md.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
        assert f"Sources disagree: {shared[0].metric}" in chapter
    html = export_brief(ws, _run_id, "html")[0].decode()
    assert html.count(escape(f"Sources disagree: {shared[0].metric}")) == len(shared[0].item_ids)


def test_not_searched_is_not_searched_nothing_found(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web, budget_searches=4)
    _run_id, events = run_all(ws)
    reasons = {c.item_id: c.reasons for c in events[-1].brief.checklist}
    skipped = [i for i, r in reasons.items() if "not searched (budget)" in r]
    assert skipped
    assert not any("nothing found" in r for i in skipped for r in reasons[i])
    assert not any("no evidence was found" in r for rs in reasons.values() for r in rs)
    empty = [r for rs in reasons.values() for r in rs if r.startswith("searched, nothing found")]
    assert all("(queries: “" in r for r in empty)


def test_the_review_sample_seed_is_logged_and_kept_on_resume(
    tmp_path: Path, web: FixtureWeb
) -> None:
    ws = open_ws(tmp_path / "ws", web)

    def crash(_messages: object) -> str:
        raise RuntimeError("the writer process died")

    run_id, _ = start_research(ws, "How large is Veldmark's battery recycling market?")
    confirm_outline(ws, run_id)
    with pytest.raises(RuntimeError, match="died"):
        collect(ws, run_id, parts(writer=role("compose", crash)))
    seed = research_store(ws).get_research(run_id).options["review_seed"]
    events = collect(ws, run_id)  # resumed: the same sample
    (status,) = [e for e in of_type(events, "status") if "seed" in e.message]
    assert f"seed {seed}" in status.message
    assert research_store(ws).get_research(run_id).options["review_seed"] == seed
    again, _ = run_all(ws)
    assert research_store(ws).get_research(again).options["review_seed"] != seed  # per brief


def _judge(calls: list[str]) -> Any:
    def reply(messages: Any) -> str:
        calls.append(messages[-1].content)
        return "yes"

    return role("judge", reply)


def test_baseline_mode_uses_the_judge(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web)
    calls: list[str] = []
    writer = role("compose", writer_script())
    _run_id, events = run_all(ws, research_parts=parts(writer=writer, judge=_judge(calls),
                                                      judge_support=judge_support), mode="baseline")  # fmt: skip
    brief = events[-1].brief
    assert brief.mode == "baseline" and brief.sections[0].claims
    assert calls, "the baseline's claims went to the judge"
    assert "judge not used" not in brief_markdown(brief).lower()


@pytest.mark.parametrize("mode", ["brief", "baseline"])
def test_every_rendering_says_the_judge_was_not_used(
    tmp_path: Path, web: FixtureWeb, mode: str
) -> None:
    ws = open_ws(tmp_path / "ws", web)
    run_id, outline = start_research(ws, "How large is Veldmark's battery recycling market?",
                                     template="market_size", mode=mode)  # fmt: skip
    confirm_outline(ws, run_id, {"items": [{"id": "size", "title": "Market size",
                                            "asks": outline.items[0].asks}]})  # fmt: skip
    events = collect(ws, run_id, parts(writer=role("compose", writer_script())))
    brief = events[-1].brief
    assert brief.sections[0].claims
    assert "**Judge not used** for:" in brief_markdown(brief)
    html, _doc = export_brief(ws, run_id, "html")
    assert "judge not used" in html.decode()
    view = review_view(ws, run_id)
    assert all(s["judge_not_used"] for s in view["sections"])
