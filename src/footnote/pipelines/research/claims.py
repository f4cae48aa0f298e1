"""A card's claim: what its snippet asserts about the sub-question, written by the model and
checked against the snippet before it is kept.

The `understand` model (the research role that selects cards) writes one sentence per card
from the snippet alone (`prompts/research_claim.md`; the snippet and its source's title fenced
as data). The claim is kept only when it passes, in order (the judge, which costs, last):

- code: it carries no link, id or label the snippet lacks (`untrusted.foreign_markup`); it is
  in the snippet's script (a Chinese snippet gets a Chinese claim); at least `WORDS_IN_SNIPPET`
  of its content words (stemmed; Chinese by character, as the gate counts) are the snippet's
  or its source title's;
- it says something about the sub-question: it does not merely restate it
  (`verify.responsive.echoes_question`) and shares a word with the sub-question or its outline
  item (supported is not answered); a claim in another language than the sub-question cannot
  be compared by words, so it needs the judge, which then judges it as the answer to the
  question;
- the gate's own check of a citation (`verify.checks.check_citation`, as ask uses it): every
  number, with its scale, occurs in the snippet; without a judge no reversed negation and
  content-word overlap (`weak` is the best a reworded claim gets there); with a judge bound,
  its entailment: P(supported) ≥ the supported threshold.

A claim that fails, is not written, or whose call is refused (budget, licence, model error or
an invalid reply) is the verbatim snippet, and its `ClaimOutcome` says why; a budget refusal
stops the model calls for the cards left (budgets bend, never break)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, Field

from footnote.errors import BudgetExceeded, LicenceRefused, ModelError
from footnote.models.base import Message
from footnote.models.jsontext import find_json_object
from footnote.numbers import stem_inflected
from footnote.pipelines.research.cards import SelectFn
from footnote.pipelines.research.checks import card_evidence
from footnote.pipelines.research.outline import words
from footnote.pipelines.research.untrusted import foreign_markup
from footnote.prompts import data_section, render
from footnote.textnorm import QUESTION_WORDS_EN, STOP_WORDS_EN, STOP_WORDS_ZH, has_cjk
from footnote.types import EvidenceCard
from footnote.verify import Judge, Thresholds, check_citation
from footnote.verify.responsive import echoes_question

MAX_CLAIM_CHARS = 400
"""The longest claim kept (the reply schema's limit too)."""
WORDS_IN_SNIPPET = 0.75
"""Share of a claim's content words that must be its snippet's (or its source title's)."""
_STOP = STOP_WORDS_EN | STOP_WORDS_ZH | QUESTION_WORDS_EN
_LATIN = re.compile(r"[A-Za-z]")
_NUMBER = re.compile(r"[\d.,]+")

JudgeFor = Callable[[tuple[str, ...]], Judge | None]
"""The judge for a card's labels (None: no judge bound, or none may read them)."""


class _Reply(BaseModel):
    claim: str = Field(max_length=MAX_CLAIM_CHARS)


@dataclass(frozen=True)
class ClaimOutcome:
    """Where a card's claim came from: `model` (written and checked) or `snippet` (verbatim),
    with the reason."""

    card_id: str
    by: Literal["model", "snippet"]
    reason: str

    @property
    def note(self) -> str:
        """The line the sub-question's notes keep for the card."""
        if self.by == "model":
            return f"card {self.card_id}: claim written by the model, checked ({self.reason})"
        return f"card {self.card_id}: claim is the verbatim snippet: {self.reason}"


def claim_messages(question: str, focus: str, card: EvidenceCard) -> list[Message]:
    """The claim call's prompt: the snippet and its source's title fenced as data."""
    user = render(
        "research_claim", question=question, focus=focus,
        source=data_section(card.source_title[:120] or "(untitled)", "SOURCE"),
        passage=data_section(card.snippet, "PASSAGE"),
    )  # fmt: skip
    return [
        Message("system", "You state what evidence says. You output JSON only."),
        Message("user", user),
    ]


CLAIM_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"claim": {"type": "string", "maxLength": MAX_CLAIM_CHARS}},
    "required": ["claim"],
}


def parse_claim(reply: str) -> str:
    """The claim of a reply, whitespace collapsed ("" when the model wrote none); ValueError for
    a reply that is not the schema's JSON."""
    return " ".join(_Reply.model_validate(find_json_object(reply)).claim.split())


def _stems(text: str) -> set[str]:
    """Content words of a text (Chinese segmented into words), stemmed."""
    return {stem_inflected(w) for w in words(text) if w not in _STOP and not _NUMBER.fullmatch(w)}


def _chars(text: str) -> set[str]:
    """Content characters of Chinese text (how the gate's word overlap counts Chinese)."""
    return {ch for ch in re.sub(r"[\W\d_A-Za-z]", "", text) if ch not in STOP_WORDS_ZH}


