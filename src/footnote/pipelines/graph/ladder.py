"""The ladder that turns a question into rows, each step switched in `[graph]`:

1. a whitelisted template when its slots capture the whole question (no model);
2. the prompt: the schema, pruned to what the question touches (`prune_schema`), and
   examples retrieved from the graph's library of checked pairs (`few_shot`);
3. `candidates` queries from the `cypher` role (the first greedy, the rest sampled at
   `temperature`), each through parse + schema + permissions + EXPLAIN (the guard) and run;
4. a candidate that fails is retried `retries` times, with the rejected query and the error
   (`retry_with_error`) — and, for the small model's recurring mistakes (SQL, one statement
   per entity), the Cypher form of what it meant (`fixes.fix_hint`) — or blind;
5. a query that matched nothing (no rows, or one row of zero counts / null aggregates) is not
   yet an answer: the template gives way to generated candidates, a candidate is retried
   with "matched nothing" (when retries are left), then the next candidate, then the
   fallback; only when every rung matched nothing is the result empty;
6. the result is chosen by agreement of the candidates' result sets (`choose`), preferring
   results that matched something, and when the candidates disagree or the chosen result is
   empty, `unsure` asks back with the readings (`clarify`) or refuses, instead of presenting
   an empty answer;
7. a query that matched nothing tries the relaxation rung first (`relax`, `graph.relax`):
   its string values as stored (aligned), then string equality as case-insensitive
   CONTAINS; a relaxed run that matches is kept, marked `relaxed`; when every rung matched
   nothing, the query without its most restrictive filter (the dropped conjunct whose
   query matches the fewest rows) is kept as `offer`: a question, never the answer;
8. when no candidate ran, the fallback rung: the `cypher_fallback` role when it is bound to
   a model other than `cypher` (`rungs.fallback_rung`); else a different strategy with `cypher`
   (`fallback_candidates` candidates by agreement, the full schema instead of the pruned
   one, examples retrieved for the failing query's pattern).

Rows that answer are kept as they ran, except that code picks the rows a superlative asks for
(`picked`) and leaves out what the previous turn was about when a follow-up asks for other
ones (`others`), each said beside the answer. What failed reaches the user in words (`LadderResult.failure`); the engine's own message is
logged and given to the model's retry.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from footnote.config import GraphSettings
from footnote.errors import ModelError
from footnote.events import CypherEvent, Event, Guard, Status
from footnote.index.graph.align import Candidate
from footnote.models.base import Embedder, Message
from footnote.models.roles import RoleModel
from footnote.pipelines.graph import wording
from footnote.pipelines.graph.asked import misfit, numbers_for_entity
from footnote.pipelines.graph.clarify import first_row
from footnote.pipelines.graph.context import (
    ExampleRetriever,
    examples_block,
    prune_spec,
    similar_labels,
)
from footnote.pipelines.graph.cypher import cypher_messages, extract_cypher, param_names
from footnote.pipelines.graph.directions import along_schema
from footnote.pipelines.graph.fixes import fix_hint, one_statement
from footnote.pipelines.graph.literals import literal_params
from footnote.pipelines.graph.others import without_prior
from footnote.pipelines.graph.picked import pick_extreme
from footnote.pipelines.graph.relax import (
    Aligner,
    as_stored,
    loosened,
    own_params,
    with_values,
    without_each_filter,
)
from footnote.pipelines.graph.results import distinct_rows, matched_nothing, result_key
from footnote.pipelines.trace import Trace
from footnote.store.graph.base import (
    GraphQueryError,
    GraphRows,
    GraphSpec,
    GraphStore,
    Intent,
    engine_error_words,
)
from footnote.verify.cypher.guard import COMPILE_FAILED, GraphGuard, Principal

log = logging.getLogger(__name__)
NOTHING_MATCHED = (
    "the query ran but matched nothing (no rows, or a count of 0): check the values, labels "
    "and relationship directions against the schema"
)
_ORDER_LIMIT = re.compile(
    r"\bORDER\s+BY\s+(?P<key>[^,]+?)(?:\s+(?:ASC|DESC|ASCENDING|DESCENDING))?\s+LIMIT\s+"
    r"(?P<k>\d+)\s*$",
    re.I,
)
_TIE_ROWS = 25
"""How many rows past a LIMIT are read to find the ones tied with the last."""

Completer = Callable[[RoleModel, list[Message], float, bool], str]
"""`complete(model, messages, temperature, cache)` → reply text (run id and labels bound)."""


@dataclass
class Ran:
    """A candidate query that passed the guard and ran."""

    cypher: str
    params: dict[str, Any]
    rows: GraphRows
    source: str
    attempt: int
    shown: str = ""
    """The query as shown to people (`GuardVerdict.shown`); "" when it is `cypher`."""
    relaxed: str = ""
    """What the relaxation rung relaxed (in words); "" for a query as written."""
    original: str = ""
    """For a relaxed run: the query as written (values shown), which matched nothing."""
    picked: str = ""
    """What code picked from the rows for a superlative the query did not pick (in words)."""


@dataclass
class LadderResult:
    """What the ladder found: the chosen run, or why it is unsure, or the last error."""

    chosen: Ran | None = None
    attempts: int = 0
    error: str = ""
    unsure: str = ""
    """`clarify` or `refuse` when the candidates disagreed or the result was empty."""
    reason: str = ""
    options: list[str] = field(default_factory=list)
    agreement: float = 0.0
    failure: str = ""
    """What failed, in words for the user (`error` keeps the engine's own message)."""
    groups: list[tuple[str, GraphRows, int]] = field(default_factory=list)
    """The runs grouped by result set: (a query, its rows, how many runs), chosen first."""
    offer: Ran | None = None
    """When every rung matched nothing: the query without its most restrictive filter."""


class CypherLadder:
    """One question's way from understanding to rows (events streamed, result in `result`)."""

    def __init__(
        self,
        store: GraphStore,
        guard: GraphGuard,
        settings: GraphSettings,
        trace: Trace,
        complete: Completer,
        *,
        cypher_model: RoleModel | None,
        fallback_model: RoleModel | None,
        retriever: ExampleRetriever | None = None,
        embedder: Embedder | None = None,
        stored: Aligner | None = None,
    ) -> None:
        self.store, self.guard, self.cfg, self.trace = store, guard, settings, trace
        self.complete = complete
        self.cypher_model, self.fallback_model = cypher_model, fallback_model
        self.retriever = retriever
        self.embedder = embedder
        self.stored = stored
        """`stored(property, value)`: the value the graph stores for it (the relaxation rung)."""
        self.result = LadderResult()
        self.history = ""
        """The conversation's earlier turns, shown to the Cypher model (set by the pipeline)."""
        self.prior: tuple[str, ...] = ()
        """The names of the previous turn's entities, left out of the rows of a question
        asking for other ones (set by the pipeline)."""
        self._last = ""
        self._empty: list[Ran] = []
        """Runs that matched nothing, kept in case no rung matches anything."""
        spec = store.spec
        self._schema_names = {*spec.nodes, *spec.relationships}
        self._schema_names |= {p for t in spec.nodes.values() for p in t.properties}
        self._schema_names |= {p for r in spec.relationships.values() for p in r.properties}
        """Labels, types and properties: words a question names them by, never its values."""
        self._question = ""
        self._misfit: list[tuple[Ran, str]] = []
        """Runs whose rows cannot answer the kind of thing asked, and why."""

    async def run(
        self,
        question: str,
        intent: Intent | None,
        entities: Mapping[str, Candidate],
        principal: Principal,
        reading: str = "",
        values: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[Event]:
        """Template first (when given and its slots are filled: entities, and `values` for its
        typed slots), then generated candidates for the user's `question` (`reading`, the
        understanding's rewrite, is shown beside it)."""
        res, self._question = self.result, question
        if intent is not None:
            by_label: dict[str, str] = {}
            for c in entities.values():
                by_label.setdefault(c.entity.label, c.entity.key)
            typed = dict(values or {})
            filled = all(lab in by_label for lab in intent.params.values())
            if filled and all(name in typed for name in intent.values):
                params = {p: by_label[lab] for p, lab in intent.params.items()} | typed
                res.attempts += 1
                ran = None
                async for ev in self._try(intent.cypher, params, "template", principal):
                    if isinstance(ev, Ran):
                        ran = ev
                    else:
                        yield ev
                generate = self.cypher_model is not None or self.fallback_model is not None
                kept: list[Ran] = []
                if ran is not None:
                    async for ev in self._keep(ran, kept, principal):
                        yield ev
                if kept:
                    res.chosen, res.agreement = kept[0], 1.0
                    res.groups = [(kept[0].cypher, kept[0].rows, 1)]
                    return
                if ran is not None:  # the next rung before anything is said
                    res.error = res.failure = self._why(ran)
                    if not generate:
                        async for ev in self._offer(principal):
                            yield ev
                        res.chosen, res.agreement = ran, 1.0
                        res.groups = [(ran.cypher, ran.rows, 1)]
                        return
        if self.cypher_model is None and self.fallback_model is None:
            res.error = res.error or wording.NO_TEMPLATE
            return
        async for ev in self._generate(question, entities, principal, reading):
            yield ev

    async def _generate(
        self,
        question: str,
        entities: Mapping[str, Candidate],
        principal: Principal,
        reading: str = "",
    ) -> AsyncIterator[Event]:
        cfg, res = self.cfg, self.result
        gen = param_names(dict(entities))
        values = {k: v for k, (v, _) in gen.items()}
        spec: GraphSpec = self.store.spec
        shown = spec
        if cfg.prune_schema:
            found = {c.entity.label for c in entities.values()}
            shown = prune_spec(spec, question, found)
            if shown is spec and self.embedder is not None:  # no exact match: by similarity
                near = await asyncio.to_thread(similar_labels, spec, question, self.embedder)
                shown = prune_spec(spec, question, found | set(near))
        examples = None
        if cfg.few_shot and self.retriever is not None:
            examples = examples_block(self.retriever.top(question, cfg.few_shot))
        self.trace.add("prompt", "cypher", {"labels": list(shown.nodes),
                                            "examples": examples is not None}, 0.0, 0.0)  # fmt: skip
        base = cypher_messages(
            shown, question, gen, examples=examples, reading=reading, backend=self.store.backend,
            history=self.history,
        )  # fmt: skip
        ran: list[Ran] = []
        model = self.cypher_model
        for k in range(cfg.candidates if model is not None else 0):
            assert model is not None
            temp = 0.0 if k == 0 else cfg.temperature
            msgs, source = base, "model" if k == 0 else "sample"
            for r in range(cfg.retries + 1):
                res.attempts += 1
                text = await self._ask(model, msgs, temp, cache=temp == 0.0 and r == 0)
                if text is None:
                    break
                cypher = extract_cypher(text)
                got = None
                async for ev in self._try(cypher, values, source, principal):
                    if isinstance(ev, Ran):
                        got = ev
                    else:
                        yield ev
                had = len(ran)
                if got is not None:
                    async for ev in self._keep(got, ran, principal):
                        yield ev
                if len(ran) > had:
                    break
                if got is not None:
                    res.error = res.failure = self._why(got)
                    if r == cfg.retries:
                        break
                source = "retry"
                if cfg.retry_with_error:
                    msgs = cypher_messages(
                        shown, question, gen, cypher, res.error, examples=examples,
                        reading=reading, backend=self.store.backend, history=self.history,
                    )  # fmt: skip
                else:  # a blind resample of the same prompt
                    msgs, temp = base, max(temp, cfg.temperature)
            if ran and cfg.choose == "first":
                break
        if not ran and self.fallback_model is None and model is not None:
            async for ev in self._strategy(question, gen, values, principal, reading, ran):
                yield ev
        if not ran and self.fallback_model is not None:
            res.attempts += 1
            msgs = base
            if self._last:  # the fallback sees what was rejected last, and why
                msgs = cypher_messages(
                    shown, question, gen, self._last, res.error, examples=examples,
                    reading=reading, backend=self.store.backend, history=self.history,
                )  # fmt: skip
            text = await self._ask(self.fallback_model, msgs, 0.0, cache=True)
            if text is not None:
                async for ev in self._run_kept(extract_cypher(text), values, principal, ran):
                    yield ev
        if not ran and self._misfit and not self._empty:  # rows, never of the kind asked
            reason = self._misfit[-1][1]
            res.error = res.failure = f"after {res.attempts} attempts, {reason}"
            return
        if not ran and self._empty:  # every rung matched nothing: that is the result
            async for ev in self._offer(principal):
                yield ev
            ran = self._empty
        if not ran:
            n = res.attempts
            res.error = f"no safe query could be made after {n} attempts: {res.error}"
            res.failure = f"no safe query could be made after {n} attempts: {res.failure}"
            return
        yield self._choose(ran)

    async def _strategy(
        self,
        question: str,
        gen: Mapping[str, tuple[str, str]],
        values: Mapping[str, Any],
        principal: Principal,
        reading: str,
        ran: list[Ran],
    ) -> AsyncIterator[Event]:
        """The fallback rung on the embedded tier: the `cypher` model again, shown the whole
        schema, the rejected query with its error, and the examples whose queries walk the
        same labels and relationships; `fallback_candidates` candidates (the first greedy),
        chosen later by agreement."""
        cfg, res, model = self.cfg, self.result, self.cypher_model
        if model is None or not cfg.fallback_candidates:
            return
        spec: GraphSpec = self.store.spec
        k = max(cfg.few_shot, 3)
        examples = None
        if self.retriever is not None:
            examples = examples_block(self.retriever.for_pattern(question, self._last, k))
        msgs = cypher_messages(
            spec, question, dict(gen), self._last, res.error,
            examples=examples, reading=reading, backend=self.store.backend, history=self.history,
        )  # fmt: skip
        self.trace.add("prompt", "fallback", {"labels": list(spec.nodes), "examples":
                                              examples is not None}, 0.0, 0.0)  # fmt: skip
        for i in range(cfg.fallback_candidates):
            res.attempts += 1
            temp = 0.0 if i == 0 else max(cfg.temperature, 0.3)
            text = await self._ask(model, msgs, temp, cache=i == 0)
            if text is None:
                break
            async for ev in self._run_kept(extract_cypher(text), values, principal, ran):
                yield ev

    async def _run_kept(
        self, cypher: str, values: Mapping[str, Any], principal: Principal, ran: list[Ran]
    ) -> AsyncIterator[Event]:
        """Run a fallback candidate; keep it (`_keep`)."""
        async for ev in self._try(cypher, values, "fallback", principal):
            if isinstance(ev, Ran):
                async for e in self._keep(ev, ran, principal):
                    yield e
            else:
                yield ev

    async def _keep(self, got: Ran, ran: list[Ran], principal: Principal) -> AsyncIterator[Event]:
        """A run that matched something joins `ran`; one that matched nothing waits in
        `_empty` and tries the relaxations (`as_stored`, then `loosened`): the first relaxed
        run that matches joins `ran` instead."""
        if not matched_nothing(got.rows, got.cypher):
            text = got.shown or got.cypher
            if why := misfit(self._question, text, got.rows, self.store.spec):
                if pick := self._picked(got, text):  # the rows held it: code picks, and says so
                    ran.append(pick)
                    return
                self._misfit.append((got, why))  # rows of another kind: the next rung, with why
                self.trace.add("misfit", got.source, {"reason": why}, time.time(), 0.0)
            elif left := without_prior(self._question, got.rows, self.prior):
                self.trace.add("left_out", got.source, {"how": left.how}, time.time(), 0.0)
                ran.append(replace(got, rows=left.rows, picked=left.how))
            else:
                ran.append(got)
            return
        self._empty.append(got)
        if not self.cfg.relax:
            return
        base = got.shown or got.cypher
        text, params = own_params(base, got.params)
        tries = []
        if self.stored is not None and (a := as_stored(text, params, self.stored)):
            tries.append(a)
        if b := loosened(text, params):
            tries.append(b)
        saved, kept = (self._last, self.result.error, self.result.failure), False
        for r in tries:
            async for ev in self._try(r.cypher, r.params, "relaxed", principal):
                if not isinstance(ev, Ran):
                    yield ev
                elif not matched_nothing(ev.rows, ev.cypher):
                    ev.relaxed, ev.original, kept = r.how, with_values(base, got.params), True
                    ran.append(ev)
            if kept:
                break
        self._last, self.result.error, self.result.failure = saved  # what the model sees

    def _picked(self, got: Ran, text: str) -> Ran | None:
        """`got` with the rows a superlative asks for, picked by code (`picked`), or None."""
        pick = pick_extreme(self._question, text, got.rows)  # tied rows stay several
        if pick is None or numbers_for_entity(self._question, pick.rows, self.store.spec):
            return None
        self.trace.add("picked", got.source, {"how": pick.how}, time.time(), 0.0)
        return replace(got, rows=pick.rows, picked=pick.how)

    def _why(self, got: Ran) -> str:
        """Why a run that ran was not kept: its rows are not of the kind asked, or empty."""
        return next((why for r, why in self._misfit if r is got), NOTHING_MATCHED)

    async def _offer(self, principal: Principal) -> AsyncIterator[Event]:
        """Every rung matched nothing: `offer` is the first empty query without the conjunct
        whose removal matches the fewest rows (a question to ask, never the answer)."""
        if not self.cfg.relax:
            return
        found: list[Ran] = []
        saved = self._last, self.result.error, self.result.failure
        for empty in self._empty[:2]:
            base = empty.shown or empty.cypher
            for r in without_each_filter(*own_params(base, empty.params)):
                async for ev in self._try(r.cypher, r.params, "relaxed", principal):
                    if not isinstance(ev, Ran):
                        yield ev
                    elif not matched_nothing(ev.rows, ev.cypher):
                        ev.relaxed, ev.original = r.how, with_values(base, empty.params)
                        found.append(ev)
            if found:
                break
        self._last, self.result.error, self.result.failure = saved
        if found:
            self.result.offer = min(found, key=lambda r: len(r.rows.rows))

    def _choose(self, ran: list[Ran]) -> Status:
        """Pick by agreement of result sets; mark disagreement or an empty result as unsure."""
        res, cfg = self.result, self.cfg
        groups: dict[str, list[Ran]] = {}
        for r in ran:
            groups.setdefault(result_key(r.rows), []).append(r)
        # results that matched something first, then the largest group (ties: the earliest)
        best = max(
            groups.values(), key=lambda g: (not matched_nothing(g[0].rows, g[0].cypher), len(g))
        )
        res.chosen, res.agreement = best[0], len(best) / len(ran)
        res.groups = [(best[0].cypher, best[0].rows, len(best))] + [
            (g[0].cypher, g[0].rows, len(g)) for g in groups.values() if g is not best
        ]
        disagree = len(ran) > 1 and len(best) == 1
        empty = matched_nothing(best[0].rows, best[0].cypher)
        if cfg.unsure in ("clarify", "refuse") and (disagree or empty):
            res.unsure = cfg.unsure
            if disagree:
                readings = [g[0] for g in groups.values()]
                res.options = [f"{r.cypher}  →  {first_row(r.rows)}" for r in readings[:4]]
                res.reason = (
                    f"the question can be read in {len(groups)} ways that give different "
                    "results; which one do you mean?"
                )
            else:  # about the query, not the graph
                res.reason = f"no rows for this query: {best[0].cypher}"
        return Status(
            "choose", f"{len(best)} of {len(ran)} candidate results agree"
            + (f"; unsure ({'disagree' if disagree else 'empty'})" if res.unsure else "")
        )  # fmt: skip

    async def _ask(
        self, model: RoleModel, msgs: list[Message], temp: float, *, cache: bool
    ) -> str | None:
        try:
            with self.trace.span("model", "cypher", role=model.role, temperature=temp) as span:
                text = await asyncio.to_thread(self.complete, model, msgs, temp, cache)
                span["reply"] = text
            return text
        except ModelError as exc:
            self.result.error = self.result.failure = f"model failed: {exc}"
            return None

    async def _try(
        self, cypher: str, params: Mapping[str, Any], source: str, principal: Principal
    ) -> AsyncIterator[Event | Ran]:
        """Guard, then run one candidate: events, then a `Ran` when it ran."""
        res, cfg = self.result, self.cfg
        cypher, turned = along_schema(cypher, self.store.spec)
        if turned:  # an arrow against the schema matches nothing: the relationship was meant
            self.trace.add("directions", source, {"turned": turned}, time.time(), 0.0)
        if source not in ("template", "relaxed") and (
            merged := one_statement(cypher, self.store.spec)
        ):
            self.trace.add("one_statement", source, {"written": cypher}, time.time(), 0.0)
            cypher = merged  # one statement per entity, as the one statement meant
        if source not in ("template", "relaxed") and (
            bound := literal_params(cypher, params, self._question, schema_names=self._schema_names)
        ):  # a value the user typed, lifted by the model into a parameter of its own
            params = {**params, **bound}
            self.trace.add("literals", source, {"bound": bound}, time.time(), 0.0)
        self._last = cypher
        yield CypherEvent(cypher, dict(params), source=source, attempt=res.attempts)
        with self.trace.span("guard", source, cypher=cypher, attempt=res.attempts) as span:
            verdict = await asyncio.to_thread(self.guard.check, cypher, params, principal)
            span.update(ok=verdict.ok, reasons=list(verdict.reasons))
        yield Guard(verdict.ok, reasons=list(verdict.reasons), cypher=verdict.cypher,
                    injected=list(verdict.injected))  # fmt: skip
        if not verdict.ok:
            res.error = res.failure = verdict.reason
            if hint := fix_hint(
                cypher, params, self.store.spec, verdict.reason
            ):  # the model's own mistake, named
                res.error = f"{verdict.reason}\n{hint}"
            if verdict.reason.startswith(COMPILE_FAILED):
                log.info("graph query did not compile: %s | %s", verdict.reason, cypher)
                raw = verdict.reason.removeprefix(COMPILE_FAILED)
                res.failure = "the query did not compile: " + engine_error_words(raw)
            return
        try:
            with self.trace.span("query", self.store.backend, cypher=verdict.cypher) as sp:
                rows = await asyncio.to_thread(
                    self.store.query, verdict.cypher, verdict.params,
                    limit=cfg.row_limit, timeout_s=cfg.timeout_s,
                )  # fmt: skip
                sp.update(rows=len(rows.rows), truncated=rows.truncated)
        except GraphQueryError as exc:
            log.info("graph query failed: %s | %s", exc, verdict.cypher)
            res.error = f"execution failed: {exc}"
            res.failure = "the query could not be run: " + engine_error_words(str(exc))
            return
        rows = await asyncio.to_thread(self._with_ties, verdict.cypher, verdict.params, rows)
        rows = distinct_rows(rows)
        yield Ran(verdict.cypher, verdict.params, rows, source, res.attempts, verdict.shown)

    def _with_ties(self, cypher: str, params: Mapping[str, Any], rows: GraphRows) -> GraphRows:
        """`rows` plus the rows tied with the last one on the ORDER BY key, when a `LIMIT k`
        cut a tie ("the oldest" answered by one of two people born the same year): the
        guarded query is run again with only its LIMIT literal raised."""
        m = _ORDER_LIMIT.search(cypher)
        if m is None or "UNION" in cypher.upper() or len(rows.rows) < int(m["k"]):
            return rows
        k, key = int(m["k"]), m["key"].strip()
        alias = re.search(rf"{re.escape(key)}\s+AS\s+`?(\w+)", cypher[: m.start()], re.I)
        name = alias.group(1) if alias else key
        if name not in rows.columns or k + 1 > self.cfg.row_limit:
            return rows
        col, more = rows.columns.index(name), min(k + _TIE_ROWS, self.cfg.row_limit)
        wider = cypher[: m.start("k")] + str(more) + cypher[m.end("k") :]
        try:
            got = self.store.query(wider, params, limit=more, timeout_s=self.cfg.timeout_s)
        except GraphQueryError:
            return rows
        if len(got.rows) <= k:
            return rows
        last, tied = got.rows[k - 1][col], []
        for r in got.rows[k:]:  # ordered: the ties follow the last row kept
            if r[col] != last:
                break
            tied.append(r)
        if not tied:
            return rows
        note = f"{len(tied)} row(s) tied with row {k} on {name} kept past LIMIT {k}"
        return GraphRows(
            rows.columns, (*got.rows[:k], *tied), False, rows.seconds, (*rows.notes, note)
        )
