"""Graph QA: understand → align → cypher → guard → run → answer, as an async event stream.

Whitelisted intents use their parameterised templates, but only when the template's slots
capture the whole question (`template_misfit`: no limits, superlatives, comparisons, counts,
negations, extra properties/labels/relationships or unmatched quoted values; a template's
typed slots — numbers, years, dates, booleans, enumerated values — are read by code,
`pipelines.graph.slots`, bound as parameters, and a wrong-typed value is refused); other questions
get Cypher from the `cypher` role, retried with the error, then the `cypher_fallback` role,
then a refusal. With `GraphDeps.runs` set, each question is a `graph` run with spans.
Nothing runs before the guard (parse, read-only, schema, permissions, EXPLAIN) passed it.
The user's own words are the question throughout (Cypher prompt, answer, display); the
understanding's rewrite is shown to the Cypher model beside them as a reading, and the names in
the user's words are aligned even when the understanding dropped them. A question carrying a
write statement inside a quoted value is refused before any model call. With
`graph.understand = auto` the rules read the question first and the `understand` model is asked
only when their reading is not enough (`routing.model_needed`: no template intent, a name that
does not align to one node, a template that would not capture the question, earlier turns).
In a conversation (`GraphRequest.history`), the understanding is built from the last turns
and the question, a follow-up carries the previous turn's entities, and the Cypher model sees
the earlier turns (`conversation`); `turn()` is what the next request's history keeps (each
run ends with it as a `turn` span, under `GraphRequest.session`).
Whether to ask back is decided by code (`pipelines.graph.clarify`): before the ladder from
entity ties and definite references several nodes fit (`definite`), after it also from a
property the schema lacks, the schema match and the candidates' differing results, against `graph.clarify_threshold` (`GraphOutcome.clarify`
holds the score and signals; when no query could be made, a missing property replaces the
failure and other signals are said beside it). An empty result first goes down the ladder's relaxation rung
(values as stored, case-insensitive CONTAINS); an answer from a relaxed query says so, and
the query without its most restrictive filter is offered as a question, never answered.
Outcomes: answered, clarify (the signals reached the threshold, or low confidence), no_rows
("no rows for this query", with the query), refused (with "the graph does not hold X; it
holds Y, Z" when the question or the rows do not hold what was asked).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from footnote.config import GraphSettings
from footnote.errors import FootnoteError, ModelError
from footnote.events import (
    AnswerDelta,
    CitationEvent,
    Done,
    Entities,
    Error,
    Event,
    Final,
    GraphAnswer,
    Intent,
    Status,
    Verification,
)
from footnote.index.graph.align import Alignment, EntityIndex
from footnote.models import judge_support
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.pipelines.graph import wording
from footnote.pipelines.graph.aligned import align_mentions
from footnote.pipelines.graph.answer import (
    asked_gap,
    compose_answer,
    finished,
    is_listing,
    selected_by,
)
from footnote.pipelines.graph.asked import write_request
from footnote.pipelines.graph.clarify import (
    QUERY_WORDS,
    Decision,
    Signal,
    code_signals,
    decide,
    entity_signals,
    first_row,
    missing_property,
    reading_signals,
    row_words,
    schema_gap,
)
from footnote.pipelines.graph.context import ExampleRetriever
from footnote.pipelines.graph.conversation import GraphTurn, history_text, prior_names, turn_data
from footnote.pipelines.graph.definite import definite_signals, guarded_holders
from footnote.pipelines.graph.ladder import CypherLadder, LadderResult, Ran
from footnote.pipelines.graph.outcome import (
    ANSWER_STATUS,
    GraphOutcome,
    GraphRequest,
    GraphStatus,
    cand,
    from_rows,
)
from footnote.pipelines.graph.relax import with_values
from footnote.pipelines.graph.results import matched_nothing
from footnote.pipelines.graph.routing import model_needed, template_fit
from footnote.pipelines.graph.understand import (
    OTHER,
    GraphUnderstanding,
    said_mentions,
    understand_by_model,
    understand_by_rules,
)
from footnote.pipelines.graph.values import stored_value, value_hints
from footnote.pipelines.trace import Trace
from footnote.store.base import RunStore
from footnote.store.graph.base import GraphRows, GraphStore, ValueSlot
from footnote.textnorm import joined_sentences, text_lang
from footnote.types import Answer, Sentence, Usage, flat_sentence
from footnote.verify.bounds import query_bounds
from footnote.verify.checks import Judge
from footnote.verify.cypher.guard import GraphGuard
from footnote.verify.graph_answer import schema_words

__all__ = ["GraphDeps", "GraphOutcome", "GraphQAPipeline", "GraphRequest", "GraphStatus",
           "from_rows"]  # fmt: skip


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
    judge_model: RoleModel | None = None
    """Judges the model's answer sentences against their rows (`graph.judge`); None: not judged."""
    runs: RunStore | None = None
    """Where runs and their spans are recorded (the workspace's store); None: not recorded."""
    examples: ExampleRetriever | None = None
    """The graph's library of checked pairs, for `graph.few_shot` retrieval."""
    owns_run: bool = True
    """False: the caller (the server's run hub) starts and finishes the run record; the
    pipeline only adds its spans."""


