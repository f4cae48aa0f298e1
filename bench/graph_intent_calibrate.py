"""Fit `graph.min_confidence` (below it, graph QA asks back instead of answering) on CypherBench-AU.

The `understand` role (the embedded 1.5B by default) reads each question against the graph's
schema and says how sure it is of the intent (`confidence`, 0–1). Asked of the AMBIGUOUS
rewrites, a useful confidence is low; of the ORIGINAL (answerable) questions, high. Each
CypherBench-AU graph is rebuilt from its items as `graph_cypherbench_au.py` does; every
corrupted question and its original are read once, and the confidence recorded.

Fit graphs: all but `movie` and `nba` (those two are the held-out graphs, and `movie` is also
the ladder's `au` slice). Rule: the highest threshold whose clarify rate on the ORIGINAL
questions stays within `--bound` (0.10), i.e. the most AMBIGUOUS questions asked back that the
bound allows; ties go to the lower threshold. Rules-based understanding (`graph.understand =
"rules"`) is scored the same way for comparison. `--write` adds the record (threshold, bound,
rule, graphs, model, curve, held-out rates) to `src/footnote/config/graph_calibration.json`
under `intent`; `graph.min_confidence = None` (the default) reads it.

    .venv/bin/python bench/graph_intent_calibrate.py [--per-graph 8] [--write]
    .venv/bin/python bench/graph_intent_calibrate.py --readings bench/out/graph_intent_calibrate.jsonl --write
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import graph_cypherbench_au
from footnote.config import GraphSettings, load_settings, shared_data_candidates
from footnote.errors import FootnoteError
from footnote.index.graph.align import entity_index
from footnote.models import build_roles
from footnote.pipelines.graph.understand import understand_by_model, understand_by_rules
from footnote.workspace import graph_catalog
from graph_cypherbench_au import build_spec

OUT = Path(__file__).parent / "out"
RECORD = Path(__file__).resolve().parents[1] / "src/footnote/config/graph_calibration.json"
HELD_OUT = ("movie", "nba")
GRID = [round(0.05 * i, 2) for i in range(21)]


def read(model: Any, graphs: list[str], per_graph: int, seed: int) -> list[dict[str, Any]]:
    """Each sampled item's corrupted and original question, read by the model and by rules."""
    data = graph_cypherbench_au.DATA
    ws = OUT / "graph_intent_ws"
    cat = graph_catalog(GraphSettings(dir=str(ws)), ws)
    out: list[dict[str, Any]] = []
    for g in graphs:
        items = json.loads((data / "curated_200_v4" / f"full_{g}.json").read_text())
        random.Random(seed).shuffle(items)
        spec, rows = build_spec(g, items)
        cat.create(spec, rows["nodes"], {}, replace=True)
        store = cat.open(spec.name)
        index = entity_index(store, None, GraphSettings(), None)
        for it in items[:per_graph]:
            for kind, q in ((it["expected_answer"], it["corrupted_nl_question"]),
                            ("ANSWERABLE", it["original_nl_question"])):  # fmt: skip
                t0 = time.perf_counter()
                try:
                    conf: float | None = understand_by_model(model, q, spec).confidence
                except FootnoteError as exc:  # an error is recorded as one, never as a score
                    conf = None
                    print(f"  {g} error: {exc}", file=sys.stderr)
                rules = understand_by_rules(q, spec, index).confidence
                out.append({"graph": g, "kind": kind, "q": q, "model": conf, "rules": rules,
                            "s": round(time.perf_counter() - t0, 2)})  # fmt: skip
                print(f"  {g} {kind} model={conf} rules={rules} {out[-1]['s']}s", flush=True)
        store.close()
    return out


