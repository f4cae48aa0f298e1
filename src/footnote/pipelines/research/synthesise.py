"""Synthesis: each chapter written from the cards bound to it, with no network access.

The writer (`compose` role) sees only its chapter's cards, as data, under labels `C1…`; its
output schema allows only those labels, so it can cite nothing else. A chapter is written in
bounded calls, one per group of at most `GROUP_CARDS` cards, each allowed one sentence per card
it shows: the chapter grows with its evidence (and the evidence with the budget,
`length.cards_wanted`), a small model's context stays small, and a chapter of three cards stays
three sentences at most; a card the writer leaves out is stated in its own sentence, so a
small model's terse draft loses no evidence. Conflicts are written by code, one sentence per
source with its figure and scope, never combined. Without a model (or when the licence gate,
budget or output validation stops it) the chapter, or the rest of it, is the cards' own
sentences."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from footnote.errors import BudgetExceeded, LicenceRefused, ModelError
from footnote.models.base import Message
from footnote.models.jsontext import find_json_object
from footnote.prompts import data_section, render
from footnote.textnorm import number_runs
from footnote.types import Conflict, EvidenceCard, Outline, OutlineItem
from footnote.verify import overlap
from footnote.verify.draft import Draft, DraftSentence

WriteFn = Callable[[list[Message], dict[str, object], tuple[str, ...]], str]
"""`write(messages, json_schema, labels) -> reply text` (a budgeted, licence-gated model call)."""
MAX_CLAIMS = 6
"""Claims one writing call may return (its reply fits the writer's output tokens)."""
GROUP_CARDS = MAX_CLAIMS
"""Cards one writing call sees."""
REPEAT = 0.8
"""Word overlap above which a sentence repeats another (and is not written again)."""


class _WrittenClaim(BaseModel):
    text: str = Field(max_length=400)
    cards: list[str]


class Written(BaseModel):
    """The writer's output."""

    claims: list[_WrittenClaim]


def card_listing(cards: Sequence[EvidenceCard]) -> tuple[dict[str, str], str]:
    """Aliases `C1…` → card ids, and the cards as prompt text (fenced as data by the caller)."""
    aliases = {f"C{i + 1}": c.id for i, c in enumerate(cards)}
    lines = [
        f"[{a}] ({c.source_title[:80]}, {c.published_at or 'undated'}) {c.snippet}"
        for a, c in zip(aliases, cards, strict=True)
    ]
    return aliases, "\n\n".join(lines)


def claims_schema(aliases: Sequence[str], max_claims: int = MAX_CLAIMS) -> dict[str, object]:
    """The writer's JSON schema: claims citing only the labels shown."""
    return {
        "type": "object",
        "properties": {
            "claims": {
                "type": "array",
                "maxItems": max_claims,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "maxLength": 400},
                        "cards": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": 3,
                            "items": {"type": "string", "enum": list(aliases)},
                        },
                    },
                    "required": ["text", "cards"],
                },
            }
        },
        "required": ["claims"],
    }


def parse_written(reply: str, aliases: dict[str, str], max_claims: int | None = None) -> Draft:
    """The writer's claims (the first `max_claims`; None: all) as a draft; a label it was not
    shown stays as written (the checks count it as fabricated)."""
    written = Written.model_validate(find_json_object(reply))
    draft = Draft(raw=reply)
    for claim in written.claims[:max_claims]:
        text = " ".join(claim.text.split())
        if text:
            cites = [aliases.get(c.strip(), c.strip()) for c in claim.cards]
            draft.sentences.append(DraftSentence(text, list(dict.fromkeys(cites))))
    return draft


def card_groups(cards: Sequence[EvidenceCard], size: int = GROUP_CARDS) -> list[list[EvidenceCard]]:
    """The cards in order, in the fewest groups of at most `size`, as even as can be."""
    if not cards:
        return []
    n = math.ceil(len(cards) / size)
    cuts = [round(i * len(cards) / n) for i in range(n + 1)]
    return [list(cards[a:b]) for a, b in itertools.pairwise(cuts)]


