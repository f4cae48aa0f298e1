"""Fair shares of the evidence between chapters. A card one chapter holds is off limits to the
others, so on a small library the chapter that runs first could take most of it. Evidence is
therefore gathered in rounds (turns): in each every chapter still growing gathers up to the
round's share (`target`: `SHARES` cards, then all it wants), in the plan's order and after the
items it depends on; a chapter takes part in the next round only when it found the whole share
with no budget stopping it (`grows`), and spends what is left of its own budget (`remaining`).
So no chapter takes a second helping before every chapter has had its first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from footnote.models.budget import Budget
from footnote.pipelines.research.investigate import WorkerResult
from footnote.pipelines.research.length import MIN_CARDS

SHARES = (MIN_CARDS // 2, MIN_CARDS)
"""The cards a chapter may hold after the first rounds; the last round is all it wants."""
ROUNDS = len(SHARES) + 1
RESOURCES = ("tokens", "calls", "searches", "fetches", "seconds")


def target(want: int, round_: int) -> int:
    """The cards a chapter wanting `want` may hold after round `round_` (0-based)."""
    return min(want, SHARES[round_]) if round_ < len(SHARES) else want


def round_note(round_: int, ids: list[str]) -> str:
    """What a later round does, for the run's status."""
    share = f"up to {SHARES[round_]} cards each" if round_ < len(SHARES) else "all they want"
    return f"turn {round_ + 1} of {ROUNDS}: {', '.join(ids)} gather more evidence, {share}"


def grows(found: int, want: int, round_: int, stop_reason: str) -> bool:
    """Whether a chapter takes part in the round after `round_`: it found the round's whole
    share with no budget stopping it, and wants more."""
    return stop_reason == "done" and found >= target(want, round_) and want > found


def later(record: Mapping[str, Any], round_: int) -> bool:
    """Whether a sub-question's stored record takes part in round `round_` (a resumed run
    goes on with the round after the last one stored)."""
    return bool(record.get("grow")) and int(record.get("round", 0)) < round_


def remaining(limits: Mapping[str, float], used: Mapping[str, float]) -> dict[str, float]:
    """What is left of a sub-question's budget after its earlier rounds (never below zero)."""
    return {r: max(0.0, float(limits[r]) - float(used.get(r, 0.0))) for r in limits}


def grown(first: Mapping[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """A sub-question's record after one more round: cards, use, notes, the source log added
    up (each query, refusal, failure and paywalled page listed once); the stop reason is the
    last round's."""
    out = dict(first)
    out["card_ids"] = [*first.get("card_ids", []), *more.get("card_ids", [])]
    before, after = first.get("used", {}), more.get("used", {})
    out["used"] = {r: round(float(before.get(r, 0)) + float(after.get(r, 0)), 3)
                   for r in RESOURCES if r in before or r in after}  # fmt: skip
    for key in ("searches", "fetches"):
        out[key] = int(first.get(key, 0)) + int(more.get(key, 0))
    out["notes"] = [*first.get("notes", []), *more.get("notes", [])]
    for key in ("queries", "refused", "failed"):  # a query searched again is listed once
        out[key] = list(dict.fromkeys([*first.get(key, []), *more.get(key, [])]))
    walled = [*first.get("paywalled", []), *more.get("paywalled", [])]
    out["paywalled"] = list({p["url"]: p for p in reversed(walled)}.values())[::-1]
    out["stop_reason"] = more.get("stop_reason", "done")
    out.pop("grow", None)
    return out


def child_budget(run: Budget, limits: Mapping[str, float]) -> Budget:
    """A sub-question's budget under the run's: `limits` by resource (a missing one: none)."""
    b = limits
    return run.child(
        int(b["tokens"]) if "tokens" in b else None, int(b["calls"]) if "calls" in b else None,
        b.get("seconds"), max_searches=int(b["searches"]) if "searches" in b else None,
        max_fetches=int(b["fetches"]) if "fetches" in b else None,
    )  # fmt: skip


def record_of(result: WorkerResult) -> dict[str, Any]:
    """The stored record of one round of a sub-question."""
    return {"stop_reason": result.stop_reason, "card_ids": [c.id for c in result.cards],
            "used": result.used, "notes": result.notes, "searches": result.log.searches,
            "fetches": result.log.fetches, "refused": result.log.refused,
            "failed": result.log.failed, "queries": result.queries,
            "paywalled": result.log.paywalled}  # fmt: skip
