"""The research pipeline: plan → investigate (parallel where independent) → merge → conflicts
→ synthesise (no network) → check → checklist → brief, as an async generator of typed events.

The outline must have been confirmed by the analyst first. Every stage persists its artifact
in the research store and is skipped when a resumed run finds it there. Budgets are enforced
by the executor: each sub-question spends a child of the run's budget and stops at its limit
with a `stop_reason`; near the run's limit no new sub-question starts, the checklist is written
first and the brief says what it does not cover. Sub-questions gather their cards in turns
(`fair`): none grows past its first share before every one has had its first.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from footnote.config import ResearchSettings
from footnote.errors import BudgetExceeded, LicenceRefused, ModelError, UsageError
from footnote.events import (
    BriefEvent,
    CardEvent,
    CheckEvent,
    ChecklistEvent,
    ConflictEvent,
    DraftEvent,
    Event,
    InjectionEvent,
    OutlineEvent,
    PlanEvent,
    Status,
    SubQuestionStart,
    SubQuestionStop,
)
from footnote.models.budget import Budget
from footnote.pipelines.research.answered import answered
from footnote.pipelines.research.cards import SelectFn
from footnote.pipelines.research.chapter import check_chapter, restate_lost
from footnote.pipelines.research.checks import (
    JUDGE_NOT_USED,
    card_problems,
    coverage,
    flag_for_review,
    judge_not_used,
    not_covered,
)
from footnote.pipelines.research.claims import write_claims
from footnote.pipelines.research.closeness import relevant_to
from footnote.pipelines.research.conflicts import find_conflicts, scope_sentences
from footnote.pipelines.research.crosslang import library_query, with_query
from footnote.pipelines.research.fair import (
    ROUNDS,
    child_budget,
    grown,
    grows,
    later,
    record_of,
    remaining,
    round_note,
    target,
)
from footnote.pipelines.research.investigate import (
    STOP_REASONS,
    BudgetWatch,
    WorkerResult,
    cards_by_item,
    investigate,
    wanted,
)
from footnote.pipelines.research.merge import (
    MergeResult,
    apply_merge,
    independent_origins,
    merge_sources,
    origin_key,
)
from footnote.pipelines.research.models import ResearchModels
from footnote.pipelines.research.outline import plan
from footnote.pipelines.research.sources import Sources
from footnote.pipelines.research.synthesise import (
    conflict_sentences,
    write_extractive,
    write_with_model,
)
from footnote.pipelines.trace import Trace
from footnote.serialize import from_plain, to_plain
from footnote.store.base import ResearchStore
from footnote.types import (
    Brief,
    BriefSection,
    ChecklistItem,
    Claim,
    Conflict,
    EvidenceCard,
    Outline,
    OutlineItem,
    SubQuestion,
)
from footnote.verify import Thresholds
from footnote.verify.draft import Draft

STAGES = ("plan", "investigate", "merge", "conflicts", "draft", "checks", "checklist", "brief")


@dataclass
class ResearchDeps:
    """What a research run needs; chosen by the workspace (the composition root)."""

    research: ResearchStore
    sources: Sources
    settings: ResearchSettings
    models: ResearchModels = field(default_factory=ResearchModels)
    thresholds: Thresholds = field(default_factory=Thresholds)
    trace: Trace = field(default_factory=Trace)
    block_text: Callable[[str], str | None] = lambda _id: None
    clock: Callable[[], float] = time.monotonic


def run_budget(
    options: dict[str, Any], settings: ResearchSettings, clock: Callable[[], float]
) -> Budget:
    """The run's budget from its options (falling back to the settings), resumed where it was."""
    used = options.get("used", {})
    offset = float(used.get("seconds", 0.0))
    start = clock()

    def limit(name: str) -> float:
        value = options.get(f"budget_{name}")
        return float(getattr(settings, f"budget_{name}") if value is None else value)

    budget = Budget(
        int(limit("tokens")),
        int(limit("calls")),
        limit("minutes") * 60,
        max_searches=int(limit("searches")),
        max_fetches=int(limit("fetches")),
        clock=lambda: clock() - start + offset,
    )
    budget.charge(int(used.get("tokens", 0)), int(used.get("calls", 0)),
                  searches=int(used.get("searches", 0)), fetches=int(used.get("fetches", 0)))  # fmt: skip
    return budget


