"""Training pairs for a text-to-Cypher LoRA: a model proposes question→Cypher pairs; only
those that pass the guard, compile (EXPLAIN) and return rows are kept, written as chat
fine-tuning JSONL (system: schema; user: question; assistant: Cypher).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from footnote.errors import ModelError
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.models.structured import structured
from footnote.pipelines.graph.cypher import examples_text, extract_cypher
from footnote.prompts import render
from footnote.store.graph.base import GraphQueryError, GraphStore
from footnote.verify.cypher.guard import GraphGuard, Principal

SYSTEM = "Translate the question into one read-only Cypher query over this graph.\n\n{schema}"


class _Pair(BaseModel):
    question: str
    cypher: str


class _Pairs(BaseModel):
    pairs: list[_Pair]


def synthesise(
    store: GraphStore,
    model: RoleModel,
    n: int,
    out: Path,
    *,
    batch: int = 5,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    max_per_shape: int = 3,
) -> dict[str, Any]:
    """Generate, filter and write up to `n` pairs; returns counts and rejection reasons.

    A pair is kept when its question is new, its Cypher (fences and `;` removed) passes the
    guard (read-only, schema, EXPLAIN) and, run, returns at least one row with a value (a
    count of 0 or a row of nulls says the query matched nothing). At most `max_per_shape`
    pairs share one query shape (the guard's form, literals lifted into parameters), so a
    model that keeps copying one example cannot fill the set with it.
    """
    t0 = time.perf_counter()
    guard = GraphGuard(store)
    spec = store.spec
    names = [e[2] for e in store.entities()]
    rng = random.Random(seed)
    kept: list[_Pair] = []
    seen: set[str] = set()
    shapes: dict[str, int] = {}
    generated = 0
    rejected = {"duplicate": 0, "guard": 0, "no_rows": 0, "error": 0, "model_error": 0}
    rejected["same_shape"] = 0
    calls = 0
    while len(kept) < n and calls < max(3, 3 * n // batch + 2):  # ~1 in 3 pairs survives
        calls += 1
        values = ", ".join(repr(v) for v in rng.sample(names, min(8, len(names))))
        prompt = render("graph_synth", schema=spec.describe(), examples=examples_text(spec),
                        n=str(batch), values=values)  # fmt: skip
        try:
            got = structured(model, [Message("user", prompt)], _Pairs, max_tokens=1200,
                             temperature=0.7, use_cache=False, labels=())  # fmt: skip
        except ModelError:
            rejected["model_error"] += 1
            continue
        before = len(kept)
        for pair in got.pairs:
            if len(kept) >= n:
                break
            generated += 1
            pair = _Pair(
                question=" ".join(pair.question.split()), cypher=extract_cypher(pair.cypher)
            )
            key = pair.question.strip().lower()
            if key in seen:
                rejected["duplicate"] += 1
                continue
            seen.add(key)
            v = guard.check(pair.cypher, {}, Principal(unrestricted=True))
            if not v.ok:
                rejected["guard"] += 1
                continue
            try:
                rows = store.query(v.cypher, v.params, limit=5, timeout_s=5)
            except GraphQueryError:
                rejected["error"] += 1
                continue
            if not any(_has_value(x) for r in rows.rows for x in r):
                rejected["no_rows"] += 1
                continue
            if shapes.get(v.cypher, 0) >= max_per_shape:
                rejected["same_shape"] += 1
                continue
            shapes[v.cypher] = shapes.get(v.cypher, 0) + 1
            kept.append(pair)
        if progress is not None:
            took = round(time.perf_counter() - t0)
            progress(
                f"call {calls}: kept {len(kept) - before} of {len(got.pairs)} ({len(kept)}/{n}, {took}s)"
            )
    system = SYSTEM.format(schema=spec.describe())
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for pair in kept[:n]:
            msgs = [
                {"role": "system", "content": system},
                {"role": "user", "content": pair.question},
                {"role": "assistant", "content": pair.cypher},
            ]
            f.write(json.dumps({"messages": msgs}, ensure_ascii=False) + "\n")
    return {"generated": generated, "kept": min(len(kept), n), "rejected": rejected,
            "model_calls": calls, "seconds": round(time.perf_counter() - t0, 1),
            "out": str(out)}  # fmt: skip


def _has_value(x: Any) -> bool:
    """False for what an empty match leaves behind: null, 0, "", [] or {}."""
    return x not in (None, 0, "", [], {}) and x is not False
