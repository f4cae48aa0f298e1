"""One worker: a bounded loop over a sub-question's queries — search, read, what is still
missing, next query — that returns evidence cards, never prose, and a `stop_reason` — `done`,
or the budget that ran out (`budget_tokens`, `budget_calls`, `budget_searches`,
`budget_fetches`, `budget_time`). At the limit the worker stops spending and returns what it
has."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from footnote.config import ResearchSettings
from footnote.errors import BudgetExceeded, LicenceRefused, ModelError
from footnote.events import BudgetTick, Event, InjectionEvent
from footnote.models.budget import Budget
from footnote.models.roles import NO_EXTERNAL
from footnote.pipelines.research.cards import (
    Candidate,
    SelectFn,
    candidates,
    card_id,
    make_card,
    select_with_model,
)
from footnote.pipelines.research.length import cards_wanted
from footnote.pipelines.research.planner import (
    MAX_ROUNDS,
    library_language,
    read_missing,
    rounds_for,
)
from footnote.pipelines.research.sources import Passage, SentenceCloseness, SourceLog, Sources
from footnote.pipelines.research.untrusted import Finding, quarantined_spans, scan
from footnote.types import EvidenceCard, EvidenceStandard, OutlineItem, StopReason, SubQuestion

STOP_REASONS: dict[str, StopReason] = {
    "tokens": "budget_tokens",
    "calls": "budget_calls",
    "searches": "budget_searches",
    "fetches": "budget_fetches",
    "seconds": "budget_time",
}
Emit = Callable[[Event], Awaitable[None]]


@dataclass
class WorkerResult:
    """What a sub-question produced and why it stopped."""

    sub_question: SubQuestion
    cards: list[EvidenceCard]
    stop_reason: StopReason
    log: SourceLog
    used: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    """The queries searched, in order."""


def stop_reason_of(exc: BudgetExceeded) -> StopReason:
    """The stop reason for a budget limit."""
    return STOP_REASONS.get(exc.resource, "budget_tokens")


def overshot(budget: Budget) -> str | None:
    """The first resource this budget (not an ancestor) has used more of than its limit."""
    used = budget.used()
    return next((r for r, limit in budget.limits().items()
                 if limit is not None and used[r] > limit), None)  # fmt: skip


def in_range(published_at: str | None, standard: EvidenceStandard) -> bool:
    """Whether a date is inside the standard's range (undated passes; the checks flag it)."""
    if not published_at:
        return True
    day = published_at[:10]
    if standard.date_from and day < standard.date_from[:10]:
        return False
    return not (standard.date_to and day > standard.date_to[:10])


class BudgetWatch:
    """Emits a budget tick after each step, with a warning the first time a budget passes the
    warn fraction and the resource when it runs out."""

    def __init__(self, scope: str, budget: Budget, warn: float, emit: Emit) -> None:
        self.scope, self.budget, self.warn, self.emit = scope, budget, warn, emit
        self.warned = False

    async def tick(self, exhausted: str | None = None) -> None:
        _resource, fraction = self.budget.fraction_used()
        warning = fraction >= self.warn and not self.warned
        self.warned = self.warned or warning
        await self.emit(
            BudgetTick(
                self.scope, self.budget.used(), self.budget.limits(), round(fraction, 4),
                warning=warning, exhausted=exhausted,
            )
        )  # fmt: skip


@dataclass(frozen=True)
class Query:
    """A query to search, and whether it may go to the web (a query the model wrote after
    reading library text stays in the library)."""

    text: str
    web: bool
    paired: bool = False
    """The same query in the library's language: searched with the one before it, and the
    reader reads both rounds' findings at once."""


