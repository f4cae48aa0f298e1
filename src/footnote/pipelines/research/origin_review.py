"""The analyst's decisions on attribution the code left undecided (`MergeResult.undecided`:
cards of different sources quoting one figure without naming where it comes from).

Each group gets an id from its members. A decision, logged with the analyst and a reason, is
`same` (the cards restate one origin: counted once, never as corroboration), `secondary` (the
cards are secondary reports of one origin outside the run: counted once, source type
`secondary`) or `independent` (independence confirmed, the analyst's decision its evidence:
each card counts on its own). `decide_brief` applies the decisions to a brief's cards and
re-derives its checklist (independent sources, state, reasons), chapter coverage and the
list of what is not covered."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from footnote.pipelines.research.answered import Answered
from footnote.pipelines.research.checks import coverage, not_covered
from footnote.pipelines.research.merge import MergeResult, independent_origins
from footnote.types import Brief, ChecklistItem, EvidenceCard, sha256_hex

ORIGIN_DECISIONS = ("same", "independent", "secondary")
"""What the analyst may decide about a group: one origin, independent, secondary reports."""

_RECOMPUTED = re.compile(
    r"^(?:\d+ independent source\(s\); the standard asks for \d+"
    r"|the standard requires a primary source; none is cited"
    r"|no claim passed the checks as supported"
    r"|origin decided by the analyst: .*)$"
)


@dataclass(frozen=True)
class OriginGroup:
    """An undecided group: its id, its cards and why the code could not decide."""

    id: str
    members: tuple[str, ...]
    basis: str


def group_id(members: Sequence[str]) -> str:
    """A group's id: stable for its (sorted) member card ids."""
    return "og-" + sha256_hex(",".join(sorted(members)).encode())[:8]


def undecided_groups(merge: MergeResult) -> list[OriginGroup]:
    """The groups of a merge left to the analyst, in the merge's order."""
    return [OriginGroup(group_id(d.members), tuple(d.members), d.basis) for d in merge.undecided]


def valid_decisions(
    groups: Sequence[OriginGroup], decisions: Mapping[str, Mapping[str, Any]]
) -> dict[str, Mapping[str, Any]]:
    """The decisions that apply: for a group of this merge, with its exact members and a
    known decision (a stale or malformed entry of the log decides nothing)."""
    out: dict[str, Mapping[str, Any]] = {}
    for g in groups:
        d = decisions.get(g.id)
        if (
            d is not None
            and d.get("decision") in ORIGIN_DECISIONS
            and tuple(sorted(d.get("members", ()))) == tuple(sorted(g.members))
        ):
            out[g.id] = d
    return out


def decided_merge(merge: MergeResult, decisions: Mapping[str, Mapping[str, Any]]) -> MergeResult:
    """The merge with decided groups taken out of `undecided`: one origin (`same`,
    `secondary`) or none shared (`independent`)."""
    groups = undecided_groups(merge)
    valid = valid_decisions(groups, decisions)
    card_origin = dict(merge.card_origin)
    for g in groups:
        if g.id in valid and valid[g.id]["decision"] != "independent":
            for m in g.members:
                card_origin[m] = f"analyst:{g.id}"
    return replace(
        merge,
        undecided=[d for d, g in zip(merge.undecided, groups, strict=True) if g.id not in valid],
        card_origin=card_origin,
    )


def _decided_card(
    card: EvidenceCard, group: OriginGroup, decision: Mapping[str, Any], sources: Mapping[str, str]
) -> EvidenceCard:
    kind, who = str(decision["decision"]), str(decision.get("by", "the analyst"))
    reason = str(decision.get("reason", "")).strip()
    why = f": {reason}" if reason else ""
    others = tuple(
        dict.fromkeys(sources[m] for m in group.members if m != card.id and m in sources)
    )
    if kind == "independent":
        return replace(card, independence="independent", attribution_confidence=1.0,
                       attribution_basis=f"independence confirmed by the analyst {who} "
                       f"(group {group.id}){why}")  # fmt: skip
    basis = (
        f"the analyst {who} decided the cards of group {group.id} restate one origin{why}"
        if kind == "same"
        else f"the analyst {who} decided the cards of group {group.id} are secondary reports "
        f"of one origin{why}"
    )
    source_type = card.source_type
    if kind == "secondary" and source_type != "reprint":
        source_type = "secondary"
    return replace(card, independence="same_origin", attribution_confidence=1.0,
                   attribution_basis=basis, source_type=source_type,
                   origin_candidates=tuple(dict.fromkeys((*others, *card.origin_candidates))))  # fmt: skip


