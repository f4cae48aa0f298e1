"""The ask pipeline: understand → retrieve → compose → verify → revise (≤2) → final.

An async generator of typed events. Nothing reaches `answer_delta` or `final` unchecked:
composed sentences are verified first, fabricated ids are dropped and counted, sentences with
no supported or weak citation are removed, weak ones are marked.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from footnote.config import Settings
from footnote.errors import FootnoteError, ModelError
from footnote.events import (
    AnswerDelta,
    CitationEvent,
    Done,
    Error,
    Event,
    Final,
    Retrieval,
    Status,
    Thinking,
    Verification,
)
from footnote.index import SearchFilters
from footnote.models.base import Completion, Message
from footnote.pipelines.answer import AnswerBuilder, refine_table_cites
from footnote.pipelines.compose import (
    Draft,
    attach_citations,
    compose_cite,
    compose_extractive,
    evidence_prompt_block,
)
from footnote.pipelines.trace import Trace
from footnote.pipelines.understand import Understanding, understand_by_rules
from footnote.prompts import load_prompt, render
from footnote.store import SqliteStore
from footnote.types import Answer, Block, Hit, Usage
from footnote.verify import (
    CitationCheck,
    Evidence,
    EvidenceSet,
    Thresholds,
    check_citation,
    relevance,
)

if TYPE_CHECKING:
    from footnote.models import Ledger, RoleModel

SearchFn = Callable[[str, int, SearchFilters], list[Hit]]


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

    store: SqliteStore
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

    # -- public ---------------------------------------------------------------------------
    async def run(self, request: AskRequest) -> AsyncIterator[Event]:
        """Yield the run's events; always ends with `final` (or `error`) and then `done`."""
        started = time.perf_counter()
        try:
            async for event in self._run(request, started):
                yield event
        except FootnoteError as exc:
            self.trace.add("error", type(exc).__name__, {"message": str(exc)}, time.time(), 0.0)
            yield Error(type(exc).__name__, str(exc))
            yield Final(
                self._refusal(
                    request.question, "refused", f"could not answer: {exc}", started=started
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
        if not self.deps.store.list_sources():
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

        scope = len(req.source_ids) or len(self.deps.store.list_sources())
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
        builder = AnswerBuilder(question, shown, understanding)
        feedback, previous = "", ""
        for round_ in range(self.settings.verify.max_revisions + 1):
            yield Status(
                "compose",
                "writing the answer" if round_ == 0 else f"revising the answer (round {round_})",
            )
            draft: Draft | None = None
            async for item in self._compose(mode, question, shown, feedback, previous):
                if isinstance(item, Draft):
                    draft = item
                else:
                    yield item
            assert draft is not None
            if draft.refused:
                builder.note_refusal(draft)
                break
            refine_table_cites(draft, shown)
            n_cites = sum(len(s.cites) for s in draft.sentences)
            yield Status("verify", f"checking {n_cites} citation{'s' if n_cites != 1 else ''}")
            checks = await self._verify(draft, shown)
            for i, sentence_checks in enumerate(checks):
                for c in sentence_checks:
                    yield Verification(
                        i,
                        c.evidence_id,
                        "fabricated" if c.fabricated else c.verdict,
                        reasons=c.reasons,
                    )
            builder.add_round(draft, checks)
            if builder.has_supported() or mode != "cite" or draft.raw == previous:
                break  # done, nothing to revise, or the model repeated itself
            feedback, previous = builder.feedback(), draft.raw
        answer = builder.build(nearest=nearest, usage=self._usage(started))
        for i, sentence in enumerate(answer.sentences):
            yield AnswerDelta(sentence.text + " ")
            for citation in sentence.citations:
                yield CitationEvent(i, citation)
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
        k = max(self.settings.ask.evidence_k * 2, self.settings.retrieval.k)
        filters = SearchFilters(source_ids=req.source_ids, user_groups=req.user_groups)
        with self.trace.span("retrieve", "hybrid", k=k) as span:
            hits = await asyncio.to_thread(self.deps.search, question, k, filters)
            span["hits"] = [{"id": h.block.id, "scores": h.scores} for h in hits]
        tables = self._referenced_tables(und, hits, req)
        seen: set[str] = set()
        evidence: list[Evidence] = []
        cos_floor, cos_ceil = self.deps.cosine_band
        for block, cosine in [
            *((t, None) for t in tables),
            *((h.block, h.scores.get("vector")) for h in hits),
        ]:
            if block.id in seen or block.kind == "heading":
                continue
            seen.add(block.id)
            text = block.table.as_text() if block.table is not None else block.text
            context = " ".join(block.section_path[-1:])
            rel = relevance(
                question, context + " " + text, cosine, floor=cos_floor, ceiling=cos_ceil
            )
            if block.table is not None and und.table_refs:
                rel = max(rel, 0.5)
            evidence.append(Evidence(block.id, text, block, relevance=round(rel, 4)))
        return evidence, tuple(hits[:3])

    def _referenced_tables(
        self, und: Understanding, hits: list[Hit], req: AskRequest
    ) -> list[Block]:
        """Table blocks the question names ("Table 2", "表2"), loaded as structure."""
        if not und.table_refs:
            return []
        sources = list(req.source_ids) or list(dict.fromkeys(h.block.source_id for h in hits))
        found: list[Block] = []
        for source_id in sources[:5]:
            for block in self.deps.store.iter_blocks(source_id):
                if block.table is None:
                    continue
                caption = block.table.caption.lower().replace(" ", "")
                for ref in und.table_refs:
                    if caption.startswith((f"table{ref}", f"表{ref}", f"tab.{ref}")):
                        found.append(block)
        return found

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
                        run_id=self.trace.run_id,
                    )
                    span.update(tokens_in=c.tokens_in, tokens_out=c.tokens_out, output=c.text)
                return c

            yield await asyncio.to_thread(
                compose_cite, question, evidence, complete, feedback=feedback, previous=previous
            )
            return
        # attach: stream the draft as `thinking`, verify, then release only checked sentences
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
        text = ""
        with self.trace.span("model", "compose", role="compose", mode="attach") as span:
            async for delta in _stream_in_thread(
                lambda: model.stream(
                    messages, max_tokens=300, labels=labels, run_id=self.trace.run_id
                )
            ):
                text += delta
                yield Thinking(delta)
            span["output"] = text
        yield attach_citations(text, evidence)

    async def _verify(self, draft: Draft, evidence: EvidenceSet) -> list[list[CitationCheck]]:
        thresholds = Thresholds(
            self.settings.verify.supported_threshold, self.settings.verify.weak_threshold
        )
        judge = self._judge(evidence)
        results: list[list[CitationCheck]] = []
        for sentence in draft.sentences:
            checks = []
            for cite in sentence.cites[:3]:
                with self.trace.span(
                    "check", "citation", evidence_id=cite, sentence=sentence.text
                ) as span:
                    c = await asyncio.to_thread(
                        check_citation,
                        sentence.text,
                        cite,
                        evidence,
                        quote=sentence.quote,
                        judge=judge,
                        thresholds=thresholds,
                    )
                    span.update(
                        verdict=c.verdict,
                        fabricated=c.fabricated,
                        reasons=c.reasons,
                        judge_p=c.judge_p,
                    )
                checks.append(c)
            results.append(checks)
        return results

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
                p = float(judge_fn(model, claim, passage, labels=labels, run_id=self.trace.run_id))
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
