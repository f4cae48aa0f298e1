"""Fit `graph.clarify_threshold` (graph QA asks back when its clarification signals reach it)
on the labelled dev set `src/footnote/eval/datasets/graph/clarify_dev.jsonl`.

The set: questions over the bundled `movies` and `northwind` demo graphs (a quarter and more
Chinese), each labelled `ambiguous` (an entity tie, a property the graph lacks, a question off
the schema or vague, several readings) or `clear`, with the reason. Each question is asked once
with the threshold at 1.0 (so nothing below the top score stops the run) and the decision's
score recorded (`GraphOutcome.clarify`); the curve then says, for each threshold, which
questions would be asked back:

- precision: asked-back questions that are ambiguous; recall: ambiguous questions asked back;
- false clarification: clear questions asked back (the bound, `--bound`, 0.10).

Rule: on the `fit` split, the threshold asking back the most ambiguous questions while the
false-clarification rate stays within the bound, ties to the highest such threshold; then
reported on the `test` split (written after the signals were frozen, never fitted on). Every
rate with its n and 95 % Wilson interval (`footnote.eval.metrics.wilson`), and recall per
reason and per language.

`--signals code`: only the signals that need no model (entity ties, a property the schema
lacks, the schema match): rules understanding, no `cypher` model, no embedder — nothing but
the graph engine runs. `--signals full`: the workspace's models (`understand`, `cypher` with 3
candidates by agreement; the embedded model by default), so the candidates' readings and
disagreement count too. `--write` stores the record in `bench/out/graph_clarify_<signals>.json`
with the fitted threshold, whether the test split holds the bound at it, the lowest threshold
holding it on both splits (what the default of `graph.clarify_threshold` is set to) and the
rates at the default.

    nice -n 19 .venv/bin/python bench/graph_clarify_calibrate.py --signals code
    .venv/bin/python bench/graph_clarify_calibrate.py --signals full
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from footnote.config import GraphSettings, load_settings
from footnote.eval.metrics import wilson
from footnote.index.graph.align import entity_index
from footnote.models import build_roles
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.sources import demo_rows, demo_spec
from footnote.store.graph.base import GraphStore
from footnote.verify.cypher.guard import Principal
from footnote.workspace import graph_catalog

OUT = Path(__file__).parent / "out"
DATA = (Path(__file__).resolve().parents[1]
        / "src/footnote/eval/datasets/graph/clarify_dev.jsonl")  # fmt: skip
GRID = [round(0.05 * i, 2) for i in range(1, 21)]
ADMIN = Principal("bench", unrestricted=True)


def load(path: Path = DATA) -> list[dict[str, Any]]:
    """The labelled questions."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def stores(ws: Path) -> dict[str, GraphStore]:
    """The two demo graphs from the bundled data (imported once under `ws`)."""
    cat = graph_catalog(GraphSettings(dir=str(ws)), ws)
    out = {}
    for name in ("movies", "northwind"):
        if not (ws / name).exists():
            nodes, rels = demo_rows(name)
            cat.create(demo_spec(name), nodes, rels)
        out[name] = cat.open(name)
    return out


def settings(signals: str) -> GraphSettings:
    """Threshold 1.0 (only the top score stops a run), no confidence gate: the score decides."""
    common: dict[str, Any] = {"clarify_threshold": 1.0, "min_confidence": 0.0,
                              "answer": "template", "unsure": "signals"}  # fmt: skip
    if signals == "code":
        return GraphSettings(understand="rules", **common)
    return GraphSettings(understand="auto", candidates=3, choose="agreement", **common)


