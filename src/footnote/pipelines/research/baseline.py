"""The baseline mode: one search (library, and the web when allowed), one model call writing the
brief from the results, citations checked by code — the "search + one model call + citations"
design most anchors ship, measured beside the full pipeline in the same evaluation run. Its
claims go through the same gate as a chapter's, with the judge when one is bound."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import replace

from footnote.errors import BudgetExceeded, LicenceRefused, ModelError
from footnote.events import (
    BriefEvent,
    CardEvent,
    CheckEvent,
    ChecklistEvent,
    DraftEvent,
    Event,
    InjectionEvent,
    Status,
)
from footnote.models.base import Message
from footnote.pipelines.research.cards import candidates, make_card
from footnote.pipelines.research.checks import (
    JUDGE_NOT_USED,
    check_section,
    coverage,
    flag_for_review,
    not_covered,
)
from footnote.pipelines.research.investigate import injection_events, quarantine
from footnote.pipelines.research.pipeline import ResearchDeps, run_budget
from footnote.pipelines.research.sources import SourceLog
from footnote.pipelines.research.synthesise import (
    card_listing,
    claims_schema,
    parse_written,
    write_extractive,
)
from footnote.pipelines.research.untrusted import Finding
from footnote.prompts import data_section, render
from footnote.serialize import from_plain, to_plain
from footnote.types import Brief, BriefSection, Claim, EvidenceStandard, Outline, OutlineItem

MAX_CARDS = 12


class BaselinePipeline:
    """One search, one model call, checked citations."""

    def __init__(self, deps: ResearchDeps, run_id: str) -> None:
        self.deps, self.run_id = deps, run_id
        record = deps.research.get_research(run_id)
        assert record is not None
        self.options = dict(record.options)
        saved = deps.research.get_artifact(run_id, "outline")
        question = from_plain(Outline, saved).question if saved else record.question
        lang = from_plain(Outline, saved).lang if saved else "en"
        self.item = OutlineItem(
            "answer",
            "Answer",
            question,
            standard=EvidenceStandard(web=bool(self.options.get("web", True))),
        )
        self.outline = Outline(question, "baseline", (self.item,), confirmed=True, lang=lang)
        self.budget = run_budget(self.options, deps.settings, deps.clock)

    async def run(self) -> AsyncIterator[Event]:
        """The baseline's events, ending with its brief."""
        store, item = self.deps.research, self.item
        store.set_research_state(self.run_id, "running")
        yield Status("search", "one search")
        log = SourceLog()
        passages, _stop = await asyncio.to_thread(
            self.deps.sources.gather, self.outline.question, item.standard.web, self.budget, log
        )
        findings: dict[str, list[Finding]] = {}
        for event in injection_events(passages, findings, set()):
            yield event
        cards = [
            make_card(c, "sq-answer")
            for c in candidates(self.outline.question, "", passages, MAX_CARDS,
                                skip=quarantine(findings))
        ]  # fmt: skip
        store.put_cards(self.run_id, cards)
        for card in cards:
            yield CardEvent(card)
        self.deps.sources.close_network("the baseline writes without network access")
        write = self.deps.models.write_fn(self.budget)
        writer = "model"
        try:
            if write is None or not cards:
                raise ModelError("no writer model bound")
            aliases, listing = card_listing(cards)
            prompt = render("research_baseline", question=self.outline.question,
                            cards=data_section(listing, "RESULTS"),
                            language="Chinese" if self.outline.lang == "zh" else "English")  # fmt: skip
            messages = [Message("system", "You write research briefs. You output JSON only."),
                        Message("user", prompt)]  # fmt: skip
            labels = tuple(dict.fromkeys(lab for c in cards for lab in c.labels))
            draft = parse_written(
                write(messages, claims_schema(list(aliases), 10), labels), aliases
            )
        except (BudgetExceeded, LicenceRefused, ModelError, ValueError):
            draft, writer = write_extractive(cards), "extractive"
        yield DraftEvent(item.id, tuple(Claim(f"answer-c{n + 1}", s.text, tuple(s.cites))
                                        for n, s in enumerate(draft.sentences)), writer=writer)  # fmt: skip
        labels = tuple(dict.fromkeys(lab for c in cards for lab in c.labels))
        judge = self.deps.models.judge_fn(self.budget, labels)
        kinds, notes = ["claim"] * len(draft.sentences), []
        try:
            checked = await asyncio.to_thread(check_section, item, draft, kinds, cards,
                                              judge=judge, thresholds=self.deps.thresholds)  # fmt: skip
        except (BudgetExceeded, LicenceRefused, ModelError) as exc:
            judge = None
            notes.append(f"{JUDGE_NOT_USED}: {exc}")
            checked = await asyncio.to_thread(check_section, item, draft, kinds, cards,
                                              judge=None, thresholds=self.deps.thresholds)  # fmt: skip
        if judge is None:
            notes.append(f"{JUDGE_NOT_USED}: support from the deterministic checks only, "
                         "model-written claims at most weak")  # fmt: skip
        for claim_id, tokens in checked.foreign:
            yield InjectionEvent(f"{item.id}/{claim_id}", "worker_output",
                                 f"the writer added {', '.join(tokens)[:140]}", stage="synthesise",
                                 action="dropped")  # fmt: skip
        seed = random.SystemRandom().randrange(2**32)
        yield Status("check", f"review sample drawn with seed {seed}")
        claims = flag_for_review(checked.claims, self.deps.settings.review_sample_rate,
                                 random.Random(seed))  # fmt: skip
        for c in claims:
            yield CheckEvent(item.id, c.id, c.verdict, reasons=c.checks)
        check = coverage(item, claims, {c.id: c for c in cards}, [],
                         lambda cs: len({c.source_id for c in cs}), ["done"], len(cards))  # fmt: skip
        if notes:
            check = replace(
                check, reasons=(*check.reasons, f"{JUDGE_NOT_USED}: support not judged by a model")
            )
        yield ChecklistEvent((check,), sample_rate=self.deps.settings.review_sample_rate)
        used = {i for c in claims for i in c.card_ids}
        brief = Brief(
            self.run_id, self.outline.question, self.outline,
            (BriefSection(item.id, item.title, tuple(claims), bound_cards=tuple(c.id for c in cards),
                          coverage=check.state, notes=tuple(notes)),),
            tuple(cards), mode="baseline", checklist=(check,),
            not_covered=not_covered([check]),
            unused_cards=tuple(c.id for c in cards if c.id not in used),
            sample_rate=self.deps.settings.review_sample_rate, budget_used=self.budget.used(),
            review={"state": "unreviewed"},
        )  # fmt: skip
        store.put_artifact(self.run_id, "brief", "", to_plain(brief))
        self.options["used"] = self.budget.used()
        store.set_research_state(self.run_id, "completed", self.options)
        yield BriefEvent(brief)
