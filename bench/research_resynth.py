"""Synthesis and checks re-run on a finished brief's own evidence (issue #32): what the code
installed now writes from exactly the cards an earlier run gathered.

Each `today` brief of a `bench/research_quality.py --dump` file is copied into a new research
run of the same workspace — its outline, plan, investigation records and cards kept, its budget
use set to what investigation recorded — and run on: merge, conflicts, chapters, checks and the
checklist are redone by the installed code with the workspace's models (response cache off).
The new brief is scored as `research_quality.py` scores one (deterministic; no judge) and
printed beside the old brief's scores; every row goes to `--out` (JSONL). Run the old brief
with the old code (a snapshot, `PYTHONPATH=SNAPSHOT/src`), then this with the new, for a
comparison on identical evidence; the model is deterministic (temperature 0).

    .venv/bin/python bench/research_resynth.py --workspace W --dump old.jsonl --label new \\
        --out resynth.jsonl [--ids md-02,md-06]

An old run's budget use includes investigation's card-claim calls, which its sub-question
records do not hold, so only the new run's synthesis cost is known (its totals less the
investigation records')."""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from footnote.eval.research import load_cases
from footnote.eval.research_metrics import score_brief
from footnote.eval.research_multidoc import load_multidoc, score_extra
from footnote.serialize import brief_to_dict
from footnote.workspace import Workspace
from footnote.workspace.research import research_store, run_research

KEPT = ("outline", "plan", "investigate")
"""The stages a copy keeps; everything after investigation is redone."""


def copy_run(db: sqlite3.Connection, old: str, new: str) -> None:
    """`old` as a confirmed run `new` holding its outline, plan, investigation and cards."""
    for table, key in (("research_runs", "id"), ("research_artifacts", "run_id"),
                       ("research_cards", "run_id")):  # fmt: skip
        db.execute(f"delete from {table} where {key} = ?", (new,))
    uid, question, options = db.execute(
        "select user_id, question, options from research_runs where id = ?", (old,)
    ).fetchone()
    records = [json.loads(d) for (d,) in db.execute(
        "select data from research_artifacts where run_id = ? and stage = 'investigate'", (old,))]  # fmt: skip
    opts = json.loads(options)
    opts["used"] = {k: sum(float(r.get("used", {}).get(k, 0)) for r in records)
                    for k in ("tokens", "calls", "searches", "fetches", "seconds")}  # fmt: skip
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    db.execute("insert into research_runs values (?, ?, ?, ?, 'outline_confirmed', ?, ?)",
               (new, uid, question, json.dumps(opts), now, now))  # fmt: skip
    marks = ", ".join("?" * len(KEPT))
    db.execute("insert into research_artifacts select ?, stage, key, seq, data, updated_at from "
               f"research_artifacts where run_id = ? and stage in ({marks})", (new, old, *KEPT))  # fmt: skip
    db.execute("insert into research_cards select id, ?, seq, snapshot_id, block_id, data from "
               "research_cards where run_id = ?", (new, old))  # fmt: skip
    db.commit()


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workspace", required=True, help="the workspace the old briefs ran in")
    p.add_argument("--dump", required=True, help="research_quality.py --dump of the old briefs")
    p.add_argument("--label", default="new", help="suffix of the copied runs' ids")
    p.add_argument("--out", required=True, help="append each re-run brief and its scores here")
    p.add_argument("--ids", default="", help="only these questions (comma-separated)")
    a = p.parse_args(argv)
    ids = {x for x in a.ids.split(",") if x}
    ws = Workspace.open(Path(a.workspace), overrides={"models": {"response_cache_size": 0}})
    store = research_store(ws)
    cases = {c["id"]: c for c in [*load_cases(), *load_multidoc()]}
    db = sqlite3.connect(Path(a.workspace) / "footnote.db", timeout=60)

    def snapshot_text(card: dict[str, Any]) -> str | None:
        if card.get("block_id"):
            block = ws.store.get_block(card["block_id"])
            return (
                None if block is None else str(block.table.as_text() if block.table else block.text)
            )
        snap = store.get_snapshot(card.get("snapshot_id") or "")
        return snap.text if snap else None

    async def rerun(run_id: str) -> dict[str, Any] | None:
        brief = None
        async for event in run_research(ws, run_id):
            if event.type == "brief":
                brief = brief_to_dict(event.brief)
        return brief

    rows = [
        json.loads(x) for x in Path(a.dump).read_text(encoding="utf-8").splitlines() if x.strip()
    ]
    for row in rows:
        if (
            row["config"] != "today"
            or "brief" not in row["output"]
            or (ids and row["case"] not in ids)
        ):
            continue
        new = f"{row['output']['run_id']}_{a.label}"
        copy_run(db, row["output"]["run_id"], new)
        t0 = time.time()
        brief = asyncio.run(rerun(new))
        if brief is None:
            print(f"{row['case']}: the re-run ended without a brief")
            continue
        case = cases[row["case"]]
        scores = score_brief(case, brief, snapshot_text, None)
        scores["extra"] = score_extra(case, brief, None)
        out = {"case": row["case"], "label": a.label, "run_id": new, "seconds": round(time.time() - t0, 1),
               "scores": scores, "old_scores": row["scores"], "brief": brief}  # fmt: skip
        with Path(a.out).open("a", encoding="utf-8") as f:
            f.write(json.dumps(out, ensure_ascii=False, default=str) + "\n")
        claims = sum(len(s["claims"]) for s in brief["sections"])
        old_claims = sum(len(s["claims"]) for s in row["output"]["brief"]["sections"])
        print(f"{row['case']} {a.label}: key points {scores['coverage_det']} (old "
              f"{row['scores']['coverage_det']}), claims {claims} (old {old_claims}), pages "
              f"{scores['pages']} (old {row['scores']['pages']}), inventions "
              f"{scores['extra']['inventions']['invented_det']}, tokens {scores['cost']['tokens']:.0f}, "
              f"{out['seconds']} s", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