def _in_snippet(claim: str, evidence: str) -> float:
    """Share of the claim's content words (for Chinese: characters) found in the evidence."""
    have = _stems(evidence) | _chars(evidence)
    mine = [w for w in _stems(claim) if not has_cjk(w)] + sorted(_chars(claim))
    return sum(1 for w in mine if w in have) / len(mine) if mine else 0.0


def _same_script(a: str, b: str) -> bool:
    """Whether two texts share a script (Latin letters or Chinese characters)."""
    return (has_cjk(a) and has_cjk(b)) or bool(_LATIN.search(a) and _LATIN.search(b))


def check_claim(
    claim: str, card: EvidenceCard, question: str, focus: str, *,
    judge: Judge | None = None, thresholds: Thresholds = Thresholds(),
) -> str:  # fmt: skip
    """Why a model-written claim may not stand for its card ("" when it passes). `focus`: the
    outline item's title and what it asks."""
    if not claim:
        return "the model wrote no claim (the snippet says nothing about the sub-question)"
    if foreign := foreign_markup(claim, [card.snippet, card.source_title]):
        return f"the claim adds {', '.join(foreign)[:120]}"
    if has_cjk(card.snippet) != has_cjk(claim):
        return "the claim is not in the snippet's language"
    if (share := _in_snippet(claim, f"{card.source_title}\n{card.snippet}")) < WORDS_IN_SNIPPET:
        return f"only {share:.0%} of the claim's words are in the snippet"
    if echoes_question(claim, question):
        return "the claim restates the sub-question"
    cross = not _same_script(claim, f"{question} {focus}")
    if cross and judge is None:
        return "the claim is in another language than the sub-question: it needs the judge"
    if not cross and not _stems(claim) & _stems(f"{question} {focus}"):
        return "the claim says nothing about the sub-question (no word of it)"
    check = check_citation(claim, card.id, card_evidence([card]), judge=judge,
                           thresholds=thresholds, question=question, as_answer=cross)  # fmt: skip
    wanted = ("supported",) if judge is not None else ("supported", "weak")
    if check.verdict not in wanted:
        why = "; ".join(f"{k}: {v}" for k, v in check.reasons.items())
        return f"the gate found it {check.verdict} ({why})"
    return ""


def write_claims(
    question: str, focus: str, cards: Sequence[EvidenceCard], complete: SelectFn | None, *,
    judge_for: JudgeFor | None = None, thresholds: Thresholds = Thresholds(),
) -> tuple[list[EvidenceCard], list[ClaimOutcome]]:  # fmt: skip
    """Each card with its model-written claim where it passes `check_claim`, else the snippet;
    and the outcome per card. One call per card, licence-gated by that card's labels (so the
    call that reads a fetched page sees no other text); a call the budget refuses ends the
    calls, the cards left keep their snippets. A judge refused by the budget, the licence gate
    or a model error leaves the code checks."""
    out: list[EvidenceCard] = []
    outcomes: list[ClaimOutcome] = []
    stopped = "" if complete is not None else "no model writes claims"
    for card in cards:
        if stopped or complete is None:
            out.append(replace(card, claim=card.snippet))
            outcomes.append(ClaimOutcome(card.id, "snippet", stopped))
            continue
        try:
            reply = complete(claim_messages(question, focus, card), CLAIM_SCHEMA, card.labels)
            claim = parse_claim(reply)
        except BudgetExceeded as exc:
            stopped = f"the budget refused the claim call ({exc})"
            out.append(replace(card, claim=card.snippet))
            outcomes.append(ClaimOutcome(card.id, "snippet", stopped))
            continue
        except (LicenceRefused, ModelError, ValueError) as exc:
            out.append(replace(card, claim=card.snippet))
            outcomes.append(ClaimOutcome(card.id, "snippet", f"{type(exc).__name__}: {exc}"[:200]))
            continue
        judge = judge_for(card.labels) if judge_for is not None else None
        how = "judged" if judge is not None else "code checks only, no judge"
        try:
            why = check_claim(claim, card, question, focus, judge=judge, thresholds=thresholds)
        except (BudgetExceeded, LicenceRefused, ModelError) as exc:
            how = f"code checks only, the judge was refused: {type(exc).__name__}"
            why = check_claim(claim, card, question, focus, judge=None, thresholds=thresholds)
        if why:
            out.append(replace(card, claim=card.snippet))
            outcomes.append(ClaimOutcome(card.id, "snippet", f"model claim rejected: {why}"))
        else:
            out.append(replace(card, claim=claim))
            outcomes.append(ClaimOutcome(card.id, "model", how))
    return out, outcomes
