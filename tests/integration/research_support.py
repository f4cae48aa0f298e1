"""Shared pieces of the research tests: a workspace wired to the fixture web on loopback, and
scripted models behind the real RoleModel (its budget, licence gate and ledger)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from footnote.eval.fixture_web import FixtureWeb
from footnote.events import Event
from footnote.models.base import Capabilities, Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.research.models import ResearchModels
from footnote.workspace import Workspace
from footnote.workspace.research import (
    ResearchParts,
    confirm_outline,
    run_research,
    start_research,
)

MARKET_Q = "How large is Veldmark's battery recycling market, and how fast is it expected to grow?"
_CARD = re.compile(r"^\[(C\d+)\] \((.*?), ([\d-]+|undated)\) (.*)$", re.M)


def web_settings(web: FixtureWeb, **research: Any) -> dict[str, Any]:
    return {
        "research": {"search_url": f"searxng+{web.base}", "allowed_domains": ["example"],
                     "allow_loopback": True, "resolve": {"*.example": "127.0.0.1"}, **research},
        "models": {"judge": {"url": ""}, "compose": {"url": ""}, "understand": {"url": ""}},
    }  # fmt: skip


def open_ws(path: Path, web: FixtureWeb, **research: Any) -> Workspace:
    return Workspace.open(path, overrides=web_settings(web, **research))


def cards_in(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """(label, snippet) of the cards a writer prompt shows."""
    return [(m[1], m[4]) for m in _CARD.finditer(messages[-1].content)]


def writer_script(
    mutate: Callable[[str, str], tuple[str, list[str]]] | None = None,
) -> Callable[[Sequence[Message]], str]:
    """A writer that restates the first two cards (or what `mutate(label, snippet)` returns)."""

    def reply(messages: Sequence[Message]) -> str:
        claims = []
        for label, snippet in cards_in(messages)[:2]:
            text, cites = mutate(label, snippet) if mutate else (snippet, [label])
            claims.append({"text": text, "cards": cites})
        return json.dumps({"claims": claims})

    return reply


def role(name: str, script: Any, *, external: bool = False, ledger: Ledger | None = None,
         reroute: Any = None, logprobs: bool = False) -> RoleModel:  # fmt: skip
    fake = FakeChatModel(
        script, name=f"fake:{name}", caps=Capabilities(json_schema=True, logprobs=logprobs)
    )
    return RoleModel(
        name,
        fake,
        ledger=ledger if ledger is not None else Ledger(),
        external=external,
        reroute=reroute,
    )


def parts(**models: Any) -> ResearchParts:
    return ResearchParts(models=ResearchModels(**models))


def run_all(ws: Workspace, question: str = MARKET_Q, *, research_parts: ResearchParts | None = None,
            edits: dict[str, Any] | None = None, **start: Any) -> tuple[str, list[Event]]:  # fmt: skip
    run_id, _ = start_research(ws, question, **start)
    confirm_outline(ws, run_id, edits)
    return run_id, collect(ws, run_id, research_parts)


def collect(ws: Workspace, run_id: str, research_parts: ResearchParts | None = None) -> list[Event]:
    async def go() -> list[Event]:
        return [
            e
            async for e in run_research(
                ws, run_id, research_parts or ResearchParts(models=ResearchModels())
            )
        ]

    return asyncio.run(go())


def of_type(events: Sequence[Event], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]


SITES = ["Port Sarrow", "Kell Bay", "Aldmoor", "Drennick", "Halvik", "Ostry", "Brael", "Cairn",
         "Dunmore", "Elsby", "Farrow", "Gilden", "Harrow", "Iverly", "Jessop", "Kinloch",
         "Larkin", "Morrow", "Nessby", "Orrin", "Pellam", "Quarry", "Rusk", "Selby"]  # fmt: skip


def site_review(folder: Path) -> Path:
    """A review of 24 sections, each two sentences on the market's size and growth at a site
    (a library with evidence for every chapter of `MARKET_Q`, shared by all of them)."""
    parts = ["# Veldmark battery recycling market review 2025\n"]
    for i, site in enumerate(SITES):
        parts.append(
            f"## {site}\n\nThe {site} share of the Veldmark battery recycling market was worth "
            f"VMC {40 + 3 * i} million in 2024, by the ministry's estimate. The market size at "
            f"{site} is expected to grow by {5 + i % 7} percent a year to 2030.\n"
        )
    path = folder / "review.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
