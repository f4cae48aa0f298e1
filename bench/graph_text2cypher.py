"""Execution accuracy of graph QA on neo4j-text2cypher (movies, northwind) and the Chinese
`common` rows of tugraph-text2cypher-zh (movie graph), on the embedded LadybugDB demo graphs.

A case counts when the result rows of our query equal the gold query's rows, both run
locally (multisets of rows, column order ignored; order kept when the gold has ORDER BY).
Only error-free rows whose gold query also runs here and returns rows are sampled.
Routes: `template` (rules picked a whitelisted intent) vs `generated` (the `cypher` role).

    OMP_WAIT_POLICY=PASSIVE nohup .venv/bin/python bench/graph_text2cypher.py --n 50 &
    .venv/bin/python bench/graph_text2cypher.py --gold-only     # dialect coverage, no model
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from footnote.config import GraphSettings, load_settings
from footnote.index.cypher_guard import GraphGuard, Principal
from footnote.models import build_roles
from footnote.pipelines.graph_io import (
    GraphCatalog,
    demo_data_dir,
    demo_rows,
    demo_spec,
    entity_index,
)
from footnote.pipelines.graph_qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph_base import GraphQueryError

OUT = Path(__file__).parent / "out"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ADMIN = Principal("bench", unrestricted=True)


def cases(db: str) -> list[dict[str, str]]:
    if db == "common":
        rows = json.loads((DATA / "tugraph-text2cypher-zh" / "train_common_data.json").read_text())
        return [
            {"question": r["input"], "cypher": r["output"], "db": "movies", "set": "tugraph-zh"}
            for r in rows
        ]
    csv.field_size_limit(1 << 30)
    path = DATA / "neo4j-text2cypher" / "synthetic_gpt4turbo_demodbs" / "text2cypher_gpt4turbo.csv"
    with path.open(encoding="utf-8") as f:
        rows = [
            r for r in csv.DictReader(f)
            if r["database"] == db and r["syntax_error"] == "False" and r["timeout"] == "False"
            and r["returns_results"] == "True" and not r["false_schema"]
        ]  # fmt: skip
    return [
        {"question": r["question"], "cypher": r["cypher"], "db": db, "set": "neo4j"} for r in rows
    ]


def norm_rows(rows: Any, ordered: bool) -> Any:
    def v(x: Any) -> str:
        if isinstance(x, float):
            return repr(round(x, 4)) if not x.is_integer() else repr(int(x))
        return json.dumps(x, sort_keys=True, ensure_ascii=False)

    out = [tuple(sorted(v(x) for x in r)) for r in rows]
    return out if ordered else Counter(out)


def run_gold(guard: GraphGuard, store: Any, cypher: str) -> Any:
    v = guard.check(cypher, {}, ADMIN)
    if not v.ok:
        return None
    try:
        return store.query(v.cypher, v.params, limit=1000, timeout_s=10).rows
    except GraphQueryError:
        return None


async def drain(pipe: GraphQAPipeline, question: str) -> None:
    async for _ in pipe.run(GraphRequest(question, ADMIN)):
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50, help="cases per data set")
    ap.add_argument("--sets", default="movies,northwind,common")
    ap.add_argument("--gold-only", action="store_true")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    ws = OUT / "graph_ws"
    cfg = GraphSettings(dir=str(ws), understand="rules", answer="template", retries=1)
    cat = GraphCatalog(cfg, ws)
    for name in ("movies", "northwind"):
        if name not in cat.names():
            cat.create(demo_spec(name), *demo_rows(name, demo_data_dir(cfg)))
    settings = load_settings(OUT / "graph_ws_settings")
    roles = build_roles(settings.models)
    cypher_model = None if args.gold_only else roles.chat("cypher")
    log = (OUT / "graph_text2cypher.jsonl").open("a", encoding="utf-8")
    summary: dict[str, Any] = {}
    for db in args.sets.split(","):
        all_cases = cases(db)
        store = cat.open("movies" if db == "common" else db)
        guard = GraphGuard(store)
        usable = []
        for c in all_cases:
            gold = run_gold(guard, store, c["cypher"])
            if gold:
                usable.append((c, gold))
        stats: dict[str, Any] = {"rows": len(all_cases), "gold_runs_here": len(usable)}
        print(
            f"{db}: {len(all_cases)} error-free rows, gold runs here with rows: {len(usable)}",
            flush=True,
        )
        if args.gold_only:
            summary[db] = stats
            store.close()
            continue
        random.Random(args.seed).shuffle(usable)
        index = entity_index(store, roles.embedder(), cfg, ws / db / "cache")
        pipe = GraphQAPipeline(GraphDeps(store, index, cfg, cypher_model=cypher_model))
        by_route: dict[str, list[bool]] = {}
        statuses: Counter[str] = Counter()
        seconds: list[float] = []
        for i, (c, gold) in enumerate(usable[: args.n]):
            t0 = time.perf_counter()

            asyncio.run(drain(pipe, c["question"]))
            o = pipe.outcome
            seconds.append(time.perf_counter() - t0)
            ordered = "ORDER BY" in c["cypher"].upper()
            got = [tuple(r.values()) for r in o.rows]
            ok = o.status in ("answered", "no_rows") and norm_rows(got, ordered) == norm_rows(
                gold, ordered
            )
            route = o.source or "none"
            by_route.setdefault(route, []).append(ok)
            statuses[o.status] += 1
            log.write(json.dumps({"db": db, "q": c["question"], "gold": c["cypher"], "ours": o.cypher,
                                  "route": route, "status": o.status, "ok": ok,
                                  "s": round(seconds[-1], 1), "reason": o.reason}, ensure_ascii=False) + "\n")  # fmt: skip
            log.flush()
            print(
                f"  [{i + 1}] {route:9} {o.status:8} ok={ok} {seconds[-1]:.1f}s  {c['question'][:70]}",
                flush=True,
            )
        done = sum(len(v) for v in by_route.values())
        stats.update(
            sampled=done,
            execution_accuracy=round(sum(sum(v) for v in by_route.values()) / max(1, done), 3),
            by_route={
                k: {"n": len(v), "acc": round(sum(v) / len(v), 3)} for k, v in by_route.items()
            },
            statuses=dict(statuses),
            mean_s=round(sum(seconds) / max(1, len(seconds)), 1),
        )
        summary[db] = stats
        print(json.dumps(stats), flush=True)
        store.close()
    (OUT / "graph_text2cypher.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    sys.exit(main())
