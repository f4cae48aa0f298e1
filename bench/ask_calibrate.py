"""Fit `answering.answerable_threshold` on the fit half of the development set.

Input: the JSONL dump of `bench/ask_quality.py --dev-half fit --configs new --set
answering.answerable_threshold=1e-6` (a threshold that refuses nothing, so every composed answer's
P(answerable) is recorded). For each candidate threshold t the cases whose composed answer has
P < t would be refused. Rule: among thresholds whose *added* false refusals (answerable cases
answered now, refused at t) stay within BOUND of the answerable cases, take the one with the
highest precision (right answers / answers); ties go to the lower threshold. Writes the
calibration record (threshold, bound, rule, the cases, the model, the date, the whole curve)
to `src/footnote/config/answering_calibration.json`.

`--apply TEST.jsonl` then scores a test-half dump (run the same way) with the fitted threshold
applied to the recorded scores: an answer whose P(answerable) is below it becomes the
`weak_evidence` refusal the pipeline would have given (the run itself made the verification
calls such an answer would have skipped, so its calls and seconds are an upper bound).

`--summarise TEST.jsonl` prints that summary without fitting (no threshold applied). Every row
is re-scored with today's `score_case` (no model call), so old dumps follow today's rules.

Usage: python bench/ask_calibrate.py DUMP.jsonl [--bound 0.10] [--write] [--apply TEST.jsonl]
       python bench/ask_calibrate.py --summarise TEST.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

CALIBRATION = Path(__file__).resolve().parents[1] / "src/footnote/config/answering_calibration.json"


def curve(rows: list[dict[str, Any]], grid: list[float]) -> list[dict[str, Any]]:
    out = []
    answerable = [r for r in rows if r["type"] != "unanswerable"]
    unanswerable = [r for r in rows if r["type"] == "unanswerable"]
    for t in grid:
        answered = right = added = caught = 0
        for r in rows:
            o, s = r["output"], r["scores"]
            p = o.get("answerable_p")
            gated = o["status"] == "answered" and p is not None and p < t
            if o["status"] != "answered":
                continue
            if gated:
                added += r["type"] != "unanswerable"
                caught += r["type"] == "unanswerable"
                continue
            answered += 1
            right += bool(s["correct"])
        out.append(
            {
                "threshold": t,
                "answers": answered,
                "precision": round(right / answered, 4) if answered else None,
                "added_false_refusals": round(added / max(1, len(answerable)), 4),
                "added_refusals_on_unanswerable": f"{caught}/{len(unanswerable)}",
            }
        )
    return out


def apply(dump: Path, threshold: float | None) -> None:
    """The test dump's summary per (set, config), with the threshold applied to `new` rows."""
    from ask_quality import summarise, table
    from footnote.eval.loaders import default_data_dir, load_dataset
    from footnote.eval.metrics import score_case

    data = default_data_dir()
    cases = {}
    for name in ("footnote-dev", "qasper-train"):
        ds = load_dataset(name, data_dir=data, cache_dir=Path("/tmp/ask-calibrate-cache"))
        cases.update({c.id: c for c in ds.cases})
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in dump.read_text().splitlines():
        r = json.loads(line)
        r["scores"] = score_case(cases[r["case"]], r["output"])  # today's scoring rules
        groups.setdefault((r["set"], r["config"]), []).append(r)
        o = r["output"]
        p = o.get("answerable_p")
        if threshold is None:
            continue
        if r["config"] == "new" and o["status"] == "answered" and p is not None and p < threshold:
            gated = {**r, "config": "new+threshold"}
            gated["output"] = {**o, "status": "weak_evidence", "answer": "", "citations": [],
                               "sentences": []}  # fmt: skip
            gated["scores"] = score_case(cases[r["case"]], gated["output"])
            groups.setdefault((r["set"], "new+threshold"), []).append(gated)
        elif r["config"] == "new":
            groups.setdefault((r["set"], "new+threshold"), []).append(
                {**r, "config": "new+threshold"}
            )
    print(f"\nthreshold applied: {threshold}")
    print(
        table(
            {key: summarise([cases[r["case"]] for r in rows], rows) for key, rows in groups.items()}
        )
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dump", nargs="?", default="")
    p.add_argument("--summarise", default="")
    p.add_argument("--bound", type=float, default=0.10)
    p.add_argument("--write", action="store_true")
    p.add_argument("--apply", default="")
    a = p.parse_args()
    if a.summarise:
        apply(Path(a.summarise), None)
        return
    rows = [json.loads(line) for line in Path(a.dump).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["set"] == "footnote-dev" and r["config"] == "new"]
    ids = [r["case"] for r in rows]
    assert all(int(i.rsplit("-", 1)[1]) % 2 == 0 for i in ids), "fit on the fit half only"
    grid = [round(x * 0.05, 2) for x in range(0, 20)]
    table = curve(rows, grid)
    allowed = [
        c for c in table if c["added_false_refusals"] <= a.bound and c["precision"] is not None
    ]
    best = max(allowed, key=lambda c: (c["precision"], -c["threshold"]))
    for c in table:
        print(c)
    print("chosen:", best)
    record = {
        "fitted": True,
        "answerable_threshold": best["threshold"],
        "false_refusal_bound": a.bound,
        "rule": "highest precision among thresholds whose added false refusals on answerable fit "
        "cases are within the bound; ties to the lower threshold",
        "dataset": "footnote-dev-fit",
        "cases": ids,
        "n": len(ids),
        "model": "local:qwen2.5-coder-1.5b (compose role), first-token P(yes) of prompts/answerable.md",
        "fitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "curve": table,
    }
    if a.write:
        CALIBRATION.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        print("wrote", CALIBRATION)
    if a.apply:
        apply(Path(a.apply), best["threshold"])


if __name__ == "__main__":
    main()