def decide_cards(
    cards: Sequence[EvidenceCard], merge: MergeResult, decisions: Mapping[str, Mapping[str, Any]]
) -> list[EvidenceCard]:
    """Cards with the analyst's decisions on their groups applied."""
    groups = undecided_groups(merge)
    valid = valid_decisions(groups, decisions)
    sources = {c.id: c.source_id for c in cards}
    group_of = {m: g for g in groups if g.id in valid for m in g.members}
    return [
        _decided_card(c, group_of[c.id], valid[group_of[c.id].id], sources)
        if c.id in group_of
        else c
        for c in cards
    ]


def _rechecked(old: ChecklistItem, fresh: ChecklistItem, notes: Sequence[str]) -> ChecklistItem:
    """The old item with its state, independent sources and the recomputed reasons of
    `fresh` (the other reasons as they were: the queries tried, paywalled pages, …)."""
    kept = [r for r in old.reasons if not _RECOMPUTED.match(r)]
    first = next((n for n, r in enumerate(old.reasons) if _RECOMPUTED.match(r)), None)
    at = (
        len([r for r in old.reasons[:first] if not _RECOMPUTED.match(r)])
        if first is not None
        else 0
    )
    new = [r for r in fresh.reasons if _RECOMPUTED.match(r)] + list(notes)
    return replace(old, state=fresh.state, independent_sources=fresh.independent_sources,
                   reasons=tuple(kept[:at] + new + kept[at:]))  # fmt: skip


def decide_brief(
    brief: Brief, merge: MergeResult, decisions: Mapping[str, Mapping[str, Any]]
) -> Brief:
    """The brief with the analyst's origin decisions applied: its cards, and its checklist
    re-derived (a group decided one origin counts once; a group decided independent counts
    each source), the chapters' coverage and what is not covered."""
    groups = undecided_groups(merge)
    valid = valid_decisions(groups, decisions)
    if not valid:
        return brief
    cards = decide_cards(brief.cards, merge, valid)
    by_id = {c.id: c for c in cards}
    after = decided_merge(merge, valid)
    items = {i.id: i for i in brief.outline.items}
    sections = {s.item_id: s for s in brief.sections}
    checklist = []
    for old in brief.checklist:
        item, section = items.get(old.item_id), sections.get(old.item_id)
        if item is None or section is None:
            checklist.append(old)
            continue
        fresh = coverage(item, section.claims, by_id, brief.conflicts,
                         lambda cs: independent_origins(cs, after), old.stop_reasons, old.cards,
                         answered=Answered(old.unanswered))  # fmt: skip
        cited = {i for c in section.claims if c.verdict == "supported" and c.kind == "claim"
                 for i in c.card_ids}  # fmt: skip
        notes = [
            f"origin decided by the analyst: group {g.id} {valid[g.id]['decision']} "
            f"({valid[g.id].get('by', 'the analyst')})"
            for g in groups
            if g.id in valid and cited & set(g.members)
        ]
        checklist.append(_rechecked(old, fresh, notes))
    state = {c.item_id: c.state for c in checklist}
    return replace(
        brief,
        cards=tuple(cards),
        checklist=tuple(checklist),
        sections=tuple(replace(s, coverage=state.get(s.item_id, s.coverage))
                       for s in brief.sections),
        not_covered=not_covered(checklist),
    )  # fmt: skip
