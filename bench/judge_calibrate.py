"""What `verify.supported_threshold` would do, read from a recorded run (no model calls).

Input: a `bench/ask_quality.py --dump` file and the workspace the run used (its run store holds
every check span with the judge's P(supported) for each sentence). For each threshold t of a
grid, each case is replayed from its first verification round:

- a case answered at the recorded threshold stays answered when every sentence it showed has
  P ≥ t, and becomes `weak_evidence` otherwise;
- a refused case whose first-round sentences failed *only* the judge (no number, quote or id
  problem) and all have P ≥ t becomes an answer made of those sentences, scored by the
  evaluator's rules (`eval.metrics.score_case`); any other refused case stays refused.

The replay ignores revisions (at a lower t the first draft stands, so no revision would run) and
is an estimate: its purpose is to choose the threshold to measure, not to replace the run.

Usage: python bench/judge_calibrate.py DUMP.jsonl [--workspace bench/out/ask_retrieval/dev]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT
from footnote.eval.loaders import default_data_dir, load_dataset
from footnote.eval.metrics import score_case

JUDGE_ONLY = {"judge", "recited"}
"""Reasons that leave a sentence's deterministic checks passed."""


def rounds(conn: sqlite3.Connection, run_id: str) -> list[list[dict[str, Any]]]:
    """The run's check spans, one list per compose call (a revision starts a new round)."""
    out: list[list[dict[str, Any]]] = []
    for kind, name, data in conn.execute(
        "SELECT kind, name, data FROM spans WHERE run_id = ? ORDER BY seq", (run_id,)
    ):
        if kind == "model" and name == "compose":
            out.append([])
        elif kind == "check" and out:
            out[-1].append(json.loads(data))
    return out


def _p(check: dict[str, Any]) -> float | None:
    return None if check.get("judge_p") is None else float(check["judge_p"])


def replay(
    row: dict[str, Any], runs: list[list[dict[str, Any]]], t: float, case: Any
) -> tuple[bool, bool]:
    """(answered, right) for the case at threshold t."""
    out = row["output"]
    if out["status"] == "answered":
        last = runs[-1] if runs else []
        ps = [p for c in last if (p := _p(c)) is not None]
        if not ps or min(ps) >= t:
            return True, bool(row["scores"]["correct"])
        return False, case.unanswerable
    first = runs[0] if runs else []
    passed = bool(first) and all(
        set(c.get("reasons", {})) <= JUDGE_ONLY and not c.get("fabricated")
        and (p := _p(c)) is not None and p >= t
        for c in first
    )  # fmt: skip
    if not passed:
        return False, case.unanswerable
    if case.unanswerable:
        return True, False
    text = " ".join(dict.fromkeys(c["sentence"] for c in first))
    scores = score_case(case, {"status": "answered", "answer": text, "citations": [],
                               "sentences": [{"text": text, "factual": True}]})  # fmt: skip
    return True, bool(scores["correct"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dump")
    p.add_argument("--workspace", default=str(OUT / "ask_retrieval" / "dev"))
    p.add_argument("--config", default="new")
    a = p.parse_args()
    ds = load_dataset(
        "footnote-dev", data_dir=default_data_dir(), cache_dir=Path(a.workspace) / "cache"
    )
    cases = {c.id: c for c in ds.cases}
    rows = [json.loads(line) for line in Path(a.dump).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["set"] == "footnote-dev" and r["config"] == a.config]
    errors = sum(1 for r in rows if r["output"]["status"] == "error")
    rows = [r for r in rows if r["output"]["status"] != "error"]
    conn = sqlite3.connect(Path(a.workspace) / "footnote.db")
    by_case = {r["case"]: rounds(conn, r["output"].get("run_id", "")) for r in rows}
    answerable = [r for r in rows if not cases[r["case"]].unanswerable]
    print(f"n={len(rows)} (answerable {len(answerable)}; errors kept out and counted: {errors})")
    print("| threshold | answers | precision | accuracy (answerable) | false refusals | "
          "unanswerable answered |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for i in range(4, 17):
        t = round(i * 0.05, 2)
        got = {r["case"]: replay(r, by_case[r["case"]], t, cases[r["case"]]) for r in rows}
        answers = [right for answered, right in got.values() if answered]
        acc = sum(1 for r in answerable if got[r["case"]] == (True, True))
        refused = sum(1 for r in answerable if not got[r["case"]][0])
        wrong_unans = sum(1 for cid, (ans, _) in got.items() if cases[cid].unanswerable and ans)
        prec = (
            f"{sum(answers) / len(answers):.2f} ({sum(answers)}/{len(answers)})" if answers else "–"
        )
        print(f"| {t:.2f} | {len(answers)} | {prec} | {acc}/{len(answerable)} | "
              f"{refused}/{len(answerable)} | {wrong_unans} |")  # fmt: skip


if __name__ == "__main__":
    main()