def rates(recs: list[dict[str, Any]], key: str, t: float) -> dict[str, Any]:
    """Clarify rates at threshold t per kind (errors counted apart, in no denominator's favour)."""
    row: dict[str, Any] = {"threshold": t}
    for kind in ("AMBIGUOUS", "UNANSWERABLE", "ANSWERABLE"):
        rs = [r for r in recs if r["kind"] == kind]
        scored = [r for r in rs if r[key] is not None]
        row[f"{kind.lower()}_clarify"] = round(sum(r[key] < t for r in scored) / max(1, len(rs)), 4)
        row[f"{kind.lower()}_n"] = len(rs)
        row[f"{kind.lower()}_errors"] = len(rs) - len(scored)
    return row


def fit(recs: list[dict[str, Any]], key: str, bound: float) -> tuple[float, list[dict[str, Any]]]:
    curve = [rates(recs, key, t) for t in GRID]
    ok = [r for r in curve if r["answerable_clarify"] <= bound]
    best = max(ok, key=lambda r: (r["ambiguous_clarify"], -r["threshold"]))
    return float(best["threshold"]), curve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-graph", type=int, default=8)
    ap.add_argument("--bound", type=float, default=0.10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--write", action="store_true")
    ap.add_argument(
        "--readings",
        type=Path,
        help="fit from a saved bench/out/graph_intent_calibrate.jsonl (no model call)",
    )
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    data = next(p for p in shared_data_candidates() if (p / "cypherbench-au").exists())
    graph_cypherbench_au.DATA = data / "cypherbench-au"
    graphs = sorted(p.stem.removeprefix("full_")
                    for p in (graph_cypherbench_au.DATA / "curated_200_v4").glob("full_*.json"))  # fmt: skip
    model = build_roles(load_settings(OUT / "graph_ws_settings").models).chat("understand")
    t0 = time.perf_counter()
    if args.readings:
        saved = [json.loads(line) for line in args.readings.read_text().splitlines() if line]
        fit_recs = [r for r in saved if r["graph"] not in HELD_OUT]
        test_recs = [r for r in saved if r["graph"] in HELD_OUT]
    else:
        fit_recs = read(model, [g for g in graphs if g not in HELD_OUT], args.per_graph, args.seed)
        test_recs = read(model, list(HELD_OUT), args.per_graph, args.seed)
    threshold, curve = fit(fit_recs, "model", args.bound)
    rules_t, rules_curve = fit(fit_recs, "rules", args.bound)
    record = {
        "fitted": True, "min_confidence": threshold, "clarify_on_answerable_bound": args.bound,
        "rule": "the threshold asking back the most AMBIGUOUS fit questions while asking back at "
                "most the bound's share of the ORIGINAL ones; ties to the lower threshold",
        "dataset": f"CypherBench-AU curated_200_v4, {args.per_graph} items per graph (seed "
                   f"{args.seed}), each corrupted question and its original",
        "fit_graphs": [g for g in graphs if g not in HELD_OUT], "held_out_graphs": list(HELD_OUT),
        "n_fit": len(fit_recs), "n_held_out": len(test_recs),
        "model": f"{model.name} (understand role), self-reported intent confidence",
        "fit": rates(fit_recs, "model", threshold),
        "held_out": rates(test_recs, "model", threshold),
        "held_out_before": rates(test_recs, "model", 0.5),
        "rules": {"min_confidence": rules_t, "held_out": rates(test_recs, "rules", rules_t)},
        "seconds_reading": round(sum(r["s"] for r in fit_recs + test_recs), 1),
        "fit_seconds": round(time.perf_counter() - t0, 1),
        "fitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "curve": curve, "rules_curve": rules_curve,
    }  # fmt: skip
    print(json.dumps({k: v for k, v in record.items() if "curve" not in k}, indent=2))
    if not args.readings:
        (OUT / "graph_intent_calibrate.jsonl").write_text(
            "\n".join(json.dumps(r, ensure_ascii=False) for r in fit_recs + test_recs) + "\n"
        )
    if args.write:
        full = json.loads(RECORD.read_text(encoding="utf-8"))
        full["intent"] = record
        RECORD.write_text(json.dumps(full, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {RECORD} (intent)")


if __name__ == "__main__":
    main()