class GraphQAPipeline:
    """Runs one question; `outcome` holds the result after the stream ends."""

    def __init__(self, deps: GraphDeps) -> None:
        self.deps = deps
        self.spec = deps.store.spec
        self.guard = GraphGuard(deps.store, row_cap=deps.settings.row_limit + 1)
        self.outcome = GraphOutcome()
        self.trace = Trace()
        self._vocabulary = schema_words(self.spec) | QUERY_WORDS  # logic words are no attribute
        self.labels: tuple[str, ...] = tuple(self.spec.labels)
        """The graph's labels: every model call that carries its data is gated with them."""
        self._sentences: tuple[Sentence, ...] = ()
        self._support = 0.0
        self._question = self._said_zh = ""
        self._about: tuple[tuple[str, str], ...] = ()
        self._shown = ""
        """The chosen query as shown to people (without the server's row-cap probe)."""
        self._values: dict[str, Any] = {}
        """The template's typed non-entity slots, read from the question by code."""
        self._slot_error = ""
        self._names: list[str] = []
        self._found: list[Alignment] = []
        self._offer: Ran | None = None
        self._original = ""

    def turn(self) -> GraphTurn:
        """The last question as a turn of its conversation: the user's words, the answer (or
        why there is none), the query, the entities it was about."""
        o = self.outcome
        return GraphTurn(self._question, o.answer or o.reason, o.cypher, self._about)

    def close(self) -> None:
        """Release the graph store and the alignment index."""
        self.deps.store.close()
        self.deps.index.close()

    async def run(self, request: GraphRequest) -> AsyncIterator[Event]:
        """Yield intent, entities, cypher, guard, rows, answer_delta, citation, final, done."""
        t0 = time.perf_counter()
        runs = self.deps.runs
        self.trace = Trace(request.run_id, sink=runs.add_span if runs is not None else None)
        self.outcome = GraphOutcome(run_id=self.trace.run_id)
        owns = runs is not None and self.deps.owns_run
        if runs is not None and owns:
            runs.start(
                self.trace.run_id,
                "graph",
                {"graph": self.spec.name, "question": request.question},
                user_id=request.principal.id,
                session_id=request.session,
            )
        completed = False
        try:
            async for event in self._events(request, t0):
                yield event
            completed = True
            self.trace.add("turn", "conversation", turn_data(self.turn()), time.time(), 0.0)
        finally:
            if runs is not None and owns:
                o = self.outcome
                status = o.status if completed else "cancelled"
                runs.finish(self.trace.run_id, status, o.to_dict() if completed else None)

    async def _events(self, request: GraphRequest, t0: float) -> AsyncIterator[Event]:
        try:
            async for event in self._run(request):
                yield event
        except FootnoteError as exc:
            yield Error(type(exc).__name__, exc.public_message)
            self.trace.add("error", type(exc).__name__, {"message": str(exc)}, time.time(), 0.0)
            self.outcome.status = "refused"
            self.outcome.reason = f"could not answer: {exc.public_message}"
        o = self.outcome
        sentences = self._sentences
        if o.status != "answered":
            o.answer = o.answer or o.reason
            if text_lang(request.question) == "zh":  # the user reads it in their language
                o.answer = wording.outcome(o.status, o.answer, self._said_zh)
            sentences = (Sentence(o.answer, factual=False),)
        yield Status("outcome", o.status)
        yield GraphAnswer(
            o.status,
            o.answer,
            sentences=o.sentences or [{"text": o.answer, "rows": [], "factual": False}],
            cypher=self._shown or o.cypher,
            params=dict(o.params),
            reason=o.reason if o.status != "answered" else "",
            options=list(o.options),
            support=round(self._support, 4) if o.status == "answered" else 0.0,
        )
        yield Final(
            Answer(
                request.question,
                ANSWER_STATUS[o.status],
                sentences,
                support_score=self._support if o.status == "answered" else 0.0,
                reason=None if o.status == "answered" else f"{o.status}: {o.reason}",
                usage=Usage(seconds=time.perf_counter() - t0),
            )
        )
        yield Done()

    async def _run(self, req: GraphRequest) -> AsyncIterator[Event]:
        o, cfg = self.outcome, self.deps.settings
        self._sentences, self._support, self._about = (), 0.0, ()
        self._shown, self._original, self._offer, self._found, self._names = "", "", None, [], []
        self._said_zh = ""  # the outcome in Chinese, where it has its own wording
        question = self._question = " ".join(req.question.split())
        if not question:
            o.reason = "empty question"
            return
        if why := write_request(question):  # not a name to strip and answer around
            o.reason, self._said_zh = why, wording.READ_ONLY
            return
        yield Status("understand", "understanding the question")
        run_id = self.trace.run_id
        with self.trace.span("understand", self.deps.settings.understand) as span:
            u, method, why = await self._understand(question, run_id, req.history)
            span.update(method=method, understanding=u.model_dump(), model_asked_for=why)
            u, invented = said_mentions(u, question, req.history)
            if invented:  # names the user never said are not aligned (nor made parameters)
                span["not_in_question"] = invented
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
            found = align_mentions(self.deps.index, self.spec, u, method, question, req.history)
            span["found"] = [cand(a) for a in found]
            span["ambiguous"] = [a.mention for a in found if a.ambiguous]
            self._found = found
            self._names = [a.mention for a in found if a.best and a.best.method != "vector"]
            holders = guarded_holders(self.guard, self.deps.store, req.principal, cfg.timeout_s)
            definite = definite_signals(question, self.spec, self.deps.index, holders)
            before = self._decide(question, None, entities_only=True, extra=definite)
            span["clarify"] = before.to_dict()
        yield Entities(
            [cand(a) for a in found if not a.ambiguous],
            ambiguous=[cand(a) for a in found if a.ambiguous],
        )
        u = self._route(question, u, found)
        self.trace.add(
            "route", o.route,
            {"intent": o.intent, "reason": o.route_reason, "values": self._values},
            time.time(), 0.0,
        )  # fmt: skip
        yield Status("route", f"{o.route}: {o.route_reason}" if o.route_reason else o.route)
        if self._slot_error:  # a value of the wrong type for a typed slot
            o.status, o.reason = "refused", self._slot_error
            return
        if self._asks_back(before):
            return
        if u.confidence < cfg.min_confidence:
            o.status, self._said_zh = "clarify", wording.UNCLEAR
            o.reason = "the question is unclear: please name what you are looking for"
            return
        entities = {a.mention: a.best for a in found if a.best is not None}
        self._about = tuple((c.entity.label, c.entity.key) for c in entities.values())
        self._rows: GraphRows | None = None
        async for event in self._ladder(question, u, entities, req):
            yield event
        rows = self._rows
        if rows is None:
            return
        yield from_rows(rows)
        if matched_nothing(rows, o.cypher):  # a statement about the query, not the graph
            o.status, o.reason = "no_rows", "no rows for this query"
            counted = " (it counted nothing)" if rows.rows else ""
            o.answer = f"No rows for this query{counted}: {with_values(o.cypher, o.params)}"
            self._said_zh = wording.no_rows(with_values(o.cypher, o.params), bool(counted))
            if (offer := self._offer) is not None:  # a question, never the answer
                shown = with_values(offer.shown or offer.cypher, offer.params)
                how = offer.relaxed[:1].upper() + offer.relaxed[1:]
                o.status, o.options = "clarify", [shown]
                o.reason = o.answer = (
                    f"No rows for this query: {with_values(self._shown, o.params)}. {how} it "
                    f"matches {len(offer.rows.rows)} row(s) ({first_row(offer.rows)}): is that "
                    f"what you meant? {shown}"
                )
                self._said_zh = wording.no_rows_offer(
                    with_values(self._shown, o.params), offer.relaxed, len(offer.rows.rows),
                    first_row(offer.rows), shown,
                )  # fmt: skip
            return
        model = self._answer_model()
        listing = is_listing(question)
        zh = text_lang(question) == "zh"
        gap_free = (o.source == "template" or listing or zh) and missing_property(
            question, self.spec, self._found, self._names, " ".join(row_words(rows))
        ) is None  # only these uses read it: not computed for every answer
        yield Status("compose", "writing the answer from the rows")
        with self.trace.span("compose", "model" if model else "template") as span:
            composed = await asyncio.to_thread(
                compose_answer,
                question,  # the user's words: the rewrite never replaces them
                rows,
                model=model,
                answer_template=self._answer_template(u.intent) if o.source == "template" else "",
                max_rows=cfg.answer_rows,
                params=o.params,
                labels=self.labels,
                run_id=run_id,
                judge=self._judge() if model is not None else None,
                vocabulary=self._vocabulary,
                named=selected_by(self._found, o.params, self._shown or o.cypher),
                bounds=query_bounds(o.cypher, o.params),
                nothing_missing=o.source == "template" and gap_free,  # aliases prove nothing
                rows_asked=listing and gap_free,
                asked_held=zh and gap_free,
            )
            v = composed.verdict
            span.update(
                sentences=[s.text for s in composed.sentences],
                support=round(v.support, 4), fabricated=v.fabricated, dropped=v.dropped,
                completed=composed.completed,
                reasons=[c.reasons for c in v.checks],
            )  # fmt: skip
            if composed.discarded is not None:
                span["discarded"] = composed.discarded.reason
        if composed.method == "model" and not composed.sentences:  # not what was asked
            names = [
                n for a in found for n in (a.mention, *(c.entity.name for c in a.candidates[:1]))
            ]
            names += [str(v) for v in o.params.values()]  # the query's values ('Peter') too
            labels = [a.best.entity.label for a in found if a.best]
            o.status = "refused"
            o.reason, self._said_zh = asked_gap(question, self.spec, rows, names, labels)
            return
        if not any(s.factual for s in composed.sentences):  # nothing passed the row checks
            o.status = "refused"
            o.reason = "no sentence of the answer could be checked against the rows: " + (
                composed.verdict.reason or "nothing was written"
            )
            return
        self._sentences = composed.sentences
        if o.relaxed or o.picked:  # the answer is to a relaxed query, or rows code picked
            relaxed = f"No rows for this query: {self._original}; relaxed: {o.relaxed}."
            note = finished(o.picked) if o.picked else relaxed.replace("\n", " ")
            self._sentences = (Sentence(note, factual=False), *composed.sentences)
        self._support = o.support = round(composed.verdict.support, 4)
        o.sentences = [
            {"text": s.text, "rows": [c.evidence_id for c in s.citations], "factual": s.factual}
            for s in self._sentences
        ]
        o.status, o.answer = "answered", joined_sentences(s.text for s in self._sentences)
        v = composed.verdict
        yield Status(
            "verify",
            f"{len(v.checks) - v.dropped} of {len(v.checks)} sentences passed the row checks"
            + (f"; {v.fabricated} unshown row ids dropped" if v.fabricated else ""),
        )
        for n, s in enumerate(self._sentences):
            yield AnswerDelta(flat_sentence(s.text, insufficient=s.marked_insufficient) + " ")
            for c in s.citations:
                yield CitationEvent(n, c)
                yield Verification(n, c.evidence_id, c.verdict, reasons=dict(c.checks))

    def _decide(
        self,
        question: str,
        known: str | None,
        res: LadderResult | None = None,
        entities_only: bool = False,
        extra: Sequence[Signal] = (),
    ) -> Decision:
        """The clarification decision from the code's signals (`known`: the result's words,
        None before a query ran: no missing-property signal; `entities_only`: only entity
        ties, before the ladder) and, after it, the candidates' result groups
        (`graph.unsure = "signals"`); kept in the outcome's `clarify` (the run's output)."""
        cfg = self.deps.settings
        if entities_only:  # entity ties and `extra` (a definite reference to several nodes)
            signals = [*entity_signals(self._found), *extra]
        else:
            signals = code_signals(question, self.spec, self._found, self._names, known)
        if res is not None and cfg.unsure == "signals":
            signals += reading_signals(res.groups)
        d = decide(signals, cfg.clarify_threshold)
        self.outcome.clarify = d.to_dict()
        return d

    def _asks_back(self, d: Decision) -> bool:
        """Set the outcome to the decision's ask-back when it asks: the strongest signal's
        words and readings (a missing property is refused with what the graph holds)."""
        top = d.top
        if not d.ask or top is None:
            return False
        o = self.outcome
        o.status = "refused" if top.kind == "missing_property" else "clarify"
        o.reason, o.options, self._said_zh = top.says, list(top.options), top.says_zh
        return True

    def _route(
        self, question: str, u: GraphUnderstanding, found: list[Alignment]
    ) -> GraphUnderstanding:
        """Keep a template intent only when its slots capture every constraint of the question;
        its typed slots are read from the question here (a wrong-typed value: `_slot_error`)."""
        o = self.outcome
        self._values, self._slot_error = {}, ""
        if u.intent == OTHER:
            o.route, o.route_reason = "generated", ""
            return u
        fit = template_fit(question, u, found, self.spec, self._allowed)
        if fit.slots.error:
            o.route, o.route_reason = "template", fit.slots.error
            self._slot_error = fit.slots.error
            return u
        if fit.why:
            o.route, o.route_reason = "generated", f"template {u.intent} skipped: {fit.why}"
            return u.model_copy(update={"intent": OTHER})
        o.route, o.route_reason = "template", ""
        self._values = fit.slots.values
        return u

    def _allowed(self, slot: ValueSlot) -> list[str]:
        """The stored values of an ENUM slot's `Label.property` (the spec names both, checked
        against the schema; a restricted label is refused by the spec's check)."""
        label, _, prop = slot.property.partition(".")
        rows = self.deps.store.query(
            f"MATCH (n:`{label}`) RETURN DISTINCT n.`{prop}` AS v", {}, limit=1000,
            timeout_s=self.deps.settings.timeout_s,
        )  # fmt: skip
        return [str(r[0]) for r in rows.rows if r[0] is not None]

    def _judge(self) -> Judge | None:
        """The judge role as the gate's `judge(claim, rows)`, each call traced."""
        model = self.deps.judge_model
        if model is None or not self.deps.settings.judge:
            return None
        labels, trace = self.labels, self.trace

        def judge(claim: str, passage: str) -> float:
            with trace.span("model", "judge", role="judge", claim=claim) as span:
                p = float(judge_support(model, claim, passage, labels=labels, run_id=trace.run_id))
                span["p_yes"] = p
            return p

        return judge

    def _answer_model(self) -> RoleModel | None:
        mode = self.deps.settings.answer
        return None if mode == "template" else self.deps.answer_model

    async def _understand(
        self, question: str, run_id: str | None, history: tuple[GraphTurn, ...] = ()
    ) -> tuple[GraphUnderstanding, str, str]:
        """The reading, how it was made, and why the model was asked ("" when it was not)."""
        mode, model = self.deps.settings.understand, self.deps.understand_model
        rules = understand_by_rules(question, self.spec, self.deps.index, history)
        if mode == "rules" or model is None:
            return rules, "rules", ""
        why = "earlier turns" if history else "understand = model"
        if mode == "auto" and not history:  # a template that captures it needs no model
            why = model_needed(question, rules, self.deps.index, self.spec, self._allowed)
            if not why:
                return rules, "rules", ""
        try:
            u = await asyncio.to_thread(
                understand_by_model, model, question, self.spec, run_id=run_id,
                labels=self.labels, history=history,
            )  # fmt: skip
            return u, "model", why
        except ModelError:
            return rules, "rules", why

    # -- the ladder ------------------------------------------------------------------------
    async def _ladder(
        self, question: str, u: GraphUnderstanding, entities: dict[str, Any], req: GraphRequest
    ) -> AsyncIterator[Event]:
        """Run `CypherLadder`; sets `self._rows`, or the outcome's unsure status / reason."""
        o = self.outcome
        labels, run_id = self.labels, self.trace.run_id

        def complete(model: RoleModel, msgs: list[Message], temp: float, cache: bool) -> str:
            return self._complete(model, msgs, run_id, labels, temp, cache)

        ladder = CypherLadder(
            self.deps.store, self.guard, self.deps.settings, self.trace, complete,
            cypher_model=self.deps.cypher_model, fallback_model=self.deps.fallback_model,
            retriever=self.deps.examples, embedder=self.deps.index.embedder,
            stored=partial(stored_value, self.deps.index, self.spec),
        )  # fmt: skip
        intent = self.spec.intents.get(u.intent) if u.intent != OTHER else None
        ladder.history = history_text(req.history, with_cypher=True)
        ladder.prior = tuple(prior_names(self.deps.index, req.history))
        reading = u.question
        if u.sub_questions:
            reading += " (parts: " + "; ".join(u.sub_questions) + ")"
        if hints := value_hints(self.deps.index, u, entities):
            reading += " (values as stored: " + "; ".join(hints) + ")"
        run = ladder.run(question, intent, entities, req.principal, reading, values=self._values)
        async for event in run:
            yield event
        res = ladder.result
        o.attempts = res.attempts
        if res.chosen is None:
            o.reason = res.failure or res.error
            self._said_zh = wording.NO_TEMPLATE_ZH if o.reason == wording.NO_TEMPLATE else ""
            if gap := schema_gap(res.error, self.spec):  # "the graph does not hold X"
                o.reason, o.options, self._said_zh = gap
            elif (d := self._decide(question, "", res)).ask and (top := d.top) is not None:
                if top.kind == "missing_property":  # "the graph does not hold X"
                    o.reason, o.options, self._said_zh = top.says, list(top.options), top.says_zh
                else:  # what failed stays said; what is unclear is said beside it
                    failed = wording.sentence(wording.outcome("refused", o.reason, self._said_zh))
                    o.reason, o.options = f"{o.reason}; {top.says}", list(top.options)
                    self._said_zh = f"{failed}{top.says_zh}" if top.says_zh else ""
            return
        c = res.chosen
        o.cypher, o.params, o.source = c.cypher, c.params, c.source
        self._shown = c.shown or c.cypher
        o.rows = c.rows.as_dicts()
        o.relaxed, self._original, self._offer = c.relaxed, c.original, res.offer
        o.picked = c.picked
        known = "\n".join(row_words(c.rows))
        if not res.unsure and self._asks_back(self._decide(question, known, res)):
            yield from_rows(c.rows)
            return
        if res.unsure:
            yield from_rows(c.rows)
            o.status = "clarify" if res.unsure == "clarify" else "refused"
            o.reason, o.options = res.reason, res.options
            return
        self._rows = c.rows

    def _answer_template(self, intent: str) -> str:
        """The intent's sentence template in the question's language (a Chinese question
        without one of its own gets the generic Chinese rendering, not English sentences)."""
        it = self.spec.intents[intent]
        return it.answer_zh if text_lang(self._question) == "zh" else it.answer

    @staticmethod
    def _complete(
        model: RoleModel,
        msgs: list[Message],
        run_id: str | None,
        labels: tuple[str, ...],
        temperature: float = 0.0,
        cache: bool = True,
    ) -> str:
        return model.complete(
            msgs, run_id=run_id, max_tokens=300, temperature=temperature, cache=cache,
            labels=labels,
        ).text  # fmt: skip