async def investigate(
    sq: SubQuestion,
    item: OutlineItem,
    sources: Sources,
    budget: Budget,
    settings: ResearchSettings,
    emit: Emit,
    select: SelectFn | None = None,
    taken: set[str] | None = None,
    reported: set[tuple[str, str]] | None = None,
    *,
    missing: SelectFn | None = None,
    known: Sequence[EvidenceCard] = (),
    lang: str = "en",
    want: int | None = None,
    held: Sequence[EvidenceCard] = (),
) -> WorkerResult:
    """Run one sub-question's bounded loop — per query: search (and fetch), choose cards from
    the new candidates, then (with a `missing` reader) ask what is still unanswered, which
    gives the next query — until nothing is missing, it has enough cards, the rounds its budget
    pays for are spent (`planner.rounds_for`) or the queries run out (`done`), or a budget
    refuses the next step (that budget's stop reason). `known`: the cards of the items this one
    depends on, shown to the reader. `want`: the cards to gather in this call (None: `wanted`,
    what its chapter aims at); `held`: its cards from an earlier round (the reader's findings)."""
    log = SourceLog()
    watch = BudgetWatch(sq.id, budget, settings.warn_fraction, emit)
    stop: StopReason = "done"
    notes: list[str] = []
    focus = f"{item.title} {item.asks}"
    seen: set[tuple[str, int]] = set()
    chosen: list[Candidate] = []
    want = wanted(settings, budget) if want is None else want
    taken = taken if taken is not None else set()
    """Cards other sub-questions already hold: left to them, so chapters rest on different cards."""
    reported = reported if reported is not None else set()
    """(passage, kind) injection attempts already reported on the run (each is logged once)."""
    findings: dict[str, list[Finding]] = {}
    quarantined = quarantine(findings)
    tried: list[str] = []
    refused: BudgetExceeded | None = None
    queue = [Query(q, sq.web) for q in sq.queries]
    rounds, max_rounds = 0, MAX_ROUNDS
    library_texts: list[str] = []

    def skip(p: Passage, start: int, end: int) -> bool:
        """Offered by an earlier search (so a passage found again offers its next sentences),
        held by another sub-question, or inside an injection attempt."""
        return (
            (_where(p), start) in seen
            or card_id(p, start, end) in taken
            or quarantined(p, start, end)
        )

    while queue:
        query = queue.pop(0)
        if query.text.lower() in {t.lower() for t in tried}:
            continue
        try:
            budget.check()
        except BudgetExceeded as exc:
            stop = stop_reason_of(exc)
            break
        tried.append(query.text)
        got, exceeded = await asyncio.to_thread(sources.gather, query.text, query.web, budget, log)
        kept = [p for p in got if in_range(p.published_at, item.standard)]
        if len(got) > len(kept):
            notes.append(f"{len(got) - len(kept)} passages outside the date range dropped")
        library_texts += [p.text for p in kept if p.block is not None]
        for event in injection_events(kept, findings, reported):
            await emit(event)
        pool = shown_at_once(want)
        found, why = ranked(sq.question, focus, kept, pool, skip, sources.closeness)
        if why:
            notes.append(why)
        fresh = found[:pool]
        seen.update((_where(c.passage), c.start) for c in fresh)
        picked = fresh[: want - len(chosen)]
        if select is not None and fresh:
            try:
                budget.check()
                by_model = await asyncio.to_thread(
                    select_by_trust_domain, sq.question, fresh, select
                )
                notes.append(
                    f"{query.text!r}: the model kept {len(by_model)} of {len(fresh)} candidates"
                )
                picked = by_model[: want - len(chosen)]
            except BudgetExceeded as exc:
                if budget.exceeded():
                    exceeded = exceeded or exc
                    notes.append("the budget ran out before selection: candidates ranked by code")
                else:  # the call would not fit what is left: code ranks from here on
                    select, refused = None, exc
                    notes.append(
                        f"selection by code from {query.text!r} on: the call would not fit ({exc})"
                    )
            except (LicenceRefused, ModelError, ValueError) as exc:
                notes.append(f"selection by code: {type(exc).__name__}: {exc}")
        chosen += picked
        rounds += 1
        if exceeded is not None:
            stop = stop_reason_of(exceeded)
            await watch.tick(exceeded.resource)
            break
        await watch.tick()
        if len(chosen) >= want:
            if missing is not None:
                notes.append(f"stopped at {want} cards: {enough_rule(settings)}")
            break
        if missing is None or (queue and queue[0].paired):
            continue
        if rounds >= max_rounds:
            notes.append(f"stopped after {rounds} rounds: what the budget pays for")
            break
        lib_lang = library_language(library_texts)
        try:
            budget.check()
            need = await asyncio.to_thread(
                read_missing, missing, sq.question,
                [*(h.snippet for h in held), *(c.text for c in chosen)], known, tried,
                lang=lang, library_lang=lib_lang,
                labels=tuple(dict.fromkeys(
                    lab for x in (*[c.passage.labels for c in chosen],
                                  *[k.labels for k in (*known, *held)])
                    for lab in x)),
            )  # fmt: skip
        except BudgetExceeded as exc:
            if budget.exceeded():
                stop = stop_reason_of(exc)
                break
            missing, refused = None, exc
            notes.append(f"the plan's queries from here on: the missing call would not fit ({exc})")
            continue
        except (LicenceRefused, ModelError, ValueError) as exc:
            missing = None
            notes.append(f"the plan's queries from here on: {type(exc).__name__}: {exc}")
            continue
        if rounds == 1:
            max_rounds = rounds_for(budget.limits(), budget.used())
        if not need.missing:
            notes.append(f"after {rounds} round(s) the reader found nothing missing")
            break
        notes.append(f"still missing after {query.text!r}: {'; '.join(need.missing)[:300]}")
        # a query written after reading library or labelled text is searched in the library only
        internal = any(c.passage.block is not None or c.passage.labels for c in chosen) or any(
            k.block_id or k.labels for k in (*known, *held)
        )
        follow = [Query(need.next_query, sq.web and not internal)]
        if lib_lang and lib_lang != lang:
            if need.library_query:
                follow.append(Query(need.library_query, False, paired=True))
            else:
                notes.append(f"no query in the library's language ({lib_lang}) was given")
        queue = follow + queue
    if stop == "done" and refused is not None:
        stop = stop_reason_of(refused)
    if stop == "done" and (over := overshot(budget)) is not None:
        stop = STOP_REASONS[over]
        notes.append(f"a call went over the sub-question's {over} budget: not done")
    attempts = sum(len(f) for f in findings.values())
    if attempts:
        notes.append(
            f"{attempts} injection attempt(s) found: their passages quarantined, never cards"
        )
    cards = [make_card(c, sq.id) for c in chosen]
    taken |= {c.id for c in cards}
    return WorkerResult(sq, cards, stop, log, budget.used(), notes, tried)


