"""Least privilege for the research job's roles, enforced by the executor (never asked of a
model): which role may call which source operation in which stage, and what an exporter may
put in front of a user.

- the **library reader** searches the library (with the user's ACL) and the licensed database;
- the **web reader** searches the web and scholarly indexes and fetches (through the egress
  policy); it never sees internal documents: its queries come from the plan, the model call
  that reads fetched text is separate from the one that reads library text
  (`investigate.select_by_trust_domain`), and it holds no handle on the library;
- the **writer** and the **judge** see only the cards of one chapter, as data; they cannot
  search or fetch (the stage has no grant);
- the **exporter** sees only the cards the requesting user may read (`readable_cards`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from footnote.access import RESTRICTED_LABELS, label_refusal, readable_by
from footnote.types import EvidenceCard, Source

Role = Literal["library_reader", "web_reader", "writer", "judge", "exporter"]
Stage = Literal["investigate", "synthesise", "export"]

OPERATION_ROLE: dict[str, Role] = {
    "library search": "library_reader",
    "licensed search": "library_reader",
    "web search": "web_reader",
    "scholarly search": "web_reader",
    "fetch": "web_reader",
}
STAGE_ROLES: dict[Stage, frozenset[Role]] = {
    "investigate": frozenset({"library_reader", "web_reader"}),
    "synthesise": frozenset({"writer", "judge"}),
    "export": frozenset({"exporter"}),
}


def refusal(stage: Stage, operation: str) -> str | None:
    """Why `operation` may not run in `stage` (None when a role of the stage holds it)."""
    role = OPERATION_ROLE[operation]
    if role in STAGE_ROLES[stage]:
        return None
    holders = ", ".join(sorted(STAGE_ROLES[stage]))
    return f"{operation} needs the {role} role; the {stage} stage has only {holders} (no network access)"


@dataclass(frozen=True)
class Withheld:
    """A card an export leaves out, and why (the export says so)."""

    card_id: str
    source_title: str
    reason: str


def readable_cards(
    cards: Sequence[EvidenceCard],
    user_groups: tuple[str, ...] | None,
    source_of: Callable[[str], Source | None],
    label_readers: Mapping[str, Sequence[str]] = RESTRICTED_LABELS,
) -> tuple[list[EvidenceCard], list[Withheld]]:
    """The cards a user may read, and those withheld with the reason. A library card follows
    its source's ACL as it is now (`access.readable_by`; a deleted source withholds it); a card
    with a restricted label (`client-confidential`, or another in `label_readers`) follows the
    label rule (`access.label_refusal`: the label's readers or the source's own groups, never the
    public rule); otherwise a card from a snapshot the run fetched follows the run (the caller
    has checked the user may read the run)."""
    kept: list[EvidenceCard] = []
    withheld: list[Withheld] = []
    for card in cards:
        why = _unreadable(card, user_groups, source_of, label_readers)
        if why is None:
            kept.append(card)
        else:
            withheld.append(Withheld(card.id, card.source_title, why))
    return kept, withheld


def _unreadable(
    card: EvidenceCard,
    groups: tuple[str, ...] | None,
    source_of: Callable[[str], Source | None],
    label_readers: Mapping[str, Sequence[str]],
) -> str | None:
    if card.block_id:
        source = source_of(card.source_id)
        if source is None:
            return "its library source no longer exists"
        if not readable_by(source, groups):
            return "its library source is not readable by this user"
        return label_refusal(card.labels, groups, source.acl_groups, label_readers)
    return label_refusal(card.labels, groups, (), label_readers)
