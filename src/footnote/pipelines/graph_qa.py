"""Graph QA: understand → align → cypher → guard → run → answer, as an async event stream.

Whitelisted intents use their parameterised templates, but only when the template's slots
capture the whole question (`template_misfit`: no limits, superlatives, comparisons, counts,
negations, extra properties/labels/relationships or unmatched quoted values); other questions
get Cypher from the `cypher` role, retried with the error, then the `cypher_fallback` role,
then a refusal. With `GraphDeps.runs` set, each question is a `graph` run with spans.
Nothing runs before the guard (parse, read-only, schema, permissions, EXPLAIN) passed it.
Outcomes: answered, clarify (ambiguous entity or low confidence), no_rows, refused.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from footnote.config import GraphSettings
from footnote.errors import FootnoteError, ModelError
from footnote.events import (
    AnswerDelta,
    CitationEvent,
    CypherEvent,
    Done,
    Entities,
    Error,
    Event,
    Final,
    Guard,
    Intent,
    Rows,
    Status,
)
from footnote.index.cypher_guard import GraphGuard, Principal
from footnote.index.graph_align import Alignment, EntityIndex
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.pipelines.graph_answer import compose_answer
from footnote.pipelines.graph_cypher import cypher_messages, extract_cypher, param_names
from footnote.pipelines.graph_understand import (
    OTHER,
    GraphUnderstanding,
    template_misfit,
    understand_by_model,
    understand_by_rules,
)
from footnote.pipelines.trace import Trace
from footnote.store.graph_base import GraphQueryError, GraphRows, GraphStore
from footnote.store.runs import RunStore
from footnote.types import Answer, AnswerStatus, Sentence, Usage

GraphStatus = Literal["answered", "clarify", "no_rows", "refused"]
_ANSWER_STATUS: dict[str, AnswerStatus] = {
    "answered": "answered",
    "clarify": "refused",
    "no_rows": "no_evidence",
    "refused": "refused",
}


@dataclass(frozen=True)
class GraphRequest:
    """One question, asked by a principal whose attributes the server set."""

    question: str
    principal: Principal = field(default_factory=Principal)
    run_id: str | None = None


@dataclass
class GraphOutcome:
    """The run's result in the shape of `graph ask --json`."""

    status: GraphStatus = "refused"
    answer: str = ""
    cypher: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    intent: str = ""
    source: str = ""
    attempts: int = 0
    options: list[str] = field(default_factory=list)
    route: str = ""
    route_reason: str = ""
    run_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict."""
        return dict(self.__dict__)


@dataclass
class GraphDeps:
    """What the pipeline needs, chosen by the workspace."""

    store: GraphStore
    index: EntityIndex
    settings: GraphSettings = field(default_factory=GraphSettings)
    understand_model: RoleModel | None = None
    cypher_model: RoleModel | None = None
    fallback_model: RoleModel | None = None
    answer_model: RoleModel | None = None
    runs: RunStore | None = None
    """Where runs and their spans are recorded (the workspace's store); None: not recorded."""


class GraphQAPipeline:
    """Runs one question; `outcome` holds the result after the stream ends."""

    def __init__(self, deps: GraphDeps) -> None:
        self.deps = deps
        self.spec = deps.store.spec
        self.guard = GraphGuard(deps.store)
        self.outcome = GraphOutcome()
        self.trace = Trace()

    def close(self) -> None:
        """Release the graph store."""
        self.deps.store.close()

    async def run(self, request: GraphRequest) -> AsyncIterator[Event]:
        """Yield intent, entities, cypher, guard, rows, answer_delta, citation, final, done."""
        t0 = time.perf_counter()
        runs = self.deps.runs
        self.trace = Trace(request.run_id, sink=runs.add_span if runs is not None else None)
        self.outcome = GraphOutcome(run_id=self.trace.run_id)
        if runs is not None:
            runs.start(
                self.trace.run_id,
                "graph",
                {"graph": self.spec.name, "question": request.question},
                user_id=request.principal.id,
            )
        finished = False
        try:
            async for event in self._events(request, t0):
                yield event
            finished = True
        finally:
            if runs is not None:
                o = self.outcome
                status = o.status if finished else "cancelled"
                runs.finish(self.trace.run_id, status, o.to_dict() if finished else None)

    async def _events(self, request: GraphRequest, t0: float) -> AsyncIterator[Event]:
        try:
            async for event in self._run(request):
                yield event
        except FootnoteError as exc:
            yield Error(type(exc).__name__, str(exc))
            self.trace.add("error", type(exc).__name__, {"message": str(exc)}, time.time(), 0.0)
            self.outcome.status, self.outcome.reason = "refused", f"could not answer: {exc}"
        o = self.outcome
        sentences: tuple[Sentence, ...] = getattr(self, "_sentences", ())
        if o.status != "answered":
            o.answer = o.answer or o.reason
            sentences = (Sentence(o.answer, factual=False),)
        yield Status("outcome", o.status)
        yield Final(
            Answer(
                request.question,
                _ANSWER_STATUS[o.status],
                sentences,
                support_score=1.0 if o.status == "answered" else 0.0,
                reason=None if o.status == "answered" else f"{o.status}: {o.reason}",
                usage=Usage(seconds=time.perf_counter() - t0),
            )
        )
        yield Done()

    async def _run(self, req: GraphRequest) -> AsyncIterator[Event]:
        o, cfg = self.outcome, self.deps.settings
        self._sentences: tuple[Sentence, ...] = ()
        question = " ".join(req.question.split())
        if not question:
            o.reason = "empty question"
            return
        yield Status("understand", "understanding the question")
        run_id = self.trace.run_id
        with self.trace.span("understand", self.deps.settings.understand) as span:
            u, method = await self._understand(question, run_id)
            span.update(method=method, understanding=u.model_dump())
        o.intent = u.intent
        yield Intent(
            u.intent,
            u.confidence,
            u.question,
            mentions=[m.text for m in u.entities],
            constraints=[c.model_dump() for c in u.constraints],
            method=method,
        )
        with self.trace.span("align", "entities") as span:
            aligned: list[Alignment] = [
                self.deps.index.align(m.text, [m.label] if m.label in self.spec.nodes else None)
                for m in u.entities
            ]
            aligned = [
                a if a.candidates or not a.mention else self.deps.index.align(a.mention)
                for a in aligned
            ]
            # close vector scores say "maybe not an entity at all" (e5 squeezes cosines): drop
            # those; only exact or keyword ties are real ambiguity worth asking back about
            found = [
                a for a in aligned
                if a.best is not None and not (a.ambiguous and a.best.method == "vector")
            ]  # fmt: skip
            span["found"] = [_cand(a) for a in found]
            span["ambiguous"] = [a.mention for a in found if a.ambiguous]
        yield Entities(
            [_cand(a) for a in found if not a.ambiguous],
            ambiguous=[_cand(a) for a in found if a.ambiguous],
        )
        u = self._route(question, u, found)
        self.trace.add(
            "route", o.route, {"intent": o.intent, "reason": o.route_reason}, time.time(), 0.0
        )
        yield Status("route", f"{o.route}: {o.route_reason}" if o.route_reason else o.route)
        unclear = [a for a in found if a.ambiguous]
        if unclear:
            names = list(dict.fromkeys(c.entity.name for c in unclear[0].candidates))[:5]
            o.status, o.options = "clarify", names
            o.reason = f"{unclear[0].mention!r} could mean {', '.join(names)}: which one?"
            return
        if u.confidence < cfg.min_confidence:
            o.status = "clarify"
            o.reason = "the question is unclear: please name what you are looking for"
            return
        entities = {a.mention: a.best for a in found if a.best is not None}
        self._rows: GraphRows | None = None
        async for event in self._ladder(u, entities, req):
            yield event
        rows = self._rows
        if rows is None:
            return
        yield from_rows(rows)
        if not rows.rows:
            o.status, o.reason = "no_rows", "the query ran but matched no rows"
            o.answer = "No matching records were found in the graph."
            return
        model = self._answer_model()
        with self.trace.span("compose", "model" if model else "template") as span:
            composed = await asyncio.to_thread(
                compose_answer,
                u.question,
                rows,
                model=model,
                answer_template=self.spec.intents[u.intent].answer
                if o.source == "template"
                else "",
                max_rows=cfg.answer_rows,
                run_id=run_id,
            )
            span["sentences"] = [s.text for s in composed.sentences]
        self._sentences = composed.sentences
        o.status, o.answer = "answered", " ".join(s.text for s in composed.sentences)
        for n, s in enumerate(composed.sentences):
            yield AnswerDelta(s.text + " ")
            for c in s.citations:
                yield CitationEvent(n, c)

    def _route(
        self, question: str, u: GraphUnderstanding, found: list[Alignment]
    ) -> GraphUnderstanding:
        """Keep a template intent only when its slots capture every constraint of the question."""
        o = self.outcome
        if u.intent == OTHER:
            o.route, o.route_reason = "generated", ""
            return u
        mentions = [m.text for m in u.entities] + [a.mention for a in found]
        mentions += [n for a in found if a.best for n in (a.best.entity.name, a.best.entity.key)]
        distinct = {(a.best.entity.label, a.best.entity.key) for a in found if a.best}
        why = template_misfit(question, u.intent, self.spec, mentions, len(distinct), u.constraints)
        labels = {a.best.entity.label for a in found if a.best}
        missing = [p for p, lab in self.spec.intents[u.intent].params.items() if lab not in labels]
        if not why and missing:
            why = f"no entity for the slot(s) {', '.join(missing)}"
        if why:
            o.route, o.route_reason = "generated", f"template {u.intent} skipped: {why}"
            return u.model_copy(update={"intent": OTHER})
        o.route, o.route_reason = "template", ""
        return u

    def _answer_model(self) -> RoleModel | None:
        mode = self.deps.settings.answer
        return None if mode == "template" else self.deps.answer_model

    async def _understand(
        self, question: str, run_id: str | None
    ) -> tuple[GraphUnderstanding, str]:
        mode, model = self.deps.settings.understand, self.deps.understand_model
        if mode != "rules" and model is not None:
            try:
                u = await asyncio.to_thread(
                    understand_by_model, model, question, self.spec, run_id=run_id
                )
                return u, "model"
            except ModelError:
                pass
        return understand_by_rules(question, self.spec, self.deps.index), "rules"

    # -- the ladder ------------------------------------------------------------------------
    async def _ladder(
        self, u: GraphUnderstanding, entities: dict[str, Any], req: GraphRequest
    ) -> AsyncIterator[Event]:
        """Template, then model, retries with the error, fallback; sets `self._rows`."""
        o, cfg = self.outcome, self.deps.settings
        intent = self.spec.intents.get(u.intent) if u.intent != OTHER else None
        tries: list[tuple[str, RoleModel | None]] = []
        params: dict[str, Any] = {}
        if intent is not None:
            by_label: dict[str, str] = {}
            for c in entities.values():
                by_label.setdefault(c.entity.label, c.entity.key)
            if all(lab in by_label for lab in intent.params.values()):
                params = {p: by_label[lab] for p, lab in intent.params.items()}
                tries.append(("template", None))
        if self.deps.cypher_model is not None:
            tries += [("model", self.deps.cypher_model)]
            tries += [("retry", self.deps.cypher_model)] * cfg.retries
        if self.deps.fallback_model is not None:
            tries.append(("fallback", self.deps.fallback_model))
        if not tries:
            o.reason = "no template matches this question and no `cypher` model is bound"
            return
        gen_params = param_names(entities)
        last_query, last_error = "", ""
        for attempt, (source, model) in enumerate(tries, 1):
            o.attempts = attempt
            if source == "template" and intent is not None:
                cypher, p = intent.cypher, params
            else:
                assert model is not None
                retry = source in ("retry", "fallback")
                msgs = cypher_messages(
                    self.spec,
                    u.question,
                    gen_params,
                    last_query if retry else "",
                    last_error if retry else "",
                )
                try:
                    with self.trace.span(
                        "model", "cypher", role=model.role, source=source, attempt=attempt
                    ) as span:
                        text = await asyncio.to_thread(
                            self._complete, model, msgs, self.trace.run_id
                        )
                        span["reply"] = text
                except ModelError as exc:
                    last_error = f"model failed: {exc}"
                    continue
                cypher, p = extract_cypher(text), {k: v for k, (v, _) in gen_params.items()}
            yield CypherEvent(cypher, p, source=source, attempt=attempt)
            with self.trace.span("guard", source, cypher=cypher, attempt=attempt) as span:
                verdict = await asyncio.to_thread(self.guard.check, cypher, p, req.principal)
                span.update(ok=verdict.ok, reasons=list(verdict.reasons))
            yield Guard(
                verdict.ok,
                reasons=list(verdict.reasons),
                cypher=verdict.cypher,
                injected=list(verdict.injected),
            )
            last_query = cypher
            if not verdict.ok:
                last_error = verdict.reason
                continue
            try:
                with self.trace.span("query", self.deps.store.backend, cypher=verdict.cypher) as sp:
                    rows = await asyncio.to_thread(
                        self.deps.store.query,
                        verdict.cypher,
                        verdict.params,
                        limit=cfg.row_limit,
                        timeout_s=cfg.timeout_s,
                    )
                    sp.update(rows=len(rows.rows), truncated=rows.truncated)
            except GraphQueryError as exc:
                last_error = f"execution failed: {exc}"
                continue
            o.cypher, o.params, o.source = verdict.cypher, verdict.params, source
            o.rows = rows.as_dicts()
            self._rows = rows
            return
        o.reason = f"no safe query could be made after {len(tries)} attempts: {last_error}"

    @staticmethod
    def _complete(model: RoleModel, msgs: list[Message], run_id: str | None) -> str:
        return model.complete(msgs, run_id=run_id, max_tokens=300, temperature=0.0, cache=True).text


def _cand(a: Alignment) -> dict[str, Any]:
    return {
        "mention": a.mention,
        "candidates": [
            {
                "label": c.entity.label,
                "key": c.entity.key,
                "name": c.entity.name,
                "score": round(c.score, 4),
                "method": c.method,
            }
            for c in a.candidates[:5]
        ],
    }


def from_rows(rows: GraphRows) -> Rows:
    """The Rows event of a result."""
    return Rows(
        list(rows.columns),
        [list(r) for r in rows.rows],
        truncated=rows.truncated,
        seconds=round(rows.seconds, 4),
    )
