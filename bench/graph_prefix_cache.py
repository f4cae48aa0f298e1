"""The embedded model's prefix-state cache (`models.prefix_cache_mb`) on graph QA: the same
questions through the same pipeline with the cache off and on, in one process.

Two workspaces on one folder differ only in `models.prefix_cache_mb` (0, and the default), so
each holds its own llama.cpp instance; every question runs in both, the order alternating by
case (the first run of a pair never warms the second: the states live in each instance).
The response cache is off in both (a hit would skip the model). Printed per configuration:
p50 and mean seconds per question, tokens the model evaluated per question (prompt tails and
replies; `PrefixStateLlama.evaluated`), model calls; the on/off ratios; and how many questions
ended the same way in both (status and rows) — the cache changes no computation, so any
difference is a greedy tie broken by floating-point order, counted, not hidden.

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/graph_prefix_cache.py --split test --limit 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import OUT
from graph_quality import ask, open_workspace, pick_dev


def evaluated(ws: Any) -> int:
    """Tokens the workspace's embedded model has evaluated so far (0 when none is loaded)."""
    from footnote.models.base import ROLES

    models = {id(m): m for r in ROLES if r != "embed" and ws.models.is_bound(r)
              and hasattr(m := ws.models.chat(r).model, "evaluated_tokens")}  # fmt: skip
    return sum(int(m.evaluated_tokens()) for m in models.values())


def calls_of(ws: Any) -> Callable[[str], int]:
    """Model calls a run made (the ledger's records of it)."""
    return lambda run: len(ws.models.ledger.records(run_id=run))


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--split", default="test", choices=("fit", "test", "all"))
    p.add_argument("--ids", default="", help="these dev cases only, in this order")
    p.add_argument("--limit", type=int, default=0, help="at most N cases (0: all)")
    p.add_argument("--mb", type=int, default=512, help="prefix_cache_mb of the `on` run")
    p.add_argument("--workspace", default=str(OUT / "graph_prefix_cache" / "ws"))
    a = p.parse_args(argv)
    cases = pick_dev(a.split, [x for x in a.ids.split(",") if x], [])
    cases = cases[: a.limit] if a.limit else cases
    base = {"models.response_cache_size": 0}
    spaces = {
        "off": open_workspace(Path(a.workspace), False, {**base, "models.prefix_cache_mb": 0}),
        "on": open_workspace(Path(a.workspace), False, {**base, "models.prefix_cache_mb": a.mb}),
    }
    pipes = {(name, g): ws.graph(g, user_groups=None) for name, ws in spaces.items()
             for g in ("movies", "northwind")}  # fmt: skip
    got: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
    try:
        for i, case in enumerate(cases):
            for name in ("off", "on") if i % 2 == 0 else ("on", "off"):
                ws = spaces[name]
                before = evaluated(ws)
                out = ask(pipes[(name, case["graph"])], case, calls_of(ws))
                out["evaluated"] = evaluated(ws) - before
                got[name].append(out)
                print(f"[{name}] {case['id']}: {out['status']} {out['seconds']}s "
                      f"evaluated={out['evaluated']} calls={out['model_calls']}", flush=True)  # fmt: skip
    finally:
        for pipe in pipes.values():
            pipe.close()
        for ws in spaces.values():
            ws.close()
    print(report(got))


def report(got: dict[str, list[dict[str, Any]]]) -> str:
    """The table: per configuration, and on/off ratios; same outcomes counted."""

    def stats(rows: list[dict[str, Any]]) -> dict[str, float]:
        secs = [r["seconds"] for r in rows]
        return {"p50_s": statistics.median(secs), "mean_s": statistics.fmean(secs),
                "evaluated": statistics.fmean(r["evaluated"] for r in rows),
                "calls": statistics.fmean(r["model_calls"] for r in rows)}  # fmt: skip

    n = len(got["on"])
    if not n:
        return "no questions ran"
    s = {k: stats(v) for k, v in got.items()}
    lines = [f"n = {n} questions, each run with the cache off and on (same process)",
             "| config | p50 s | mean s | tokens evaluated / q | model calls / q |",
             "|---|---|---|---|---|"]  # fmt: skip
    for k in ("off", "on"):
        lines.append(f"| {k} | {s[k]['p50_s']:.1f} | {s[k]['mean_s']:.1f} | "
                     f"{s[k]['evaluated']:.0f} | {s[k]['calls']:.1f} |")  # fmt: skip
    lines.append("| on/off | " + " | ".join(
        f"{s['on'][m] / s['off'][m]:.2f}" if s["off"][m] else "-"
        for m in ("p50_s", "mean_s", "evaluated", "calls")) + " |")  # fmt: skip
    same = sum((x["status"], x["rows"]) == (y["status"], y["rows"])
               for x, y in zip(got["off"], got["on"], strict=True))  # fmt: skip
    lines.append(f"same outcome (status and rows) in both: {same}/{n}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
