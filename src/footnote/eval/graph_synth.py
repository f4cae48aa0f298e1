"""Training pairs for a text-to-Cypher LoRA: a model proposes question→Cypher pairs; only
those that pass the guard, compile (EXPLAIN), return rows, name the query's literals and (with
a checker of another model, `eval.graph_review`) whose rows the checker agrees answer the
question are kept, written as chat fine-tuning JSONL (system: schema; user: question;
assistant: Cypher).
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
from footnote.eval.graph_review import Candidate, export_review, independent, literals_missing
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.models.structured import structured
from footnote.pipelines.graph.cypher import examples_text, extract_cypher
from footnote.prompts import render
from footnote.store.graph.base import GraphQueryError, GraphRows, GraphStore
from footnote.verify.cypher.guard import GraphGuard, Principal

SYSTEM = "Translate the question into one read-only Cypher query over this graph.\n\n{schema}"


class _Pair(BaseModel):
    question: str
    cypher: str


class _Pairs(BaseModel):
    pairs: list[_Pair]


class _Check(BaseModel):
    matches: bool


def _rows_text(rows: GraphRows) -> str:
    return "\n".join(
        "; ".join(f"{c}: {v}" for c, v in zip(rows.columns, r, strict=False)) for r in rows.rows[:5]
    )


def ask_checker(
    checker: RoleModel, question: str, rows: str, labels: tuple[str, ...]
) -> bool | None:
    """Whether `checker`, shown only the question and the rows (not the query, not the
    writer's words), agrees the rows answer it; None when its reply stays invalid."""
    prompt = render("graph_synth_check", question=question, rows=rows)
    try:
        got = structured(checker, [Message("user", prompt)], _Check, max_tokens=20, labels=labels)
    except ModelError:
        return None
    return got.matches


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
    checker: RoleModel | None = None,
    review: Path | None = None,
    review_size: int = 20,
    review_seed: int | None = None,
) -> dict[str, Any]:
    """Generate, filter and write up to `n` pairs; returns counts and rejection reasons.

    A pair is kept when its question is new, its Cypher (fences and `;` removed) passes the
    guard (read-only, schema, EXPLAIN) and, run, returns at least one row with a value (a
    count of 0 or a row of nulls says the query matched nothing), the question names the
    query's string literals, and `checker` (unless None or the writer's own model: then
    `check` says the pairs were checked by execution and code only) agrees the rows answer
    the question. At most `max_per_shape` pairs share one query shape (the guard's form,
    literals lifted into parameters), so a model that keeps copying one example cannot fill
    the set with it. `review`: a seeded sample of the checked pairs for a human spot-check.
    """
    t0 = time.perf_counter()
    check = independent(model, checker)
    candidates: list[Candidate] = []
    labels = tuple(store.spec.labels)
    guard = GraphGuard(store)
    spec = store.spec
    names = [e[2] for e in store.entities()]
    rng = random.Random(seed)
    kept: list[_Pair] = []
    seen: set[str] = set()
    shapes: dict[str, int] = {}
    generated = 0
    rejected = {"duplicate": 0, "guard": 0, "no_rows": 0, "error": 0, "model_error": 0}
    rejected |= {"same_shape": 0, "literal_missing": 0, "disagreed": 0}
    calls = check_calls = 0
    while len(kept) < n and calls < max(3, 3 * n // batch + 2):  # ~1 in 3 pairs survives
        calls += 1
        values = ", ".join(repr(v) for v in rng.sample(names, min(8, len(names))))
        prompt = render("graph_synth", schema=spec.describe(), examples=examples_text(spec),
                        n=str(batch), values=values)  # fmt: skip
        try:
            got = structured(model, [Message("user", prompt)], _Pairs, max_tokens=1200,
                             temperature=0.7, use_cache=False, labels=labels)  # fmt: skip
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
            if not pair.question or literals_missing(pair.question, pair.cypher):
                rejected["literal_missing"] += 1
                continue
            verdict: bool | None = True
            if check.model is not None:
                check_calls += 1
                verdict = ask_checker(check.model, pair.question, _rows_text(rows), labels)
                if verdict is None:
                    rejected["model_error"] += 1
                    continue
            candidates.append(Candidate(pair.question, pair.cypher, _rows_text(rows),
                                        "keep" if verdict else "reject", check.by))  # fmt: skip
            if not verdict:
                rejected["disagreed"] += 1
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
    sample = export_review(candidates, review, review_size, review_seed) if review else None
    return {"generated": generated, "kept": min(len(kept), n), "rejected": rejected,
            "check": check.note, "checked_by": check.by, "review": sample,
            "model_calls": calls + check_calls, "seconds": round(time.perf_counter() - t0, 1),
            "out": str(out)}  # fmt: skip


def _has_value(x: Any) -> bool:
    """False for what an empty match leaves behind: null, 0, "", [] or {}."""
    return x not in (None, 0, "", [], {}) and x is not False