def write_group(
    outline: Outline, item: OutlineItem, cards: Sequence[EvidenceCard], write: WriteFn,
    most: int = MAX_CLAIMS,
) -> Draft:  # fmt: skip
    """One structured call writing up to `most` sentences (and no more than cards shown) from
    a group of a chapter's cards."""
    most = max(1, min(most, len(cards), MAX_CLAIMS))
    aliases, listing = card_listing(cards)
    language = "Chinese" if outline.lang == "zh" else "English"
    user = render(
        "research_write", title=item.title, asks=item.asks, question=outline.question,
        cards=data_section(listing, "CARDS"), n=str(min(2, most)), most=str(most),
        language=language,
    )  # fmt: skip
    messages = [Message("system", "You write research briefs from evidence. You output JSON only."),
                Message("user", user)]  # fmt: skip
    labels = tuple(dict.fromkeys(label for c in cards for label in c.labels))
    reply = write(messages, claims_schema(list(aliases), most), labels)
    return parse_written(reply, aliases, most)


def write_with_model(
    outline: Outline, item: OutlineItem, cards: Sequence[EvidenceCard], write: WriteFn,
    *, most: int | None = None, notes: list[str] | None = None,
) -> Draft:  # fmt: skip
    """A chapter in bounded calls, one per group of its cards (`card_groups`), until `most`
    sentences are written (None: as many as the cards allow, one per card at most). The first
    call's refusal (budget, licence, invalid output) is raised, so the caller writes the chapter
    from the cards; a later one leaves that group's cards to their own sentences (said in
    `notes`). A card of a group that no sentence cites — a small model writes fewer sentences
    than it is shown cards — is stated in its own sentence (said in `notes`): what was carded
    for the chapter is never silently left out. A sentence repeating an earlier one is
    dropped."""
    most = len(cards) if most is None else min(most, len(cards))
    draft = Draft()
    raws, start = [], 0
    for n, group in enumerate(card_groups(cards)):
        left = most - len(draft.sentences)
        if left <= 0:
            break
        try:
            part = write_group(outline, item, group, write, left)
            raws.append(part.raw)
        except (BudgetExceeded, LicenceRefused, ModelError, ValueError) as exc:
            if n == 0:
                raise
            part = write_extractive(group, left)
            if notes is not None:
                notes.append(f"cards {start + 1}–{start + len(group)} written as their own "
                             f"sentences: {type(exc).__name__}: {exc}")  # fmt: skip
        _extend(draft, part.sentences, most)
        cited = {c for s in draft.sentences for c in s.cites}
        left_out = [i for i, c in enumerate(group) if c.id not in cited]
        if left_out and len(draft.sentences) < most:
            _extend(draft, write_extractive([group[i] for i in left_out]).sentences, most)
            if notes is not None:
                one = len(left_out) == 1
                notes.append(f"{'card' if one else 'cards'} "
                             f"{number_runs([start + i + 1 for i in left_out])} written as "
                             f"{'its own sentence' if one else 'their own sentences'}: the writer "
                             f"left {'it' if one else 'them'} out")  # fmt: skip
        start += len(group)
    draft.raw = "\n".join(raws)
    return draft


def _extend(draft: Draft, sentences: Sequence[DraftSentence], most: int) -> None:
    for s in sentences:
        if len(draft.sentences) >= most:
            return
        if not any(overlap(s.text, d.text) > REPEAT for d in draft.sentences):
            draft.sentences.append(s)


def write_extractive(cards: Sequence[EvidenceCard], max_claims: int | None = None) -> Draft:
    """The chapter as its cards' own sentences (near-repeats dropped), each citing its card;
    the first `max_claims` (None: one per card)."""
    draft = Draft()
    for card in cards:
        if max_claims is not None and len(draft.sentences) >= max_claims:
            break
        if any(overlap(card.claim, s.text) > REPEAT for s in draft.sentences):
            continue
        draft.sentences.append(DraftSentence(card.claim, [card.id], card.snippet))
    return draft


def publisher(card: EvidenceCard) -> str:
    """A short name for a card's source: the site name a title ends with, else the host."""
    title = card.source_title
    for sep in (" | ", " - ", " — "):
        if sep in title:
            return title.rsplit(sep, 1)[-1].strip()
    if card.url.startswith("http"):
        return card.url.split("/")[2].split(":")[0]
    return title[:60] or "One source"


def conflict_sentences(conflict: Conflict, cards: dict[str, EvidenceCard]) -> list[DraftSentence]:
    """A conflict as each source's own sentence, verbatim, citing its card (who says it and the
    scope go beside it in the conflict table: nothing is combined or paraphrased)."""
    return [
        DraftSentence(cards[v.card_id].snippet, [v.card_id], cards[v.card_id].snippet)
        for v in conflict.values
        if v.card_id in cards
    ]
