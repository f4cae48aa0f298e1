"""The ladder that turns a question into rows, each step switched in `[graph]`:

1. a whitelisted template when its slots capture the whole question (no model);
2. the prompt: the schema, pruned to what the question touches (`prune_schema`), and
   examples retrieved from the graph's library of checked pairs (`few_shot`);
3. `candidates` queries from the `cypher` role (the first greedy, the rest sampled at
   `temperature`), each through parse + schema + permissions + EXPLAIN (the guard) and run;
4. a candidate that fails is retried `retries` times, with the rejected query and the error
   (`retry_with_error`) or blind;
5. the result is chosen by agreement of the candidates' result sets (`choose`), and when
   the candidates disagree or the chosen result is empty, `unsure` asks back with the
   readings (`clarify`) or refuses, instead of presenting an empty answer;
6. the `cypher_fallback` role when no candidate ran.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import re
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from footnote.config import GraphSettings
from footnote.errors import ModelError
from footnote.events import CypherEvent, Event, Guard, Status
from footnote.index.graph.align import Candidate
from footnote.models.base import Embedder, Message
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.context import (
    ExampleRetriever,
    examples_block,
    prune_spec,
    similar_labels,
)
from footnote.pipelines.graph.cypher import cypher_messages, extract_cypher, param_names
from footnote.pipelines.trace import Trace
from footnote.store.graph.base import GraphQueryError, GraphRows, GraphSpec, GraphStore, Intent
from footnote.verify.cypher.guard import GraphGuard, Principal

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


def result_key(rows: GraphRows) -> str:
    """A result set as a comparable key: the multiset of rows, column names and order ignored."""
    cells = sorted(json.dumps(sorted(map(_cell, r)), ensure_ascii=False) for r in rows.rows)
    return "\n".join(cells)


def _cell(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    elif isinstance(x, float):
        x = round(x, 6)
    return json.dumps(x, sort_keys=True, ensure_ascii=False, default=str)


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
    ) -> None:
        self.store, self.guard, self.cfg, self.trace = store, guard, settings, trace
        self.complete = complete
        self.cypher_model, self.fallback_model = cypher_model, fallback_model
        self.retriever = retriever
        self.embedder = embedder
        self.result = LadderResult()
        self._last = ""

    async def run(
        self,
        question: str,
        intent: Intent | None,
        entities: Mapping[str, Candidate],
        principal: Principal,
    ) -> AsyncIterator[Event]:
        """Template first (when given and its slots are filled), then generated candidates."""
        res = self.result
        if intent is not None:
            by_label: dict[str, str] = {}
            for c in entities.values():
                by_label.setdefault(c.entity.label, c.entity.key)
            if all(lab in by_label for lab in intent.params.values()):
                params = {p: by_label[lab] for p, lab in intent.params.items()}
                res.attempts += 1
                ran = None
                async for ev in self._try(intent.cypher, params, "template", principal):
                    if isinstance(ev, Ran):
                        ran = ev
                    else:
                        yield ev
                if ran is not None:
                    res.chosen, res.agreement = ran, 1.0
                    return
        if self.cypher_model is None and self.fallback_model is None:
            res.error = (
                res.error or "no template matches this question and no `cypher` model is bound"
            )
            return
        async for ev in self._generate(question, entities, principal):
            yield ev

    async def _generate(
        self, question: str, entities: Mapping[str, Candidate], principal: Principal
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
        base = cypher_messages(shown, question, gen, examples=examples)
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
                if got is not None:
                    ran.append(got)
                    break
                source = "retry"
                if cfg.retry_with_error:
                    msgs = cypher_messages(
                        shown, question, gen, cypher, res.error, examples=examples
                    )
                else:  # a blind resample of the same prompt
                    msgs, temp = base, max(temp, cfg.temperature)
            if ran and cfg.choose == "first":
                break
        if not ran and self.fallback_model is not None:
            res.attempts += 1
            msgs = base
            if self._last:  # the fallback sees what was rejected last, and why
                msgs = cypher_messages(
                    shown, question, gen, self._last, res.error, examples=examples
                )
            text = await self._ask(self.fallback_model, msgs, 0.0, cache=True)
            if text is not None:
                async for ev in self._try(extract_cypher(text), values, "fallback", principal):
                    if isinstance(ev, Ran):
                        ran.append(ev)
                    else:
                        yield ev
        if not ran:
            res.error = f"no safe query could be made after {res.attempts} attempts: {res.error}"
            return
        yield self._choose(ran)

    def _choose(self, ran: list[Ran]) -> Status:
        """Pick by agreement of result sets; mark disagreement or an empty result as unsure."""
        res, cfg = self.result, self.cfg
        groups: dict[str, list[Ran]] = {}
        for r in ran:
            groups.setdefault(result_key(r.rows), []).append(r)
        best = max(groups.values(), key=len)  # ties: the earliest group (dicts keep order)
        res.chosen, res.agreement = best[0], len(best) / len(ran)
        disagree = len(ran) > 1 and len(best) == 1
        empty = not best[0].rows.rows
        if cfg.unsure != "answer" and (disagree or empty):
            res.unsure = cfg.unsure
            if disagree:
                readings = [g[0] for g in groups.values()]
                res.options = [f"{r.cypher}  →  {_first_row(r.rows)}" for r in readings[:4]]
                res.reason = (
                    f"the question can be read in {len(groups)} ways that give different "
                    "results; which one do you mean?"
                )
            else:
                res.reason = (
                    "the query ran but matched nothing: the graph may not hold what the "
                    "question asks about, or it names it differently"
                )
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
            self.result.error = f"model failed: {exc}"
            return None

    async def _try(
        self, cypher: str, params: Mapping[str, Any], source: str, principal: Principal
    ) -> AsyncIterator[Event | Ran]:
        """Guard, then run one candidate: events, then a `Ran` when it ran."""
        res, cfg = self.result, self.cfg
        self._last = cypher
        yield CypherEvent(cypher, dict(params), source=source, attempt=res.attempts)
        with self.trace.span("guard", source, cypher=cypher, attempt=res.attempts) as span:
            verdict = await asyncio.to_thread(self.guard.check, cypher, params, principal)
            span.update(ok=verdict.ok, reasons=list(verdict.reasons))
        yield Guard(verdict.ok, reasons=list(verdict.reasons), cypher=verdict.cypher,
                    injected=list(verdict.injected))  # fmt: skip
        if not verdict.ok:
            res.error = verdict.reason
            return
        try:
            with self.trace.span("query", self.store.backend, cypher=verdict.cypher) as sp:
                rows = await asyncio.to_thread(
                    self.store.query, verdict.cypher, verdict.params,
                    limit=cfg.row_limit, timeout_s=cfg.timeout_s,
                )  # fmt: skip
                sp.update(rows=len(rows.rows), truncated=rows.truncated)
        except GraphQueryError as exc:
            res.error = f"execution failed: {exc}"
            return
        yield Ran(verdict.cypher, verdict.params, rows, source, res.attempts)


_GAPS = (
    (re.compile(r"unknown property (\w+)\.(\w+)"), "property"),
    (re.compile(r"unknown property (\w+) on (\w+)"), "property_on"),
    (re.compile(r"unknown label (\w+)"), "label"),
    (re.compile(r"unknown relationship type (\w+)"), "relationship"),
)


def schema_gap(error: str, spec: GraphSpec) -> tuple[str, list[str]] | None:
    """When the last rejection named a schema element the graph lacks: the sentence "the
    graph does not hold X" and the nearest elements it does hold; else None (also when the
    property exists on another label: the query was wrong, the graph is not)."""
    props = sorted({p for n in spec.nodes.values() for p in n.properties}
                   | {p for r in spec.relationships.values() for p in r.properties})  # fmt: skip
    found = [(m, kind) for pattern, kind in _GAPS if (m := pattern.search(error))]
    for m, kind in sorted(found, key=lambda f: f[0].start())[:1]:  # the first reason given
        if kind in ("property", "property_on") and m.group(2 if kind == "property" else 1) in props:
            return None  # the graph holds it, on another label: a wrong query, not a gap
        if kind == "property":
            what, pool = m.group(2), props
        elif kind == "property_on":
            label = m.group(2)
            what = m.group(1)
            pool = sorted(spec.nodes[label].properties) if label in spec.nodes else props
        elif kind == "label":
            what, pool = m.group(1), sorted(spec.nodes)
        else:
            what, pool = m.group(1), sorted(spec.relationships)
        near = difflib.get_close_matches(what, pool, n=3, cutoff=0.5) or pool[:3]
        noun = {"label": "nodes labelled", "relationship": "relationships of type"}.get(
            kind, "the property"
        )
        return f"the graph does not hold {noun} {what!r}; nearest it holds: {', '.join(near)}", near
    return None


def _first_row(rows: GraphRows) -> str:
    if not rows.rows:
        return "no rows"
    first = ", ".join(f"{c}: {v}" for c, v in zip(rows.columns, rows.rows[0], strict=False))
    more = f" (+{len(rows.rows) - 1} more)" if len(rows.rows) > 1 else ""
    return first[:120] + more
