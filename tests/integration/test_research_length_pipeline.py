"""The evidence a brief gathers follows `research.target_pages` and the budget, through the
real pipeline over a real library (SQLite store, the search index, the checks): a library with
more to say than six cards a chapter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from research_support import MARKET_Q, collect, of_type, site_review

from footnote.workspace import Workspace
from footnote.workspace.research import confirm_outline, start_research

QUESTION = MARKET_Q


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return site_review(tmp_path_factory.mktemp("docs"))


def _run(path: Path, library: Path, budget_tokens: int | None = None, **research: Any) -> Any:
    ws = Workspace.open(path, overrides={
        "research": {"allowed_domains": [], **research},
        "models": {"embed": {"url": "local:wordllama"}, "judge": {"url": ""},
                   "compose": {"url": ""}, "understand": {"url": ""}}})  # fmt: skip
    ws.ingest([library])
    run_id, _ = start_research(ws, QUESTION, web=False, budget_tokens=budget_tokens)
    confirm_outline(ws, run_id)
    return collect(ws, run_id)


def test_a_smaller_target_or_budget_gathers_less_evidence(tmp_path: Path, library: Path) -> None:
    default = _run(tmp_path / "default", library)
    short = _run(tmp_path / "short", library, target_pages=1)
    poor = _run(tmp_path / "poor", library, budget_tokens=40_000)
    found = {name: [s.cards for s in of_type(events, "subquestion_stop")]
             for name, events in (("default", default), ("short", short), ("poor", poor))}  # fmt: skip
    assert max(found["default"]) > 6  # "enough" is no longer six cards
    assert sum(found["default"]) > sum(found["short"]) and max(found["short"]) <= 6
    assert sum(found["default"]) > sum(found["poor"]) and max(found["poor"]) <= 8
