"""Does a chapter answer its outline item? Supported is not answered.

A chapter is covered only when its supported claims answer what its outline item asks. Each
part of the item's question (`verify.question.split_parts`: "Which datasets do they use, and how
large are they?" has two) is checked in turn:

- by code, as ask checks its sentences (`verify.responsive.check_responsive`): a claim that
  restates the question, says yes or no to an open one, or lacks a value of the asked type (no
  number for "how large") does not answer the part (ask's softer rules for a factoid "which X"
  answer are left to the judge: a chapter's claims rarely call a method "the method");
- then, where a judge model is bound, by the judge with the research question and the part:
  P(the claims code kept answer it) ≥ `ANSWERED_P`. A judge refused by the budget, the licence
  gate or a model error leaves the code check, and the checklist says so.

A part nothing answers is named in the checklist, and the item is not covered."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from footnote.errors import BudgetExceeded, LicenceRefused, ModelError
from footnote.types import Claim, EvidenceCard
from footnote.verify.question import VALUE_TYPES, analyse_question, split_parts
from footnote.verify.responsive import check_responsive

ANSWERED_P = 0.5
"""The judge's P(yes) at or above which the claims answer a part: the judge's own even odds
(not fitted on research data; the research bench reports coverage against key points)."""
MAX_CLAIMS_JUDGED = 8
"""The claims shown to the judge for one part (the first that code kept, in chapter order)."""

AnswersFn = Callable[[str, Sequence[str], tuple[str, ...]], float]
"""`answers(part, claims, labels) -> P(the claims answer the part)`, charged and gated."""


@dataclass(frozen=True)
class Answered:
    """What a chapter leaves unanswered of its item, and how that was decided."""

    unanswered: tuple[str, ...] = ()
    """One reason per part of the item's question that no supported claim answers."""
    notes: tuple[str, ...] = ()
    """How the parts were checked where it was less than asked (the judge refused)."""


def _parts(asks: str) -> tuple[str, ...]:
    return split_parts(asks) or ((asks.strip(),) if asks.strip() else ())


def answered(
    item_asks: str,
    claims: Sequence[Claim],
    cards: Mapping[str, EvidenceCard],
    answers: AnswersFn | None = None,
) -> Answered:
    """Which parts of `item_asks` the chapter's supported claims leave unanswered. No supported
    claim at all is left to the checklist's own reason ("no claim passed the checks")."""
    supported = [c for c in claims if c.verdict == "supported" and c.kind == "claim"]
    if not supported:
        return Answered()
    unanswered: list[str] = []
    notes: list[str] = []
    for part in _parts(item_asks):
        analysis = analyse_question(part)
        kept, why = [], ""
        for claim in supported:
            cited = [cards[i].snippet for i in claim.card_ids if i in cards]
            finding = check_responsive(claim.text, part, analysis, cited=cited)
            if finding is None or (not finding.hard and analysis.answer_type not in VALUE_TYPES):
                kept.append(claim)
            else:
                why = why or finding.reason
        if not kept:
            unanswered.append(f"no supported claim answers “{part}” ({why})")
            continue
        if answers is None:
            continue
        shown = kept[:MAX_CLAIMS_JUDGED]
        labels = tuple(dict.fromkeys(lab for c in shown for i in c.card_ids if i in cards
                                     for lab in cards[i].labels))  # fmt: skip
        try:
            p = answers(part, [c.text for c in shown], labels)
        except (BudgetExceeded, LicenceRefused, ModelError) as exc:
            notes.append(f"whether the claims answer “{part}” was checked by code only: the "
                         f"judge was refused ({type(exc).__name__})")  # fmt: skip
            continue
        if p < ANSWERED_P:
            unanswered.append(f"the supported claims do not answer “{part}” (judged: P = {p:.2f})")
    return Answered(tuple(unanswered), tuple(notes))
