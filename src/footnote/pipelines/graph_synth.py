"""Training pairs for a text-to-Cypher LoRA: a model proposes question→Cypher pairs; only
those that pass the guard, compile (EXPLAIN) and return rows are kept, written as chat
fine-tuning JSONL (system: schema; user: question; assistant: Cypher).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from footnote.errors import ModelError
from footnote.index.cypher_guard import GraphGuard, Principal
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.models.structured import structured
from footnote.pipelines.graph_cypher import examples_text
from footnote.prompts import render
from footnote.store.graph_base import GraphQueryError, GraphStore

SYSTEM = "Translate the question into one read-only Cypher query over this graph.\n\n{schema}"


class _Pair(BaseModel):
    question: str
    cypher: str


class _Pairs(BaseModel):
    pairs: list[_Pair]


def synthesise(
    store: GraphStore, model: RoleModel, n: int, out: Path, *, batch: int = 5, seed: int = 0
) -> dict[str, Any]:
    """Generate, filter and write up to `n` pairs; returns counts and rejection reasons."""
    guard = GraphGuard(store)
    spec = store.spec
    names = [e[2] for e in store.entities()]
    rng = random.Random(seed)
    kept: list[_Pair] = []
    seen: set[str] = set()
    generated, rejected = 0, {"guard": 0, "no_rows": 0, "error": 0, "duplicate": 0}
    calls = 0
    while len(kept) < n and calls < max(3, 2 * n // batch + 2):
        calls += 1
        values = ", ".join(repr(v) for v in rng.sample(names, min(8, len(names))))
        prompt = render("graph_synth", schema=spec.describe(), examples=examples_text(spec),
                        n=str(batch), values=values)  # fmt: skip
        try:
            got = structured(model, [Message("user", prompt)], _Pairs, max_tokens=1200,
                             temperature=0.7, use_cache=False)  # fmt: skip
        except ModelError:
            rejected["error"] += 1
            continue
        for pair in got.pairs:
            generated += 1
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
            if not rows.rows:
                rejected["no_rows"] += 1
                continue
            kept.append(pair)
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
            "model_calls": calls, "out": str(out)}  # fmt: skip
