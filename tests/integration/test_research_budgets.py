"""Budgets bend, never break (#32 item 4): a run at any budget, from one token to the default,
ends with a checklist and a brief; a model call is refused before it would overshoot; a run
that stopped at a stage resumes to its brief; invalid budgets are errors. The models are
scripted behind the real RoleModel (its budget, licence gate and ledger); the web is the
fixture web on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from research_support import MARKET_Q, collect, of_type, open_ws, parts, role, writer_script

from footnote.errors import UsageError
from footnote.eval.fixture_web import FixtureWeb
from footnote.models.judge import judge_support
from footnote.workspace.research import (
    ResearchParts,
    confirm_outline,
    research_store,
    start_research,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def all_models(judge: Any = None) -> ResearchParts:
    """A selecting, writing and judging run (the judge also decides same-story groups)."""
    select = role("understand", lambda _m: json.dumps({"relevant": ["C1", "C2"]}))
    return parts(select=select, writer=role("compose", writer_script()),
                 judge=role("judge", judge or (lambda _m: "yes")), judge_support=judge_support)  # fmt: skip


BUDGETS = [1, 10, 100, 400, 900, 1500, 2200, 3000, 5000, 10_000, None]


@pytest.mark.parametrize("tokens", BUDGETS, ids=[str(b) for b in BUDGETS])
def test_every_budget_ends_with_a_checklist_and_a_brief(
    tmp_path: Path, web: FixtureWeb, tokens: int | None
) -> None:
    # eight fetches per search: the market question then has a dated copy group that only the
    # judge's same-story call can attribute (the merge stage's model call)
    ws = open_ws(tmp_path / "ws", web, select="model", fetches_per_search=8)
    run_id, _ = start_research(ws, MARKET_Q, budget_tokens=tokens)
    confirm_outline(ws, run_id)
    events = collect(ws, run_id, all_models())
    assert events[-1].type == "brief" and of_type(events, "checklist")
    brief = events[-1].brief
    assert research_store(ws).get_research(run_id).state in ("completed", "wrapped_up")
    assert len(brief.checklist) == len(brief.sections) == 6
    limit = tokens or ws.settings.research.budget_tokens
    assert brief.budget_used["tokens"] <= limit  # refused before it would overshoot
    for stop in of_type(events, "subquestion_stop"):
        if stop.stop_reason == "done":  # a sub-question over its own budget is not `done`
            sq = next(
                s for s in of_type(events, "plan")[0].sub_questions if s.id == stop.sub_question_id
            )
            assert stop.used.get("tokens", 0) <= sq.budget["tokens"]


def test_a_spent_budget_skips_the_attribution_call_and_keeps_the_deterministic_merge(
    tmp_path: Path, web: FixtureWeb
) -> None:
    ws = open_ws(tmp_path / "ws", web, select="model", fetches_per_search=8)
    run_id, _ = start_research(ws, MARKET_Q, budget_tokens=400)  # less than a same-story prompt
    confirm_outline(ws, run_id)
    events = collect(ws, run_id, all_models())
    assert events[-1].type == "brief"
    merge = research_store(ws).get_artifact(run_id, "merge")
    assert merge is not None
    undecided = [d for d in merge["decisions"] if d["origin"] is None]
    assert undecided and all("not made" in d["basis"] for d in undecided)
    assert all(merge["independence"][m] == "unconfirmed" for d in undecided for m in d["members"])


def test_a_sub_question_whose_call_overshot_is_not_done(tmp_path: Path, web: FixtureWeb) -> None:
    # the estimate before the call is the prompt and the reply's limit; a reply far longer
    # than the limit (a server that ignores max_tokens) still overshoots: never `done` then
    ws = open_ws(tmp_path / "ws", web, select="model")
    run_id, _ = start_research(ws, MARKET_Q, budget_tokens=20_000)
    confirm_outline(ws, run_id, {"items": [i for i in research_store(ws).get_artifact(run_id, "outline")["items"] if i["id"] == "size"]})  # fmt: skip
    verbose = role("understand", lambda _m: json.dumps({"relevant": ["C1"], "why": "x " * 30_000}))
    events = collect(ws, run_id, parts(select=verbose))
    (stop,) = of_type(events, "subquestion_stop")
    assert stop.stop_reason == "budget_tokens"
    assert events[-1].type == "brief"


@pytest.mark.parametrize("stage", ["merge", "checks"])
def test_resume_finishes_a_run_that_stopped_at_a_stage(
    tmp_path: Path, web: FixtureWeb, stage: str
) -> None:
    ws = open_ws(tmp_path / "ws", web, select="model", fetches_per_search=8)

    def dies(messages: Any) -> str:
        story = (
            "same story" in messages[-1].content.lower()
            or "one story" in messages[-1].content.lower()
        )
        if (stage == "merge") == story:
            raise RuntimeError(f"the judge process died at {stage}")
        return "yes"

    run_id, _ = start_research(ws, MARKET_Q)
    confirm_outline(ws, run_id)
    with pytest.raises(RuntimeError, match="died"):
        collect(ws, run_id, all_models(dies))
    store = research_store(ws)
    assert store.get_research(run_id).state == "failed"
    events = collect(ws, run_id, all_models())
    assert events[-1].type == "brief" and of_type(events, "checklist")
    assert store.get_research(run_id).state in ("completed", "wrapped_up")
    assert not of_type(events, "subquestion_start")  # investigation is not redone


@pytest.mark.parametrize("option, value", [("budget_tokens", 0), ("budget_tokens", -5),
                                           ("budget_minutes", 0.0), ("budget_minutes", -1.0)])  # fmt: skip
def test_invalid_budgets_are_errors(
    tmp_path: Path, web: FixtureWeb, option: str, value: float
) -> None:
    ws = open_ws(tmp_path / "ws", web)
    with pytest.raises(UsageError, match=option.replace("_", "-")):
        start_research(ws, MARKET_Q, **{option: value})  # type: ignore[arg-type]