def ranked(
    question: str, focus: str, passages: Sequence[Passage], pool: int,
    skip: Callable[[Passage, int, int], bool], closeness: SentenceCloseness | None,
) -> tuple[list[Candidate], str]:  # fmt: skip
    """`cards.candidates`, with the sentences' closeness to the question where `closeness`
    is given; when the embedder refuses (licence, failure) by words alone, and the note why."""
    if closeness is not None and passages:
        labels = tuple(dict.fromkeys(lab for p in passages for lab in p.labels))
        try:
            return candidates(question, focus, passages, pool, skip=skip,
                              closeness=lambda texts: closeness(question, texts, labels)), ""  # fmt: skip
        except (LicenceRefused, ModelError, ValueError) as exc:
            why = f"sentences ranked by words: {type(exc).__name__}: {exc}"
            return candidates(question, focus, passages, pool, skip=skip), why
    return candidates(question, focus, passages, pool, skip=skip), ""


SELECT_AT_ONCE = 24
"""The most candidates one selection call reads (a small model's context stays bounded however
many cards the chapter wants; more come from the next round)."""


def wanted(settings: ResearchSettings, budget: Budget) -> int:
    """What is enough for a sub-question: the cards its chapter aims at at this budget
    (`length.cards_wanted`: `research.cards_per_question`, else `research.target_pages` and the
    budget's shares)."""
    parent = budget.parent.limits() if budget.parent is not None else None
    return cards_wanted(settings, budget.limits(), parent)


