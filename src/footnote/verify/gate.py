"""The one verification path: every citation of a draft checked against the evidence shown.

`check_draft` runs the per-citation checks of `verify.checks` over a draft (ask, chat, research,
settings extraction, graph answers over result rows); `verification_events` turns their outcome into events;
`verify_text_answer` is the whole gate for free text (an agent's final answer): draft → checks
(with the judge) → the answer built by `AnswerBuilder`. Only the evidence actually shown to the
model is citable: any other id is fabricated, dropped and counted; a quote found in another
shown item is re-cited and counted as such.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from footnote.events import AnswerDelta, CitationEvent, Done, Event, Final, Status, Verification
from footnote.textnorm import text_lang
from footnote.types import Answer, Block, Usage, flat_sentence
from footnote.verify.answer import AnswerBuilder
from footnote.verify.checks import CitationCheck, Judge, Thresholds, check_citation
from footnote.verify.draft import Draft, draft_from_cited_text
from footnote.verify.evidence import Evidence, EvidenceSet
from footnote.verify.scoring import relevance

SpanFn = Callable[..., AbstractContextManager[dict[str, Any]]]
"""`span(kind, name, **data)`: a context manager whose dict is filled with results (a trace)."""
MAX_CITES_CHECKED = 3
"""Citations checked per sentence; later ones are ignored."""


def check_draft(
    draft: Draft,
    evidence: EvidenceSet,
    *,
    judge: Judge | None = None,
    thresholds: Thresholds = Thresholds(),
    span: SpanFn | None = None,
    question: str = "",
    max_cites: int | None = MAX_CITES_CHECKED,
) -> list[list[CitationCheck]]:
    """The checks of every (sentence, citation) pair of a draft, sentence by sentence
    (`question`: what a yes/no sentence answers; `max_cites`: citations checked per sentence,
    None for all — a graph sentence may list one row per value)."""
    results: list[list[CitationCheck]] = []
    for sentence in draft.sentences:
        row = []
        cites = sentence.cites[:max_cites] if max_cites is not None else sentence.cites
        for cite in cites:
            scope = (
                span("check", "citation", evidence_id=cite, sentence=sentence.text)
                if span is not None
                else nullcontext({})
            )
            with scope as record:
                c = check_citation(
                    sentence.text,
                    cite,
                    evidence,
                    quote=sentence.quote,
                    judge=judge,
                    thresholds=thresholds,
                    question=question,
                    companions=[c for c in cites if c != cite],
                    by_code=sentence.by_code,
                )
                record.update(
                    verdict=c.verdict,
                    fabricated=c.fabricated,
                    recited_from=c.recited_from,
                    reasons=c.reasons,
                    judge_p=c.judge_p,
                )
            row.append(c)
        results.append(row)
    return results


def verification_events(checks: Sequence[Sequence[CitationCheck]]) -> list[Verification]:
    """One `verification` event per checked citation."""
    return [
        Verification(
            i, c.evidence_id, "fabricated" if c.fabricated else c.verdict, reasons=c.reasons
        )
        for i, row in enumerate(checks)
        for c in row
    ]


def answer_events(answer: Answer) -> list[Event]:
    """The checked answer as it streams: each sentence's text, then its citations."""
    events: list[Event] = []
    for i, sentence in enumerate(answer.sentences):
        text = flat_sentence(sentence.text, insufficient=sentence.marked_insufficient)
        events.append(AnswerDelta(text + " "))
        events += [CitationEvent(i, c) for c in sentence.citations]
    return events


def checked_answer_events(
    builder: AnswerBuilder, draft: Draft, checks: list[list[CitationCheck]]
) -> list[Event]:
    """The events that close a checked draft: its verifications, then the answer `builder`
    makes of it (a refusal when the draft refused or holds no sentence), final and done."""
    events: list[Event] = list(verification_events(checks))
    if draft.refused or not draft.sentences:
        builder.note_refusal(draft)
    else:
        builder.add_round(draft, checks)
    answer = builder.build(nearest=(), usage=Usage())
    return [*events, *answer_events(answer), Final(answer), Done()]


async def verify_text_answer(
    question: str,
    text: str,
    blocks: Sequence[Block],
    *,
    thresholds: Thresholds = Thresholds(),
    judge: Judge | None,
    span: SpanFn | None = None,
) -> AsyncIterator[Event]:
    """Check a free-text answer against the blocks shown to its author, exactly as ask checks
    its own. `judge` is required (pass None only where no judge role is bound)."""
    items = [
        Evidence(
            b.id,
            b.table.as_text() if b.table is not None else b.text,
            b,
            relevance=relevance(question, b.text, None),
        )
        for b in blocks
    ]
    yield Status("verify", "checking the agent's answer")
    evidence = EvidenceSet(items)
    draft = draft_from_cited_text(text, evidence, question=question)
    builder = AnswerBuilder(
        question, evidence, text_lang(question), judge=judge, thresholds=thresholds
    )
    checks = await asyncio.to_thread(
        check_draft,
        draft,
        evidence,
        judge=judge,
        thresholds=thresholds,
        span=span,
        question=question,
    )
    for event in checked_answer_events(builder, draft, checks):
        yield event