def read(signals: str, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each case's decision (score, signals) and outcome."""
    graphs = stores(OUT / "graph_clarify_ws")
    models: dict[str, RoleModel | None] = {"understand": None, "cypher": None}
    embedder = None
    if signals == "full":
        roles = build_roles(load_settings(OUT / "graph_ws_settings").models)
        models = {r: roles.chat(r) if roles.is_bound(r) else None for r in models}
        embedder = roles.embedder() if roles.is_bound("embed") else None
    cfg = settings(signals)
    indexes = {g: entity_index(s, embedder, cfg, None) for g, s in graphs.items()}
    out = []
    for case in cases:
        store = graphs[case["graph"]]
        deps = GraphDeps(store=store, index=indexes[case["graph"]], settings=cfg,
                         understand_model=models["understand"],
                         cypher_model=models["cypher"])  # fmt: skip
        pipe = GraphQAPipeline(deps)
        t0 = time.perf_counter()

        async def run(p: GraphQAPipeline = pipe, q: str = case["question"]) -> None:
            async for _ in p.run(GraphRequest(q, ADMIN)):
                pass

        asyncio.run(run())
        o = pipe.outcome
        d = o.clarify or {"score": 0.0, "signals": []}
        out.append({**case, "score": d["score"], "status": o.status,
                    "signals": [(s["kind"], s["strength"]) for s in d["signals"]],
                    "says": o.reason if o.status != "answered" else "",
                    "s": round(time.perf_counter() - t0, 3)})  # fmt: skip
        print(f"  {case['id']} {case['label']:9} {case['reason']:17} score={d['score']:.2f} "
              f"{out[-1]['signals']} {case['question']}", flush=True)  # fmt: skip
    for s in graphs.values():
        s.close()
    return out


def _rate(k: int, n: int) -> dict[str, Any]:
    lo, hi = wilson(k, n)
    return {"value": round(k / n, 4) if n else None, "k": k, "n": n, "ci95": [lo, hi]}


def rates(recs: list[dict[str, Any]], t: float) -> dict[str, Any]:
    """Precision, recall and false clarification at threshold t (asked: score ≥ t > 0)."""
    asked = [r for r in recs if r["score"] > 0 and r["score"] >= t - 1e-9]
    amb = [r for r in recs if r["label"] == "ambiguous"]
    clear = [r for r in recs if r["label"] == "clear"]
    hit = [r for r in asked if r["label"] == "ambiguous"]
    return {
        "threshold": t,
        "precision": _rate(len(hit), len(asked)),
        "recall": _rate(len(hit), len(amb)),
        "false_clarification": _rate(len(asked) - len(hit), len(clear)),
    }


def fit(recs: list[dict[str, Any]], bound: float) -> tuple[float, list[dict[str, Any]]]:
    """The threshold asking back the most ambiguous questions while its false-clarification
    rate stays within `bound`; ties go to the highest such threshold (the most margin for
    clear questions)."""
    curve = [rates(recs, t) for t in GRID]
    ok = [r for r in curve if (r["false_clarification"]["value"] or 0.0) <= bound]
    best = max(ok, key=lambda r: (r["recall"]["k"], r["threshold"])) if ok else curve[-1]
    return float(best["threshold"]), curve


def _within(row: dict[str, Any], bound: float) -> bool:
    return bool((row["false_clarification"]["value"] or 0.0) <= bound)


def breakdown(recs: list[dict[str, Any]], t: float, key: str) -> dict[str, Any]:
    """Recall on the ambiguous questions (and false clarification on the clear) by `key`."""
    out: dict[str, Any] = {}
    for value in sorted({r[key] for r in recs}):
        rs = [r for r in recs if r[key] == value]
        asked = sum(r["score"] > 0 and r["score"] >= t - 1e-9 for r in rs)
        label = "ambiguous" if any(r["label"] == "ambiguous" for r in rs) else "clear"
        out[str(value)] = {"asked": _rate(asked, len(rs)), "label": label}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--signals", choices=("code", "full"), default="code")
    ap.add_argument("--bound", type=float, default=0.10)
    ap.add_argument("--write", action="store_true")
    ap.add_argument(
        "--readings", type=Path, help="fit from a saved bench/out/graph_clarify_*.jsonl"
    )
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    cases = load()
    t0 = time.perf_counter()
    if args.readings:
        recs = [json.loads(line) for line in args.readings.read_text().splitlines() if line]
    else:
        recs = read(args.signals, cases)
        (OUT / f"graph_clarify_{args.signals}.jsonl").write_text(
            "\n".join(json.dumps(r, ensure_ascii=False) for r in recs) + "\n", encoding="utf-8"
        )
    fit_recs = [r for r in recs if r.get("split", "fit") == "fit"]
    test_recs = [r for r in recs if r.get("split") == "test"]
    threshold, curve = fit(fit_recs, args.bound)
    at = rates(fit_recs, threshold)
    clear_langs = [r for r in recs if r["label"] == "clear"]
    record = {
        "signals": args.signals, "clarify_threshold": threshold,
        "false_clarification_bound": args.bound,
        "rule": "on the fit split: the most ambiguous questions asked back with the "
                "false-clarification rate on the clear ones within the bound; ties to the "
                "highest threshold",
        "dataset": f"{DATA.name}: {len(recs)} questions "
                   f"({dict(Counter((r.get('split', 'fit'), r['label']) for r in recs))}, "
                   f"{dict(Counter(r['lang'] for r in recs))})".replace("'", ""),
        "fit": at,
        "test": rates(test_recs, threshold),
        "test_within_bound": _within(rates(test_recs, threshold), args.bound),
        "lowest_within_bound_on_both_splits": next(
            (t for t in GRID if _within(rates(fit_recs, t), args.bound)
             and _within(rates(test_recs, t), args.bound)), None),
        "all": rates(recs, threshold),
        "at_the_default": {
            "clarify_threshold": GraphSettings().clarify_threshold,
            **{k: rates(rs, GraphSettings().clarify_threshold)
               for k, rs in (("fit", fit_recs), ("test", test_recs), ("all", recs))},
        },
        "recall_by_reason": breakdown([r for r in recs if r["label"] == "ambiguous"],
                                      threshold, "reason"),
        "by_language": {lang: rates([r for r in recs if r["lang"] == lang], threshold)
                        for lang in sorted({r["lang"] for r in recs})},
        "false_clarified": [r["question"] for r in clear_langs
                            if r["score"] > 0 and r["score"] >= threshold - 1e-9],
        "missed": [f"{r['reason']}: {r['question']}" for r in recs if r["label"] == "ambiguous"
                   and not (r["score"] > 0 and r["score"] >= threshold - 1e-9)],
        "seconds": round(time.perf_counter() - t0, 1),
        "fitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "curve": curve,
    }  # fmt: skip
    print(json.dumps({k: v for k, v in record.items() if k != "curve"}, indent=2,
                     ensure_ascii=False))  # fmt: skip
    print("curve on the fit split:")
    for r in curve:
        p, rc, f = r["precision"], r["recall"], r["false_clarification"]
        print(f"  t={r['threshold']:.2f} precision={p['value']} {p['ci95']} recall={rc['value']} "
              f"{rc['ci95']} false={f['value']} {f['ci95']} (n={p['n']}/{rc['n']}/{f['n']})")  # fmt: skip
    if args.write:
        path = OUT / f"graph_clarify_{args.signals}.json"
        path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path}; set graph.clarify_threshold = {threshold}")


if __name__ == "__main__":
    main()