def shown_at_once(want: int) -> int:
    """Candidates a round keeps for selection: twice the cards wanted, at most `SELECT_AT_ONCE`."""
    return min(2 * want, SELECT_AT_ONCE)


def enough_rule(settings: ResearchSettings) -> str:
    """Where a sub-question's card count comes from, for its notes."""
    if settings.cards_per_question:
        return "research.cards_per_question"
    return f"its chapter's share of research.target_pages ({settings.target_pages:g}) at its budget"


def _where(p: Passage) -> str:
    return p.block.id if p.block is not None else p.source_id


def injection_events(
    passages: list[Passage], findings: dict[str, list[Finding]], reported: set[tuple[str, str]]
) -> list[InjectionEvent]:
    """Scan the passages not scanned yet (into `findings`, by block or snapshot id) and return
    an event for each injection attempt not yet `reported` on the run."""
    events = []
    for p in passages:
        where = _where(p)
        if where not in findings:
            findings[where] = scan(p.text)
        for f in findings[where]:
            if (where, f.kind) not in reported:
                reported.add((where, f.kind))
                events.append(InjectionEvent(where, f.kind, f.excerpt))
    return events


def quarantine(findings: dict[str, list[Finding]]) -> Callable[[Passage, int, int], bool]:
    """The candidates' filter: a sentence inside a finding's quarantined passage (its paragraph
    and the neighbouring ones, `untrusted.quarantined_spans`), not the whole page."""
    spans: dict[str, list[tuple[int, int]]] = {}

    def quarantined(p: Passage, start: int, end: int) -> bool:
        where = _where(p)
        if where not in spans:
            spans[where] = quarantined_spans(p.text, findings.get(where, []))
        return any(start < b and end > a for a, b in spans[where])

    return quarantined


def select_by_trust_domain(
    question: str, found: list[Candidate], select: SelectFn
) -> list[Candidate]:
    """The model's choice, made apart for library passages and for outside ones (web,
    scholarly, licensed): the call that reads fetched text never sees internal documents, so
    an injected page has no internal text in reach (least privilege for the web reader). Within
    each, passages the model may not see (`no-external-model` for an external one) are ranked
    by code instead, so one labelled passage does not keep the rest from the model."""
    groups: dict[tuple[bool, bool], list[Candidate]] = {}
    for c in found:
        key = (c.passage.block is not None, NO_EXTERNAL in c.passage.labels)
        groups.setdefault(key, []).append(c)
    chosen = []
    for key in sorted(groups, reverse=True):
        try:
            chosen.append(select_with_model(question, groups[key], select))
        except LicenceRefused:
            chosen.append(groups[key])  # ranked by code
    if len(chosen) == 1:
        return chosen[0]
    mixed: list[Candidate] = []  # each list keeps its own order; they alternate
    for pair in zip_longest(*chosen):
        mixed += [c for c in pair if c is not None]
    return mixed


def cards_by_item(
    cards: Sequence[EvidenceCard], plan_: Sequence[SubQuestion], results: dict[str, dict[str, Any]]
) -> dict[str, list[EvidenceCard]]:
    """Each item's cards: those its sub-questions found (a card can serve several items)."""
    by_id = {c.id: c for c in cards}
    out: dict[str, list[EvidenceCard]] = {}
    for sq in plan_:
        ids = results.get(sq.id, {}).get("card_ids", [])
        bound = out.setdefault(sq.item_id, [])
        bound += [by_id[i] for i in ids if i in by_id and by_id[i] not in bound]
    return out
