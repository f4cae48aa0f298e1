"""The `eval` job: a dataset through the ask pipeline into a stored run, resumable case by case.

The run is named after the job (`job-<id>` unless the payload names it), so a retry opens the
same run and asks only the cases not yet in its `cases.jsonl`: no case is stored twice. Stage
`cases` finishes when every case is stored; stage `report` writes the report files.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footnote.eval.loaders import default_data_dir, load_dataset
from footnote.eval.report import write_reports
from footnote.eval.runner import RunOptions, cache_dir, run_cases, start_run
from footnote.jobs import JobContext

if TYPE_CHECKING:
    from footnote.workspace import Workspace


def eval_task(ws: Workspace, payload: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
    """Payload: `dataset` (a .jsonl file or a loader name), and optionally `run_id`, `mode`,
    `limit`, `types`, `langs`, `parallel`, `judge_citations`, `root`, `data_dir`."""
    cfg = ws.settings.eval
    run_id = str(payload.get("run_id") or f"job-{ctx.job_id}")
    data_dir = payload.get("data_dir") or cfg.data_dir
    root = payload.get("root")
    dataset = load_dataset(
        str(payload["dataset"]), data_dir=Path(data_dir) if data_dir else default_data_dir(),
        cache_dir=cache_dir(ws), root=Path(root) if root else None,
    )  # fmt: skip
    opts = RunOptions(
        mode=payload.get("mode"), limit=payload.get("limit"),
        types=tuple(payload.get("types", ())), langs=tuple(payload.get("langs", ())),
        parallel=int(payload.get("parallel") or cfg.parallel),
        judge_citations=bool(payload.get("judge_citations", cfg.judge_citations)),
    )  # fmt: skip

    def cases() -> int:
        run, todo = start_run(ws, str(payload["dataset"]), dataset, opts, run_id)
        if todo:
            asyncio.run(run_cases(ws, run, dataset, todo, opts))
        ctx.check()
        return len(run.records)

    done = ctx.stage("cases", cases)

    def report() -> dict[str, Any]:
        from footnote.eval.runs import open_run

        full = write_reports(open_run(ws.dir, run_id), cfg.calibration_buckets)
        return {"metrics": full.get("metrics", {}), "cases": full.get("cases", done)}

    summary = ctx.stage("report", report)
    return {"run_id": run_id, "cases": done, **summary}
