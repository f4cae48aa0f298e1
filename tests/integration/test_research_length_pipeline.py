"""The evidence a brief gathers follows `research.target_pages` and the budget, through the
real pipeline over a real library (SQLite store, the search index, the checks): a library with
more to say than six cards a chapter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from research_support import collect, of_type

from footnote.workspace import Workspace
from footnote.workspace.research import confirm_outline, start_research

QUESTION = "How large is Veldmark's battery recycling market, and how fast is it expected to grow?"
PLANTS = ["Port Sarrow", "Kell Bay", "Aldmoor", "Drennick", "Halvik", "Ostry", "Brael", "Cairn",
          "Dunmore", "Elsby", "Farrow", "Gilden", "Harrow", "Iverly", "Jessop", "Kinloch",
          "Larkin", "Morrow", "Nessby", "Orrin", "Pellam", "Quarry", "Rusk", "Selby"]  # fmt: skip


def _library(folder: Path) -> Path:
    """A report of 24 sections, each two sentences on the market's size and growth at a plant."""
    parts = ["# Veldmark battery recycling market review 2025\n"]
    for i, plant in enumerate(PLANTS):
        parts.append(
            f"## {plant}\n\nThe {plant} share of the Veldmark battery recycling market was worth "
            f"VMC {40 + 3 * i} million in 2024, by the ministry's estimate. The market size at "
            f"{plant} is expected to grow by {5 + i % 7} percent a year to 2030.\n"
        )
    path = folder / "review.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _library(tmp_path_factory.mktemp("docs"))


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
