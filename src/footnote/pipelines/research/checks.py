"""Checks through the one verification path, then the checklist.

Each chapter's draft goes through `verify.gate.check_draft` with an evidence set holding only
the cards bound to that chapter: a citation of any other card is fabricated and dropped; every
number must occur, with its unit, in a cited card; the judge gives P(supported) per citation.
Code also re-checks every card: its snippet is the exact text at its span in its snapshot (or
block), and its date is in the outline item's range. Then coverage per outline item
(covered / uncovered / conflicting, with reasons), key numbers flagged for the analyst, and a
stated sample of the other claims."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from footnote.pipelines.research.answered import Answered
from footnote.pipelines.research.investigate import in_range
from footnote.pipelines.research.untrusted import foreign_markup
from footnote.textnorm import looks_like_year, quantities
from footnote.types import (
    Block,
    ChecklistItem,
    Claim,
    Conflict,
    CoverageState,
    EvidenceCard,
    OutlineItem,
    Verdict,
)
from footnote.verify import Evidence, EvidenceSet, Judge, Thresholds
from footnote.verify.draft import Draft
from footnote.verify.gate import check_draft

JUDGE_NOT_USED = "judge not used"
"""How a chapter's notes and its checklist item say its support was not judged by a model."""


def judge_not_used(notes: Sequence[str]) -> list[str]:
    """A chapter's notes saying its support was not judged by a model (every rendering of the
    brief shows them)."""
    return [n for n in notes if n.startswith(JUDGE_NOT_USED)]


TextOf = Callable[[EvidenceCard], str | None]
"""The full text a card's span points into (its snapshot's or block's), None when missing."""


def card_evidence(cards: Sequence[EvidenceCard]) -> EvidenceSet:
    """Cards as the evidence the gate checks citations against (snippet = the checked text)."""
    items = []
    for c in cards:
        block = Block(c.id, c.source_id or (c.snapshot_id or ""), "paragraph", c.snippet,
                      c.page or 1, section_path=(c.source_title,))  # fmt: skip
        # who says it goes to the judge as context (numbers are checked against the snippet only)
        context = (
            f"Source: {c.source_title} ({c.published_at or 'undated'})" if c.source_title else ""
        )
        items.append(Evidence(c.id, c.snippet, block, relevance=1.0, context=context))
    return EvidenceSet(items)


def card_problems(card: EvidenceCard, text_of: TextOf, item: OutlineItem | None) -> list[str]:
    """What is wrong with a card: its snippet is not at its span, or its date is out of range."""
    problems = []
    text = text_of(card)
    if text is None:
        problems.append("its snapshot or block is missing")
    elif card.span is None or text[card.span[0] : card.span[1]] != card.snippet:
        problems.append("the snippet is not the text at its span")
    if item is not None and not in_range(card.published_at, item.standard):
        problems.append(f"dated {card.published_at}, outside the item's date range")
    return problems


@dataclass
class SectionCheck:
    """A chapter after the checks: kept claims, dropped ones with reasons, fabricated ids."""

    claims: list[Claim] = field(default_factory=list)
    dropped: list[dict[str, object]] = field(default_factory=list)
    fabricated: int = 0
    foreign: list[tuple[str, list[str]]] = field(default_factory=list)
    """(claim id, links/ids/labels) of sentences dropped for markup their cards do not hold."""


def check_section(
    item: OutlineItem,
    draft: Draft,
    kinds: Sequence[str],
    cards: Sequence[EvidenceCard],
    *,
    judge: Judge | None,
    thresholds: Thresholds,
) -> SectionCheck:
    """The chapter's draft through the gate, against its bound cards only. Without a judge
    (none bound, budget spent, licence refused) the gate's own rule holds: a sentence that is
    not a card's own words is at most `weak`, one that flips a negation is dropped."""
    evidence = card_evidence(cards)
    results = check_draft(draft, evidence, judge=judge, thresholds=thresholds)
    out = SectionCheck()
    for n, (sentence, checks, kind) in enumerate(zip(draft.sentences, results, kinds, strict=True)):
        real = [c for c in checks if not c.fabricated]
        out.fabricated += len(checks) - len(real)
        good = [c for c in real if c.verdict in ("supported", "weak")]
        reasons = {f"{c.evidence_id}.{k}": v for c in checks for k, v in c.reasons.items()}
        if not checks:
            reasons["citations"] = "no citation"
        claim_id = f"{item.id}-c{n + 1}"
        foreign = foreign_markup(
            sentence.text, [c.snippet for c in cards if c.id in sentence.cites]
        )
        if foreign:  # a link, image, id or label no cited card holds: the data talking
            reasons["markup"] = f"not in the cited cards: {', '.join(foreign)[:200]}"
            out.foreign.append((claim_id, foreign))
            good = []
        if not good:
            out.dropped.append({"id": claim_id, "text": sentence.text, "reasons": reasons})
            continue
        verdict: Verdict = "supported" if any(c.verdict == "supported" for c in good) else "weak"
        out.claims.append(
            Claim(
                claim_id,
                sentence.text,
                tuple(c.evidence_id for c in good),
                verdict=verdict,
                checks=reasons,
                kind=kind,
            )
        )
    return out


