"""Question→Cypher pairs from the graph's own facts (`footnote graph synth`, the default mode).

Template Cypher is written over real nodes and edges sampled from the graph (a property of
a named node, its neighbours over a relationship, the reverse, a count, a top-3 ranking); a
query is kept only when it passes the guard (parse, schema, EXPLAIN) and returns rows with
a value; then the `compose` role writes the question it answers, the question must name
the query's literals (code), and a checker of another model (`eval.graph_review`: the `judge`
role unless it is the writer's model) shown only the question and the rows must agree they
answer it. Kept pairs are written as chat fine-tuning JSONL and, with `library`, appended to
the graph's `examples.jsonl` for few-shot retrieval; with `review`, a seeded sample of the
checked pairs goes to a file for a human spot-check (`eval.graph_review`).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from footnote.errors import ModelError
from footnote.eval.graph_review import Candidate, export_review, independent, literals_missing
from footnote.eval.graph_synth import SYSTEM, _has_value, _rows_text, ask_checker
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.models.structured import structured
from footnote.prompts import render
from footnote.store.graph.base import GraphQueryError, GraphSpec, GraphStore
from footnote.verify.cypher.guard import GraphGuard, Principal

ADMIN = Principal("synth", unrestricted=True)
SHAPES = ("property", "neighbours", "reverse", "count", "top")


class _Question(BaseModel):
    question: str


@dataclass(frozen=True)
class Fact:
    """A template query over real graph values."""

    shape: str
    cypher: str


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _lit(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _sample(store: GraphStore, cypher: str, rng: random.Random) -> tuple[Any, ...] | None:
    try:
        rows = store.query(cypher, {}, limit=300, timeout_s=10).rows
    except GraphQueryError:
        return None
    rows = tuple(r for r in rows if all(_has_value(x) for x in r))
    return rng.choice(rows) if rows else None


def fact_query(store: GraphStore, shape: str, rng: random.Random) -> Fact | None:
    """One template query of `shape` over values sampled from the graph (None: none fits)."""
    spec: GraphSpec = store.spec
    named = {lab: n for lab, n in spec.nodes.items() if n.name}
    if shape in ("property", "top"):
        label = rng.choice(sorted(named)) if named else None
        if label is None:
            return None
        node = named[label]
        props = [p for p, t in node.properties.items() if p not in (node.key, node.name)
                 and (t in ("INT64", "DOUBLE") or shape == "property") and not t.endswith("[]")]  # fmt: skip
        if not props:
            return None
        prop = rng.choice(props)
        n, p = _q(node.name), _q(prop)
        if shape == "top":
            return Fact(shape, f"MATCH (n:{_q(label)}) WHERE n.{p} IS NOT NULL RETURN n.{n} AS "
                        f"name, n.{p} AS {prop} ORDER BY {prop} DESC LIMIT 3")  # fmt: skip
        row = _sample(store, f"MATCH (n:{_q(label)}) WHERE n.{p} IS NOT NULL RETURN n.{n}", rng)
        if row is None:
            return None
        return Fact(
            shape, f"MATCH (n:{_q(label)}) WHERE n.{n} = {_lit(row[0])} RETURN n.{p} AS {prop}"
        )
    rels = [
        (t, r) for t, r in spec.relationships.items() if r.source in named and r.target in named
    ]
    if not rels:
        return None
    typ, rel = rng.choice(rels)
    a, b = named[rel.source], named[rel.target]
    pattern = f"(a:{_q(rel.source)})-[:{_q(typ)}]->(b:{_q(rel.target)})"
    row = _sample(store, f"MATCH {pattern} RETURN a.{_q(a.name)}, b.{_q(b.name)}", rng)
    if row is None:
        return None
    if shape == "neighbours":
        return Fact(shape, f"MATCH {pattern} WHERE a.{_q(a.name)} = {_lit(row[0])} RETURN "
                    f"b.{_q(b.name)} AS {b.name}")  # fmt: skip
    if shape == "reverse":
        return Fact(shape, f"MATCH {pattern} WHERE b.{_q(b.name)} = {_lit(row[1])} RETURN "
                    f"a.{_q(a.name)} AS {a.name}")  # fmt: skip
    return Fact(shape, f"MATCH {pattern} WHERE a.{_q(a.name)} = {_lit(row[0])} RETURN "
                "count(b) AS n")  # fmt: skip


def synthesise_from_facts(
    store: GraphStore,
    writer: RoleModel,
    checker: RoleModel | None,
    n: int,
    out: Path,
    *,
    lang: str = "English",
    seed: int = 0,
    library: Path | None = None,
    progress: Callable[[str], None] | None = None,
    review: Path | None = None,
    review_size: int = 20,
    review_seed: int | None = None,
) -> dict[str, Any]:
    """Up to `n` checked pairs from the graph's facts; counts, rejections, who checked
    (`check`: no model when `checker` is None or the writer's own model), the review sample
    and the time."""
    t0 = time.perf_counter()
    check = independent(writer, checker)
    candidates: list[Candidate] = []
    rng = random.Random(seed)
    guard = GraphGuard(store)
    labels = tuple(store.spec.labels)
    kept: list[tuple[str, str]] = []
    seen: set[str] = set()
    rejected = {"no_fact": 0, "duplicate": 0, "guard": 0, "no_rows": 0, "model_error": 0,
                "literal_missing": 0, "disagreed": 0}  # fmt: skip
    generated = calls = 0
    tries = 0
    while len(kept) < n and tries < 6 * n:
        tries += 1
        fact = fact_query(store, SHAPES[tries % len(SHAPES)], rng)
        if fact is None:
            rejected["no_fact"] += 1
            continue
        if fact.cypher in seen:
            rejected["duplicate"] += 1
            continue
        seen.add(fact.cypher)
        generated += 1
        v = guard.check(fact.cypher, {}, ADMIN)
        if not v.ok:
            rejected["guard"] += 1
            continue
        try:
            rows = store.query(v.cypher, v.params, limit=5, timeout_s=5)
        except GraphQueryError:
            rejected["guard"] += 1
            continue
        if not any(_has_value(x) for r in rows.rows for x in r):
            rejected["no_rows"] += 1
            continue
        shown = _rows_text(rows)
        try:
            calls += 1
            q = structured(writer, [Message("user", render("graph_synth_question", lang=lang,
                           cypher=fact.cypher, rows=shown))], _Question, max_tokens=120,
                           labels=labels)  # fmt: skip
        except ModelError:
            rejected["model_error"] += 1
            continue
        question = " ".join(q.question.split())
        if not question or literals_missing(question, fact.cypher):
            rejected["literal_missing"] += 1
            continue
        verdict: bool | None = True
        if check.model is not None:
            calls += 1
            verdict = ask_checker(check.model, question, shown, labels)
            if verdict is None:
                rejected["model_error"] += 1
                continue
        candidates.append(Candidate(question, fact.cypher, shown,
                                    "keep" if verdict else "reject", check.by))  # fmt: skip
        if not verdict:
            rejected["disagreed"] += 1
            continue
        kept.append((question, fact.cypher))
        if progress is not None:
            progress(f"kept {len(kept)}/{n} ({fact.shape}): {kept[-1][0][:70]}")
    system = SYSTEM.format(schema=store.spec.describe())
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for question, cypher in kept:
            msgs = [{"role": "system", "content": system}, {"role": "user", "content": question},
                    {"role": "assistant", "content": cypher}]  # fmt: skip
            f.write(json.dumps({"messages": msgs}, ensure_ascii=False) + "\n")
    if library is not None and kept:
        with library.open("a", encoding="utf-8") as f:
            for question, cypher in kept:
                f.write(
                    json.dumps({"question": question, "cypher": cypher}, ensure_ascii=False) + "\n"
                )
    sample = export_review(candidates, review, review_size, review_seed) if review else None
    return {"mode": "facts", "generated": generated, "kept": len(kept), "rejected": rejected,
            "check": check.note, "checked_by": check.by, "review": sample,
            "model_calls": calls, "seconds": round(time.perf_counter() - t0, 1),
            "out": str(out), "library": str(library) if library else None}  # fmt: skip
