"""The ask pipeline: understand → retrieve → compose → verify → revise (≤2, every generative
mode) → final.

An async generator of typed events. Nothing reaches `sentence`, `answer_delta` or `final`
unchecked: composed sentences are verified first, fabricated ids are dropped and counted, sentences
with no supported or weak citation are removed, weak ones are marked. What can be shown honestly
streams: the passages shown to the composer (`evidence`) before it writes, and each checked
sentence as soon as the answer is known to keep it (`pipelines.ask.stream`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from footnote.access import readable_by
from footnote.config import Settings
from footnote.config.answering import answerable_threshold
from footnote.errors import FootnoteError, ModelError
from footnote.events import (
    Done,
    Error,
    Event,
    EvidenceShown,
    Final,
    Retrieval,
    Status,
    Thinking,
)
from footnote.index import SearchFilters, SearchFn
from footnote.models.base import Completion, Message
from footnote.models.budget import Budget
from footnote.pipelines.ask.compose import (
    compose_cite,
    compose_extractive,
    evidence_prompt_block,
    quote_spans,
    repair_quotes,
)
from footnote.pipelines.ask.narrow import answerability, translate_question
from footnote.pipelines.ask.parts import compose_parts, is_multi_part
from footnote.pipelines.ask.refusal import what_the_paper_says
from footnote.pipelines.ask.retrieve import DEFAULT, TODAY, Retriever
from footnote.pipelines.ask.stream import RoundRelease, sentence_events
from footnote.pipelines.ask.tables import CellAnswer, resolve_in_tables
from footnote.pipelines.ask.understand import Understanding, understand_by_rules
from footnote.pipelines.trace import Trace
from footnote.prompts import load_prompt, render
from footnote.store.base import DocumentStore
from footnote.types import Answer, Hit, Sentence, Usage
from footnote.verify import CitationCheck, Evidence, EvidenceSet, Thresholds
from footnote.verify.answer import AnswerBuilder, refine_table_cites
from footnote.verify.draft import Draft, DraftSentence, attach_citations
from footnote.verify.gate import check_draft, verification_events
from footnote.verify.question import VALUE_TYPES, analyse_question

if TYPE_CHECKING:
    from footnote.models import Ledger, RoleModel


@dataclass(frozen=True)
class AskRequest:
    """One question, optionally scoped to sources, as seen by a user with ACL groups."""

    question: str
    source_ids: tuple[str, ...] = ()
    user_groups: tuple[str, ...] | None = None
    mode: str | None = None


@dataclass
class AskDeps:
    """What the pipeline needs; chosen by the workspace (the composition root)."""

    store: DocumentStore
    search: SearchFn
    settings: Settings
    compose_model: RoleModel | None = None
    judge_model: RoleModel | None = None
    judge_fn: Callable[..., float] | None = None
    ledger: Ledger | None = None
    trace: Trace = field(default_factory=Trace)
    cosine_band: tuple[float, float] = (0.75, 0.92)
    """Vector cosines mapped to relevance 0 and 1 (embedder-specific)."""


class AskPipeline:
    """Runs one question through the pipeline, yielding events."""

    def __init__(self, deps: AskDeps) -> None:
        self.deps = deps
        self.settings = deps.settings
        self.trace = deps.trace
        self._labels: dict[str, tuple[str, ...]] = {}
        ask = deps.settings.ask
        self.budget = Budget(ask.max_tokens, ask.max_model_calls, ask.max_seconds)
        """Every model call of the run is checked and charged against this."""

    # -- public ---------------------------------------------------------------------------
    async def run(self, request: AskRequest) -> AsyncIterator[Event]:
        """Yield the run's events; always ends with `final` (or `error`) and then `done`."""
        started = time.perf_counter()
        try:
            async for event in self._run(request, started):
                yield event
        except FootnoteError as exc:
            self.trace.add("error", type(exc).__name__, {"message": str(exc)}, time.time(), 0.0)
            yield Error(type(exc).__name__, exc.public_message)
            yield Final(
                self._refusal(
                    request.question,
                    "refused",
                    f"could not answer: {exc.public_message}",
                    started=started,
                )
            )
        yield Done()

    # -- stages ---------------------------------------------------------------------------
    async def _run(self, req: AskRequest, started: float) -> AsyncIterator[Event]:
        question = " ".join(req.question.split())
        problem = self._check_question(question)
        if problem:
            yield Final(self._refusal(question, "refused", problem, started=started))
            return
        visible = [
            r for r in self.deps.store.list_sources() if readable_by(r.source, req.user_groups)
        ]  # what this user may know exists: neither others' sources nor their number
        if not visible:
            yield Final(
                self._refusal(
                    question,
                    "no_evidence",
                    "the library has no sources yet: ingest some documents first",
                    started=started,
                )
            )
            return
        yield Status("understand", "understanding the question")
        with self.trace.span("understand", "rules") as span:
            understanding = understand_by_rules(question)
            span["result"] = understanding.model_dump()

        scope = len(req.source_ids) or len(visible)
        yield Status("retrieve", f"searching {scope} source{'s' if scope != 1 else ''}")
        evidence, nearest = await self._retrieve(question, understanding, req)
        yield Retrieval(question, [_hit_summary(e) for e in evidence])
        best = max((e.relevance for e in evidence), default=0.0)
        if best < self.settings.verify.relevance_threshold:
            yield Final(
                self._refusal(
                    question,
                    "no_evidence",
                    f"nothing relevant was found (best relevance {best:.2f} is below the threshold "
                    f"{self.settings.verify.relevance_threshold:.2f}); the nearest passages are shown",
                    nearest=nearest,
                    started=started,
                )
            )
            return
        shown = EvidenceSet(evidence[: self.settings.ask.evidence_k])
        mode = await self._choose_mode(req)
        cell = self._table_cell(question, understanding, evidence)
        if cell is not None:
            shown = EvidenceSet(
                [cell.evidence(1.0), *shown.items[: self.settings.ask.evidence_k - 1]]
            )
        self.trace.add("evidence", "shown", {"ids": shown.ids}, time.time(), 0.0)
        yield EvidenceShown([self._passage(e) for e in shown])
        judge = self._judge(shown)
        builder = AnswerBuilder(
            question,
            shown,
            understanding.lang,
            judge=judge,
            thresholds=self._thresholds(),
            responsive=self.settings.answering.responsive,
        )
        feedback, previous, round_ = "", "", 0
        released: list[Sentence] = []
        while round_ <= self.settings.verify.max_revisions:
            draft: Draft | None = None
            if cell is not None:
                yield Status("compose", f"reading the cell {cell.evidence_id} of the table")
                draft = Draft(
                    [
                        DraftSentence(
                            cell.sentence(understanding.lang),
                            [cell.evidence_id],
                            cell.value,
                            by_code=True,
                        )
                    ],
                    raw=cell.value,
                )
            else:
                yield Status(
                    "compose",
                    "writing the answer"
                    if round_ == 0
                    else f"revising the answer (round {round_})",
                )
                async for item in self._compose(mode, question, shown, feedback, previous):
                    if isinstance(item, Draft):
                        draft = item
                    else:
                        yield item
            assert draft is not None
            if not draft.refused and cell is None and mode == "cite":
                yield Status("compose", "checking that the evidence answers the question")
                if not await self._answerable(question, draft, shown):
                    draft.refused = True
            if draft.refused:
                builder.note_refusal(draft)
                break
            refine_table_cites(draft, shown)
            n_cites = sum(len(s.cites) for s in draft.sentences)
            yield Status("verify", f"checking {n_cites} citation{'s' if n_cites != 1 else ''}")
            # checked sentence by sentence; each one the answer is sure to keep is sent at once
            release = RoundRelease(
                builder,
                draft,
                ends_anyway=mode == "extractive"
                or draft.raw == previous
                or (cell is None and round_ >= self.settings.verify.max_revisions),
                cell=cell is not None,
                released=released,
            )
            checks: list[list[CitationCheck]] = []
            for i, sentence in enumerate(draft.sentences):
                # a cell's sentence is written by code from the cell's labels and value: entailed
                # by construction, so only the deterministic checks apply (as for graph templates)
                one = Draft([sentence], raw=draft.raw)
                row = await self._verify(one, shown, question, None if cell else judge)
                checks += row
                for verification in verification_events(row):
                    yield replace(verification, sentence=i)
                for index, final in release.after(checks):
                    for event in sentence_events(index, final):
                        yield event
            builder.add_round(draft, checks)
            if cell is not None and not builder.has_supported():
                cell = None  # the cell does not answer the question: the composer is asked
                continue
            language = builder.language_problem() if builder.has_supported() else None
            if (builder.has_supported() and language is None) or mode == "extractive":
                break  # done, or nothing a model could revise
            if draft.raw == previous or cell:
                break  # the model repeated itself, or a cell
            feedback = language or builder.feedback()
            previous, round_ = draft.raw, round_ + 1
        answer = builder.build(nearest=nearest, usage=self._usage(started))
        if answer.status != "answered":
            answer = what_the_paper_says(answer, question, shown)
        if list(answer.sentences[: len(released)]) != released:  # never expected: traced
            self.trace.add("error", "stream", {"released": len(released)}, time.time(), 0.0)
        for index, kept in enumerate(answer.sentences[len(released) :], len(released)):
            for event in sentence_events(index, kept):
                yield event
        self.trace.add(
            "final",
            answer.status,
            {
                "support_score": answer.support_score,
                "fabricated": builder.fabricated,
                "removed": builder.removed,
            },
            time.time(),
            0.0,
        )
        yield Final(answer)

    def _check_question(self, question: str) -> str | None:
        if not question:
            return "the question is empty"
        limit = self.settings.ask.max_question_chars
        if len(question) > limit:
            return f"the question is {len(question)} characters long; the limit is {limit}"
        return None

    async def _retrieve(
        self, question: str, und: Understanding, req: AskRequest
    ) -> tuple[list[Evidence], tuple[Hit, ...]]:
        answering = self.settings.answering
        k = max(self.settings.ask.evidence_k * 2, self.settings.retrieval.k)
        filters = SearchFilters(source_ids=req.source_ids, user_groups=req.user_groups)
        strategy = TODAY if answering.retrieval == "search" else DEFAULT
        retriever = Retriever(
            self.deps.search,
            self.deps.store,
            evidence_k=self.settings.ask.evidence_k,
            k=k,
            cosine_band=self.deps.cosine_band,
            strategy=strategy,
            translate=self._translator(req) if answering.translate else None,
        )
        with self.trace.span("retrieve", "hybrid", k=k, strategy=strategy.name) as span:
            got = await asyncio.to_thread(retriever, question, und, filters)
            span["queries"] = list(got.queries)
            span["hits"] = [{"id": e.id, "relevance": e.relevance} for e in got.evidence]
        return got.evidence, got.nearest

    def _translator(self, req: AskRequest) -> Callable[[str, str], str] | None:
        """A question translator on the compose model (None without one, or in extractive mode)."""
        model = self.deps.compose_model
        if model is None or (req.mode or self.settings.ask.mode) == "extractive":
            return None

        def translate(question: str, lang: str) -> str:
            with self.trace.span("model", "translate", role="compose", lang=lang) as span:
                text, c = translate_question(
                    model, question, lang, budget=self.budget, run_id=self.trace.run_id
                )
                span.update(tokens_in=c.tokens_in, tokens_out=c.tokens_out, output=text)
            return text

        return translate

    def _table_cell(
        self, question: str, und: Understanding, evidence: Sequence[Evidence]
    ) -> CellAnswer | None:
        """The table cell a table question names, resolved by code (None: ask the composer)."""
        if not self.settings.answering.tables:
            return None
        # the table path only for table questions: a table named, or a one-value question
        # (how many, what F1 …) whose row and column labels it names in full (issue #29)
        strict = self.settings.answering.responsive
        if (
            strict
            and not und.table_refs
            and analyse_question(question).answer_type not in VALUE_TYPES
        ):
            return None
        if not strict and not (und.table_refs or und.type == "table_value"):
            return None
        tables = [e.block for e in evidence[: self.settings.ask.evidence_k * 2] if e.block.table]
        with self.trace.span("tables", "resolve", tables=len(tables)) as span:
            cell = resolve_in_tables(question, tables, refs=und.table_refs, strict=strict)
            span["cell"] = cell.evidence_id if cell else None
        return cell

    async def _answerable(self, question: str, draft: Draft, shown: EvidenceSet) -> bool:
        """The answerability call on the cited passage; False below the calibrated threshold."""
        model = self.deps.compose_model
        if not self.settings.answering.answerability or model is None or not draft.sentences:
            return True
        first = draft.sentences[0]
        ev = next((shown.resolve(c) for c in first.cites if shown.resolve(c)), None)
        if ev is None:
            return True  # the verifier counts the unknown id as fabricated
        threshold = answerable_threshold(self.settings.answering)
        if threshold <= 0.0:
            return True  # a call whose score cannot refuse is not made
        labels = self._labels_for(shown)
        with self.trace.span("model", "answerability", role="compose") as span:
            p = await asyncio.to_thread(
                answerability,
                model,
                question,
                ev.text,
                first.text,
                labels=labels,
                budget=self.budget,
                run_id=self.trace.run_id,
            )
            span.update(p_answerable=round(p, 4), threshold=threshold, evidence_id=ev.id)
        return p >= threshold

    async def _choose_mode(self, req: AskRequest) -> str:
        mode = req.mode or self.settings.ask.mode
        model = self.deps.compose_model
        if mode == "extractive" or model is None:
            return "extractive"
        if mode != "auto":
            return mode
        try:
            caps = await asyncio.to_thread(model.capabilities)
        except ModelError as exc:
            self.trace.add("mode", "extractive", {"reason": str(exc)}, time.time(), 0.0)
            return "extractive"
        return "cite" if caps.json_schema else "attach"

    def _labels_for(self, evidence: EvidenceSet) -> tuple[str, ...]:
        labels: list[str] = []
        for ev in evidence:
            sid = ev.block.source_id
            if sid not in self._labels:
                rec = self.deps.store.get_source(sid)
                self._labels[sid] = rec.source.labels if rec else ()
            labels += self._labels[sid]
        return tuple(dict.fromkeys(labels))

    def _parts(self, question: str) -> bool:
        """Whether a question is answered part by part (multi-part or counterfactual)."""
        if not self.settings.answering.parts:
            return False
        return is_multi_part(question) or understand_by_rules(question).type == "counterfactual"

    async def _compose(
        self, mode: str, question: str, evidence: EvidenceSet, feedback: str, previous: str
    ) -> AsyncIterator[Event | Draft]:
        model = self.deps.compose_model
        labels = self._labels_for(evidence)
        if mode == "extractive" or model is None:
            with self.trace.span("compose", "extractive") as span:
                draft = compose_extractive(question, evidence)
                span["sentences"] = len(draft.sentences)
            yield draft
            return
        if mode == "cite":

            def complete(messages: list[Message], schema: dict[str, object]) -> Completion:
                with self.trace.span("model", "compose", role="compose", mode="cite") as span:
                    c = model.complete(
                        messages,
                        json_schema=schema,
                        max_tokens=320,
                        labels=labels,
                        budget=self.budget,
                        run_id=self.trace.run_id,
                    )
                    span.update(tokens_in=c.tokens_in, tokens_out=c.tokens_out, output=c.text)
                return c

            if not feedback and self._parts(question):
                draft = await asyncio.to_thread(compose_parts, question, evidence, complete)
            else:
                draft = await asyncio.to_thread(
                    compose_cite, question, evidence, complete, feedback=feedback, previous=previous
                )
            if self.settings.answering.repair_quotes:
                draft = repair_quotes(draft, evidence)
            if self.settings.answering.quote_spans:
                draft = quote_spans(draft, evidence, question)
            yield draft
            return
        # attach: stream the draft as unchecked `thinking`, verify, release only checked sentences
        aliases = {f"E{i + 1}": ev.id for i, ev in enumerate(evidence)}
        messages = [
            Message("system", load_prompt("compose_free_system").strip()),
            Message(
                "user",
                render(
                    "compose_free",
                    question=question,
                    evidence=evidence_prompt_block(evidence.items, aliases),
                ),
            ),
        ]
        if feedback:
            messages += [
                Message("assistant", previous),
                Message("user", render("compose_revise_free", reasons=feedback)),
            ]
        text = ""
        with self.trace.span("model", "compose", role="compose", mode="attach") as span:
            async for delta in _stream_in_thread(
                lambda: model.stream(
                    messages,
                    max_tokens=300,
                    labels=labels,
                    budget=self.budget,
                    run_id=self.trace.run_id,
                    cache=True,
                )
            ):
                text += delta
                yield Thinking(delta)
            span["output"] = text
        yield attach_citations(text, evidence, question=question)

    def _thresholds(self) -> Thresholds:
        return Thresholds(
            self.settings.verify.supported_threshold, self.settings.verify.weak_threshold
        )

    async def _verify(
        self,
        draft: Draft,
        evidence: EvidenceSet,
        question: str,
        judge: Callable[[str, str], float] | None,
    ) -> list[list[CitationCheck]]:
        return await asyncio.to_thread(
            check_draft,
            draft,
            evidence,
            judge=judge,
            thresholds=self._thresholds(),
            span=self.trace.span,
            question=question,
        )

    def _judge(self, evidence: EvidenceSet) -> Callable[[str, str], float] | None:
        if (
            not self.settings.ask.use_judge
            or self.deps.judge_model is None
            or not self.deps.judge_fn
        ):
            return None
        model, judge_fn, labels = (
            self.deps.judge_model,
            self.deps.judge_fn,
            self._labels_for(evidence),
        )

        def judge(claim: str, passage: str) -> float:
            with self.trace.span("model", "judge", role="judge", claim=claim) as span:
                p = float(
                    judge_fn(
                        model,
                        claim,
                        passage,
                        labels=labels,
                        budget=self.budget,
                        run_id=self.trace.run_id,
                    )
                )
                span["p_yes"] = p
            return p

        return judge

    def _usage(self, started: float) -> Usage:
        seconds = round(time.perf_counter() - started, 3)
        if self.deps.ledger is None:
            return Usage(seconds=seconds)
        return replace(self.deps.ledger.totals(self.trace.run_id), seconds=seconds)

    def _refusal(
        self,
        question: str,
        status: Any,
        reason: str,
        *,
        nearest: Sequence[Hit] = (),
        started: float,
    ) -> Answer:
        return Answer(
            question, status, (), reason=reason, nearest=tuple(nearest), usage=self._usage(started)
        )

    def _passage(self, e: Evidence) -> dict[str, Any]:
        """One passage of the evidence board as found (before any check)."""
        rec = self.deps.store.get_source(e.block.source_id)
        return {
            **_hit_summary(e),
            "source_id": e.block.source_id,
            "title": (rec.source.title if rec else None) or "",
            "text": e.text[:400],
        }


def _hit_summary(e: Evidence) -> dict[str, Any]:
    return {
        "id": e.id,
        "page": e.page,
        "section": list(e.section),
        "kind": e.block.kind,
        "relevance": e.relevance,
    }


async def _stream_in_thread(make: Callable[[], Any]) -> AsyncIterator[str]:
    """Run a blocking iterator in a worker thread, handing items to the loop thread-safely."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def pump() -> None:
        try:
            for item in make():
                loop.call_soon_threadsafe(queue.put_nowait, ("item", item))
            loop.call_soon_threadsafe(queue.put_nowait, ("end", None))
        except BaseException as exc:  # handed to the consumer, re-raised there
            loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))

    task = loop.run_in_executor(None, pump)
    while True:
        kind, value = await queue.get()
        if kind == "item":
            yield value
        elif kind == "error":
            await task
            raise value
        else:
            await task
            return