class ResearchPipeline:
    """Runs one confirmed research run to its brief."""

    def __init__(self, deps: ResearchDeps, run_id: str) -> None:
        self.deps, self.run_id = deps, run_id
        self.store, self.settings = deps.research, deps.settings
        record = self.store.get_research(run_id)
        if record is None:
            raise UsageError(f"no research run {run_id!r}")
        self.options = dict(record.options)
        saved = self.store.get_artifact(run_id, "outline")
        if saved is None:
            raise UsageError(f"research run {run_id} has no outline")
        self.outline = from_plain(Outline, saved)
        if not self.outline.confirmed:
            raise UsageError("the outline has not been confirmed: confirm or edit it first")
        self.budget = run_budget(self.options, self.settings, deps.clock)
        self.options.setdefault("review_seed", random.SystemRandom().randrange(2**32))
        self.seed = int(self.options["review_seed"])
        """The review sample's seed: drawn once per run, kept in its options, logged."""
        self.items = {i.id: i for i in self.outline.items}
        self._merge_result = MergeResult()
        self._taken: set[str] = set()
        """Card ids the run's sub-questions hold so far (each prefers cards no other holds)."""
        self._written: set[str] = set()
        """Cards already written out verbatim in an earlier chapter (not repeated)."""
        self._library_query = ""
        """The question in the library's language (`crosslang`; empty: none)."""
        self._reported: set[tuple[str, str]] = set()
        """Injection attempts already logged as events (each once per run)."""

    def _save_usage(self) -> None:
        self.options["used"] = self.budget.used()
        self.store.set_research_state(self.run_id, "running", self.options)

    async def run(self) -> AsyncIterator[Event]:
        """The run's events, ending with the brief."""
        self.store.set_research_state(self.run_id, "running", self.options)  # the seed kept
        yield OutlineEvent(self.outline)
        plan_ = await self._plan()
        yield PlanEvent(tuple(plan_))
        planner = self.options.get("planner")
        if isinstance(planner, dict):  # who proposed the outline, and why (a fallback says so)
            yield Status("plan", str(planner.get("note", "")))
        yield Status("plan", f"review sample: {self.settings.review_sample_rate:.0%} of each "
                     f"chapter's claims besides key figures, drawn with seed {self.seed}")  # fmt: skip
        results: dict[str, dict[str, Any]] = dict(self.store.artifacts(self.run_id, "investigate"))
        self._taken |= {i for r in results.values() for i in r.get("card_ids", [])}
        async for event in self._investigate_all(plan_, results):
            yield event
        self._save_usage()
        cards = self.store.cards(self.run_id)
        yield Status("merge", f"merging {len(cards)} cards from their sources")
        merge, cards = await asyncio.to_thread(self._merge, cards)
        by_item = cards_by_item(cards, plan_, results)
        conflicts = self._conflicts(cards, by_item)
        for conflict in conflicts:
            yield ConflictEvent(conflict)
        wrapped = any(r.get("skipped") for r in results.values()) or self.budget.near_limit(
            self.settings.wrap_up_fraction
        )
        if wrapped:  # the checklist first: what is covered is known before anything is written
            early = [
                self._coverage(i, [], by_item, cards, conflicts, merge, results)
                for i in self.outline.items
            ]
            self.store.put_artifact(self.run_id, "checklist_wrapup", "", {"items": to_plain(early)})
            yield ChecklistEvent(tuple(early), wrapped_up=True)
        self.deps.sources.close_network("synthesis and checks have no network access")
        sections: list[BriefSection] = []
        for n, item in enumerate(self.outline.items, 1):
            yield Status(
                "synthesise",
                f"writing and checking chapter {n} of {len(self.outline.items)}: {item.title}",
            )
            async for event in self._section(
                item, by_item.get(item.id, []), conflicts, wrapped, sections
            ):
                yield event
            self._save_usage()
        all_cards = {c.id: c for c in cards}
        checklist = [
            self._coverage(i, list(s.claims), by_item, cards, conflicts, merge, results)
            for i, s in zip(self.outline.items, sections, strict=True)
        ]
        checklist = [
            replace(c, reasons=(*c.reasons, f"{JUDGE_NOT_USED}: support not judged by a model"))
            if judge_not_used(s.notes) else c
            for s, c in zip(sections, checklist, strict=True)
        ]  # fmt: skip
        sections = [
            BriefSection(s.item_id, s.title, s.claims, bound_cards=s.bound_cards, coverage=c.state, notes=s.notes)
            for s, c in zip(sections, checklist, strict=True)
        ]  # fmt: skip
        self.store.put_artifact(self.run_id, "checklist", "", {"items": to_plain(checklist)})
        yield ChecklistEvent(
            tuple(checklist), sample_rate=self.settings.review_sample_rate, wrapped_up=wrapped
        )
        used = {c for s in sections for cl in s.claims for c in cl.card_ids}
        brief = Brief(
            self.run_id, self.outline.question, self.outline, tuple(sections), tuple(cards),
            mode="brief", conflicts=tuple(conflicts), checklist=tuple(checklist),
            not_covered=not_covered(checklist),
            unused_cards=tuple(i for i in all_cards if i not in used), wrapped_up=wrapped,
            sample_rate=self.settings.review_sample_rate, budget_used=self.budget.used(),
            review={"state": "unreviewed"},
        )  # fmt: skip
        self.store.put_artifact(self.run_id, "brief", "", to_plain(brief))
        self._save_usage()
        self.store.set_research_state(
            self.run_id, "wrapped_up" if wrapped else "completed", self.options
        )
        yield BriefEvent(brief)

    # -- stages ----------------------------------------------------------------------------
    async def _plan(self) -> list[SubQuestion]:
        saved = self.store.get_artifact(self.run_id, "plan")
        if saved is not None:
            self._library_query = str(saved.get("library_query", {}).get("query", ""))
            return [from_plain(SubQuestion, s) for s in saved["sub_questions"]]
        sub_questions = plan(self.outline, self.budget.limits(), reserve=self.settings.reserve_fraction,
                             parallel=self.settings.parallel)  # fmt: skip
        found = await asyncio.to_thread(library_query, self.outline, self.deps.sources, self.budget,
                                        self.deps.models.library_query_fn(self.budget))  # fmt: skip
        self._library_query = found.query
        sub_questions = with_query(sub_questions, found.query)
        self.store.put_artifact(self.run_id, "plan", "", {"sub_questions": to_plain(sub_questions),
                                                          "library_query": to_plain(found)})  # fmt: skip
        return sub_questions

    async def _investigate_all(
        self, plan_: list[SubQuestion], results: dict[str, dict[str, Any]]
    ) -> AsyncIterator[Event]:
        """In rounds (`fair`): every sub-question gathers its first share, then those that
        want more grow; in each round an item waits for the items it depends on."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        sem = asyncio.Semaphore(self.settings.parallel)
        everything: list[asyncio.Task[None]] = []
        watch = BudgetWatch("run", self.budget, self.settings.warn_fraction, queue.put)
        Step = Callable[[SubQuestion, asyncio.Queue[Event], dict[str, dict[str, Any]]], Any]

        async def one(sq: SubQuestion, tasks: dict[str, asyncio.Task[None]], step: Step) -> None:
            for dep in sq.depends_on:
                if dep in tasks:
                    await tasks[dep]
            async with sem:
                await step(sq, queue, results)
                await watch.tick()

        async def rounds() -> None:
            for round_ in range(ROUNDS):
                tasks: dict[str, asyncio.Task[None]] = {}
                for sq in plan_:
                    record = results.get(sq.id, {})
                    if (sq.id not in results) if round_ == 0 else later(record, round_):
                        step = self._one if round_ == 0 else partial(self._grow, round_)
                        tasks[sq.id] = asyncio.create_task(one(sq, tasks, step))
                if round_ and tasks:
                    await queue.put(Status("investigate", round_note(round_, list(tasks))))
                everything.extend(tasks.values())
                await asyncio.gather(*tasks.values())

        done = asyncio.ensure_future(rounds())
        try:
            while not (done.done() and queue.empty()):
                getter: asyncio.Future[Event] = asyncio.ensure_future(queue.get())
                waiting: set[asyncio.Future[Any]] = {getter, done}
                finished, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if getter in finished:
                    yield getter.result()
                else:
                    getter.cancel()
            done.result()
        finally:
            done.cancel()
            for t in everything:
                t.cancel()

    def _wrapping_up(self) -> tuple[str, float] | None:
        """The run's most used resource and its share, when no sub-question may start."""
        resource, fraction = self.budget.fraction_used()
        if fraction >= self.settings.wrap_up_fraction or self.budget.exceeded():
            return resource, fraction
        return None

    async def _one(
        self, sq: SubQuestion, queue: asyncio.Queue[Event], results: dict[str, dict[str, Any]]
    ) -> None:
        """A sub-question's first round: its first share of cards (`fair.target`)."""
        if (late := self._wrapping_up()) is not None:
            resource, fraction = late
            reason = STOP_REASONS.get(resource, "budget_tokens")
            record: dict[str, Any] = {"stop_reason": reason, "card_ids": [], "skipped": True,
                      "notes": [f"not started: the run's {resource} budget is {fraction:.0%} used"]}  # fmt: skip
            self.store.put_artifact(self.run_id, "investigate", sq.id, record)
            results[sq.id] = record
            await queue.put(SubQuestionStop(sq.id, reason, 0, used={}))
            return
        child = child_budget(self.budget, sq.budget)
        want = wanted(self.settings, child)
        await queue.put(SubQuestionStart(sq))
        result = await self._gather(sq, queue, child, target(want, 0), results, [])
        record = {**record_of(result), "want": want, "round": 0}
        if grows(len(result.cards), want, 0, result.stop_reason):
            record["grow"] = True
            record["notes"].append(f"turn 1: {len(result.cards)} of {want} cards; more once "
                                   "every chapter has had its turn")  # fmt: skip
        await self._finish(sq, queue, results, record, result.cards)

    async def _grow(
        self, round_: int, sq: SubQuestion, queue: asyncio.Queue[Event],
        results: dict[str, dict[str, Any]],
    ) -> None:  # fmt: skip
        """A later round of a sub-question: up to the round's share (`fair.target`), from what
        is left of its budget (the run's wrap-up stops it, as it stops a first round)."""
        first = results[sq.id]
        have, want = list(first.get("card_ids", [])), int(first["want"])
        if (late := self._wrapping_up()) is not None:
            resource, fraction = late
            note = f"kept its {len(have)} cards: the run's {resource} budget is {fraction:.0%} used"
            record = {**first, "grow": False, "notes": [*first.get("notes", []), note]}
            self.store.put_artifact(self.run_id, "investigate", sq.id, record)
            results[sq.id] = record
            return
        child = child_budget(self.budget, remaining(sq.budget, first.get("used", {})))
        await queue.put(SubQuestionStart(sq))
        result = await self._gather(
            sq, queue, child, target(want, round_) - len(have), results, have
        )
        more = record_of(result)
        more["notes"] = [f"turn {round_ + 1}: {len(result.cards)} more cards", *more["notes"]]
        record = {**grown(first, more), "round": round_}
        if grows(len(record["card_ids"]), want, round_, record["stop_reason"]):
            record["grow"] = True
        await self._finish(sq, queue, results, record, result.cards)

    async def _gather(
        self, sq: SubQuestion, queue: asyncio.Queue[Event], child: Budget, want: int,
        results: dict[str, dict[str, Any]], own: list[str],
    ) -> WorkerResult:  # fmt: skip
        """Up to `want` cards for a sub-question (its reader shown its `own` earlier cards and
        those of the items it depends on), their claims written, stored."""
        item = self.items[sq.item_id]
        needed = {i for d in sq.depends_on for i in results.get(d, {}).get("card_ids", [])}
        cards = self.store.cards(self.run_id) if needed or own else []
        known = [c for c in cards if c.id in needed and c.id not in own]
        held = [c for c in cards if c.id in own]
        result: WorkerResult = await investigate(
            sq, item, self.deps.sources, child, self.settings, queue.put,
            self.deps.models.select_fn(child) if self.settings.select != "rules" else None,
            self._taken, self._reported, missing=self._missing_fn(child), known=known,
            lang=self.outline.lang, want=want, held=held,
        )  # fmt: skip
        if self.settings.model_claims:  # each card's claim: the model's where the gate passes it
            result.cards, outcomes = await asyncio.to_thread(
                write_claims, sq.question, f"{item.title} {item.asks}", result.cards,
                self.deps.models.select_fn(child), thresholds=self.deps.thresholds,
                judge_for=lambda labels: self.deps.models.judge_fn(child, labels))  # fmt: skip
            result.notes += [o.note for o in outcomes]
        self.store.put_cards(self.run_id, result.cards)
        return result

    async def _finish(
        self, sq: SubQuestion, queue: asyncio.Queue[Event], results: dict[str, dict[str, Any]],
        record: dict[str, Any], new: list[EvidenceCard],
    ) -> None:  # fmt: skip
        self.store.put_artifact(self.run_id, "investigate", sq.id, record)
        results[sq.id] = record
        for card in new:
            await queue.put(CardEvent(card))
        await queue.put(SubQuestionStop(sq.id, record["stop_reason"], len(record["card_ids"]),
                                        used=record["used"], refused=record["refused"],
                                        failed=record["failed"]))  # fmt: skip

    def _missing_fn(self, budget: Budget) -> SelectFn | None:
        """The "what is still missing" reader of a sub-question (None: the plan's queries)."""
        if self.settings.planner == "template":
            return None
        return self.deps.models.missing_fn(budget)

    def _merge(self, cards: list[EvidenceCard]) -> tuple[MergeResult, list[EvidenceCard]]:
        snaps = {}
        for c in cards:
            if c.snapshot_id and c.snapshot_id not in snaps:
                snap = self.store.get_snapshot(c.snapshot_id)
                if snap is not None:
                    snaps[snap.id] = snap
        library = sorted({c.source_id for c in cards if c.block_id})
        merge = merge_sources(
            list(snaps.values()), library, threshold=self.settings.near_duplicate,
            min_confidence=self.settings.attribution_confidence,
            same_story=self.deps.models.same_story_fn(self.budget),
        ) if snaps or library else MergeResult()  # fmt: skip
        merged = apply_merge(cards, merge)
        self.store.put_cards(self.run_id, merged)
        self.store.put_artifact(self.run_id, "merge", "", to_plain({
            "same_document": merge.same_document, "decisions": merge.decisions,
            "independence": merge.independence, "origin_of": merge.origin_of,
            "source_type": merge.source_type, "by_origin": merge.by_origin,
            "undecided": merge.undecided}))  # fmt: skip
        self._merge_result = merge
        return merge, merged

    def _text_of(self, card: EvidenceCard) -> str | None:
        if card.block_id:
            return self.deps.block_text(card.block_id)
        snap = self.store.get_snapshot(card.snapshot_id or "")
        return snap.text if snap else None

    def _conflicts(
        self, cards: list[EvidenceCard], by_item: dict[str, list[EvidenceCard]]
    ) -> list[Conflict]:
        merge = self._merge_result
        items_of: dict[str, list[str]] = {}
        for item_id, bound in by_item.items():
            for c in bound:
                items_of.setdefault(c.id, []).append(item_id)
        notes: list[str] = []
        closeness, floor = self.deps.sources.closeness, self.settings.figure_relevance
        conflicts = find_conflicts(
            cards, origin=lambda c: origin_key(c, merge),
            scope_of=lambda c: scope_sentences(self._text_of(c) or "", c.span),
            items_of=lambda c: items_of.get(c.id, []), fx_rates=self.settings.fx_rates,
            relevant=relevant_to((self.outline.question, self._library_query), closeness, floor, notes)
            if closeness and floor else None,
        )  # fmt: skip
        self.store.put_artifact(self.run_id, "conflicts", "",
                                {"conflicts": to_plain(conflicts), "notes": notes})  # fmt: skip
        return conflicts

    def _coverage(
        self, item: OutlineItem, claims: list[Claim], by_item: dict[str, list[EvidenceCard]],
        cards: list[EvidenceCard], conflicts: list[Conflict], merge: MergeResult,
        results: dict[str, dict[str, Any]],
    ) -> ChecklistItem:  # fmt: skip
        reasons = [
            str(r.get("stop_reason", "done")) for k, r in results.items() if k == f"sq-{item.id}"
        ]
        record = results.get(f"sq-{item.id}", {})
        searched = not record.get("skipped") and bool(record.get("queries", True))
        by_id, answers = (
            {c.id: c for c in cards},
            self.deps.models.answers_fn(self.budget, self.outline.question),
        )
        return coverage(item, claims, by_id, conflicts,
                        lambda cs: independent_origins(cs, merge), reasons, len(by_item.get(item.id, [])),
                        searched=searched, queries=record.get("queries", ()), paywalled=record.get("paywalled", ()),
                        answered=answered(item.asks, claims, by_id, answers))  # fmt: skip

    async def _section(
        self, item: OutlineItem, bound: list[EvidenceCard], conflicts: list[Conflict],
        wrapped: bool, sections: list[BriefSection],
    ) -> AsyncIterator[Event]:  # fmt: skip
        notes: list[str] = []
        good = [c for c in bound if not card_problems(c, self._text_of, item)]
        for c in bound:
            if c not in good:
                notes.append(
                    f"card {c.id} left out: {'; '.join(card_problems(c, self._text_of, item))}"
                )
        bound = good
        mine = [c for c in conflicts if item.id in c.item_ids]
        in_conflict = {v.card_id for c in mine for v in c.values}
        fresh = [c for c in bound if c.id not in in_conflict and c.id not in self._written]
        if len(fresh) < 2:  # a chapter may repeat two cards rather than stay empty
            fresh += [c for c in bound if c.id not in in_conflict and c not in fresh][
                : 2 - len(fresh)
            ]
        draft, writer = self._write(item, fresh, wrapped, notes)
        kinds = ["claim"] * len(draft.sentences)
        cards = {c.id: c for c in bound}
        for conflict in mine:
            extra = conflict_sentences(conflict, cards)
            draft.sentences += extra
            kinds += ["conflict"] * len(extra)
        if writer == "extractive" or mine:
            self._written |= {i for s in draft.sentences for i in s.cites}
        yield DraftEvent(item.id, tuple(Claim(f"{item.id}-c{n + 1}", s.text, tuple(s.cites))
                                        for n, s in enumerate(draft.sentences)), writer=writer)  # fmt: skip
        self.store.put_artifact(
            self.run_id,
            "draft",
            item.id,
            {"writer": writer, "sentences": to_plain(draft.sentences)},
        )
        labels = tuple(dict.fromkeys(label for c in bound for label in c.labels))
        judge = None if wrapped else self.deps.models.judge_fn(self.budget, labels)
        thresholds = self.deps.thresholds
        checked = await check_chapter(item, draft, kinds, bound, judge, thresholds, notes)
        if writer == "model":
            checked, redo = await restate_lost(item, draft, kinds, checked, fresh, bound, judge,
                                               thresholds, notes)  # fmt: skip
            if redo is not None:
                writer = "model+extractive"
                self._written |= {i for s in redo.sentences for i in s.cites}
        if judge is None:
            notes.append(f"{JUDGE_NOT_USED}: no judge model call; support from the deterministic "
                         "checks, model-written claims at most weak")  # fmt: skip
        for claim_id, tokens in checked.foreign:
            yield InjectionEvent(f"{item.id}/{claim_id}", "worker_output",
                                 f"the writer added {', '.join(tokens)[:140]}", stage="synthesise",
                                 action="dropped")  # fmt: skip
        claims = flag_for_review(checked.claims, self.settings.review_sample_rate,
                                 random.Random(f"{self.seed}:{item.id}"))  # fmt: skip
        for claim in claims:
            yield CheckEvent(item.id, claim.id, claim.verdict, reasons=claim.checks)
        for d in checked.dropped:
            why = d["reasons"]
            reasons = {str(k): str(v) for k, v in why.items()} if isinstance(why, dict) else {}
            yield CheckEvent(item.id, str(d["id"]), "unsupported", reasons=reasons, kept=False)
        self.store.put_artifact(self.run_id, "checks", item.id, {
            "claims": to_plain(claims), "dropped": checked.dropped, "fabricated": checked.fabricated})  # fmt: skip
        sections.append(BriefSection(item.id, item.title, tuple(claims),
                                     bound_cards=tuple(c.id for c in bound), notes=tuple(notes)))  # fmt: skip

    def _write(
        self, item: OutlineItem, bound: list[EvidenceCard], wrapped: bool, notes: list[str]
    ) -> tuple[Draft, str]:
        mode = self.settings.writer
        write = self.deps.models.write_fn(self.budget) if mode != "extractive" else None
        if not bound:
            return Draft(), "none"
        if write is None or wrapped:
            if wrapped and write is not None:
                notes.append("written from the cards' own sentences: the run is wrapping up")
            return write_extractive(bound), "extractive"
        try:
            return write_with_model(self.outline, item, bound, write, notes=notes), "model"
        except (BudgetExceeded, LicenceRefused, ModelError, ValueError) as exc:
            notes.append(f"written from the cards' own sentences: {type(exc).__name__}: {exc}")
            return write_extractive(bound), "extractive"