_REFERENCE = re.compile(
    r"(?:\b(?:fig(?:ure)?s?|eq(?:uation)?s?|tab(?:le)?s?|sec(?:tion)?s?|chapters?|appendix|"
    r"algorithms?|lines?|steps?|refs?|references?|pages?|pp?|footnotes?|theorems?|lemmas?|"
    r"definitions?|examples?|exhibits?|no)|§|图|表|公式|式|第)[\s.:(（]*$",
    re.I,
)
"""What comes just before a number that names a figure, equation, table or section."""


def has_key_number(text: str) -> bool:
    """Whether a claim states a figure: a quantity, not a year, not a reference to a figure,
    equation, table or section ("see Fig. 1", "(Equation 1)", "第3章"), and not a small count
    in words ("Three research directions")."""
    for q in quantities(text):
        if looks_like_year(q) or _REFERENCE.search(text[max(0, q.start - 16) : q.start]):
            continue
        if q.words and not (q.percent or q.family.startswith("currency") or q.value >= 1000):
            continue
        return True
    return False


def flag_for_review(claims: Sequence[Claim], rate: float, rng: random.Random) -> list[Claim]:
    """One chapter's claims: key figures flagged for a mandatory analyst check, and a random
    sample of the rest — `rate` of them, the fraction rounded up or down at random so a small
    chapter is sampled as often as its size asks (`rng` is seeded per brief and chapter)."""
    flagged = [replace(c, key_number=has_key_number(c.text)) for c in claims]
    rest = [n for n, c in enumerate(flagged) if not c.key_number]
    want = rate * len(rest)
    k = int(want) + (1 if rng.random() < want - int(want) else 0)
    chosen = set(rng.sample(rest, min(k, len(rest))))
    return [replace(c, sampled=n in chosen) for n, c in enumerate(flagged)]


def not_covered(checklist: Sequence[ChecklistItem]) -> tuple[str, ...]:
    """What the brief says it does not cover: each uncovered item, and each item with a part
    of its question unanswered (a conflicting one too), with the reasons."""
    return tuple(f"{c.title}: {'; '.join(c.reasons)}" for c in checklist
                 if c.state == "uncovered" or c.unanswered)  # fmt: skip


def coverage(
    item: OutlineItem,
    claims: Sequence[Claim],
    cards: dict[str, EvidenceCard],
    conflicts: Sequence[Conflict],
    independent: Callable[[Sequence[EvidenceCard]], int],
    stop_reasons: Sequence[str],
    found: int,
    *,
    searched: bool = True,
    queries: Sequence[str] = (),
    paywalled: Sequence[Mapping[str, str]] = (),
    answered: Answered = Answered(),
) -> ChecklistItem:
    """Covered, uncovered or conflicting, with the reasons, for one outline item. Covered
    needs its question answered: a part of it that no supported claim answers (`answered`,
    see `research.answered`) leaves it uncovered. An item whose sub-question never ran is "not
    searched (budget)"; one that ran and found nothing is "searched, nothing found", with the
    queries it tried. Each paywalled page its search met is listed for a check by hand: its
    URL, when it was retrieved and what to check."""
    reasons: list[str] = []
    supported = [c for c in claims if c.verdict == "supported" and c.kind == "claim"]
    cited = [cards[i] for c in supported for i in c.card_ids if i in cards]
    n_independent = independent(cited) if cited else 0
    state: CoverageState = "covered"
    if not searched:
        reasons.append("not searched (budget)")
    elif not found:
        tried = "; ".join(f"“{q}”" for q in queries)
        reasons.append("searched, nothing found" + (f" (queries: {tried})" if tried else ""))
    if not supported:
        state = "uncovered"
        reasons.append("no claim passed the checks as supported")
    if supported and answered.unanswered:
        state = "uncovered"
        reasons.extend(answered.unanswered)
    reasons.extend(answered.notes)
    if n_independent < item.standard.min_independent:
        state = "uncovered"
        reasons.append(
            f"{n_independent} independent source(s); the standard asks for {item.standard.min_independent}"
        )
    if item.standard.primary_required and not any(c.source_type == "primary" for c in cited):
        state = "uncovered"
        reasons.append("the standard requires a primary source; none is cited")
    stopped = [r for r in stop_reasons if r != "done"]
    if stopped:
        reasons.append("investigation stopped early: " + ", ".join(sorted(set(stopped))))
    if any(item.id in c.item_ids and c.kind == "disagree" for c in conflicts):
        state = "conflicting"
        reasons.append("sources disagree on a figure (shown side by side)")
    if any(item.id in c.item_ids and c.kind == "settings" for c in conflicts):  # not a dispute
        reasons.append("one measure's figures for different settings are shown side by side")
    for page in paywalled:
        reasons.append(f"check by hand: {page.get('url')} (paywalled; retrieved "
                       f"{page.get('retrieved_at')}, HTTP {page.get('status')}): {page.get('check')}")  # fmt: skip
    return ChecklistItem(item.id, item.title, state, reasons=tuple(reasons), cards=found,
                         independent_sources=n_independent, stop_reasons=tuple(stop_reasons),
                         unanswered=answered.unanswered)  # fmt: skip
