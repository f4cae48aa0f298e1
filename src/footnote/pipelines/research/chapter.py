"""A chapter through the gate: its draft checked (with the judge while it can be used), and
every card the draft was written from stated by some kept claim.

A model-written sentence that fails the checks takes its cards with it. Whatever the writer
wrote, each of the chapter's fresh cards that no kept claim cites is stated in its own
sentence (its snippet, checked like any claim): when nothing of the model's draft passed, that
is the whole chapter (as before); when some of it did, only the cards whose sentences failed.
A card whose own sentence would repeat a kept claim is not stated again."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from footnote.errors import BudgetExceeded, LicenceRefused, ModelError
from footnote.pipelines.research.checks import JUDGE_NOT_USED, SectionCheck, check_section
from footnote.pipelines.research.synthesise import REPEAT, write_extractive
from footnote.types import EvidenceCard, OutlineItem
from footnote.verify import Judge, Thresholds, overlap
from footnote.verify.draft import Draft


async def check_chapter(
    item: OutlineItem, draft: Draft, kinds: Sequence[str], bound: Sequence[EvidenceCard],
    judge: Judge | None, thresholds: Thresholds, notes: list[str],
) -> SectionCheck:  # fmt: skip
    """The gate over a chapter; without the judge when it cannot be used (budget, licence)."""
    try:
        return await asyncio.to_thread(check_section, item, draft, list(kinds), list(bound),
                                       judge=judge, thresholds=thresholds)  # fmt: skip
    except (BudgetExceeded, LicenceRefused, ModelError) as exc:
        notes.append(f"{JUDGE_NOT_USED}: {exc}; verdicts from the deterministic checks only, "
                     "model-written claims at most weak")  # fmt: skip
        return await asyncio.to_thread(check_section, item, draft, list(kinds), list(bound),
                                       judge=None, thresholds=thresholds)  # fmt: skip


def unstated(checked: SectionCheck, fresh: Sequence[EvidenceCard]) -> list[EvidenceCard]:
    """The fresh cards no kept claim cites, less those whose sentence a kept claim repeats."""
    kept = [c for c in checked.claims if c.kind == "claim"]
    cited = {i for c in kept for i in c.card_ids}
    return [
        card for card in fresh
        if card.id not in cited and not any(overlap(card.claim, c.text) > REPEAT for c in kept)
    ]  # fmt: skip


async def restate_lost(
    item: OutlineItem, draft: Draft, kinds: Sequence[str], checked: SectionCheck,
    fresh: Sequence[EvidenceCard], bound: Sequence[EvidenceCard], judge: Judge | None,
    thresholds: Thresholds, notes: list[str],
) -> tuple[SectionCheck, Draft | None]:  # fmt: skip
    """The model-written chapter with the cards its kept claims leave out stated in their own
    sentences (see the module), and the sentences added (None: nothing was)."""
    lost = unstated(checked, fresh)
    if not lost:
        return checked, None
    conflicts = [s for s, k in zip(draft.sentences, kinds, strict=True) if k == "conflict"]
    if not any(c.kind == "claim" for c in checked.claims):
        notes.append(
            "no sentence of the model's draft passed the checks; the cards' own sentences instead"
        )
        redo = write_extractive(fresh)
        claims = len(redo.sentences)
        redo.sentences += conflicts
        again = await check_chapter(item, redo, ["claim"] * claims + ["conflict"] * len(conflicts),
                                    bound, judge, thresholds, notes)  # fmt: skip
        again.dropped = checked.dropped + again.dropped
        again.fabricated += checked.fabricated
        return again, redo
    notes.append(f"{len(lost)} card(s) whose model-written sentences failed the checks: their "
                 "own sentences instead")  # fmt: skip
    redo = write_extractive(lost)
    more = await check_chapter(item, redo, ["claim"] * len(redo.sentences), bound, judge,
                               thresholds, notes)  # fmt: skip
    start = len(draft.sentences)
    renamed = {
        f"{item.id}-c{n + 1}": f"{item.id}-c{start + n + 1}" for n in range(len(redo.sentences))
    }
    checked.claims += [replace(c, id=renamed.get(c.id, c.id)) for c in more.claims]
    checked.dropped += [{**d, "id": renamed.get(str(d["id"]), d["id"])} for d in more.dropped]
    checked.fabricated += more.fabricated
    checked.foreign += [(renamed.get(i, i), t) for i, t in more.foreign]
    return checked, redo
