"""`footnote worker` (work the job queue) and `footnote jobs submit|status` (use it)."""

from __future__ import annotations

import json
import logging
from typing import Annotated, Any

import typer

from footnote.cli.common import JsonOpt, WorkspaceOpt, _fail, _print_json, _workspace, app, err, out
from footnote.errors import FootnoteError, UsageError

jobs_app = typer.Typer(help="Submit background jobs and read their state.", no_args_is_help=True)
app.add_typer(jobs_app, name="jobs")
TASKS = ("ingest", "research", "eval")


def _queue(ws: Any) -> Any:
    from footnote.eval.jobs import eval_task
    from footnote.workspace.jobs import open_queue, register_tasks

    queue = open_queue(ws.settings)
    register_tasks(queue, ws)
    queue.register("eval", lambda payload, ctx: eval_task(ws, payload, ctx))
    return queue


@app.command()
def worker(
    threads: Annotated[
        int | None, typer.Option(help="Jobs run at once (default jobs.workers, 2).", min=1)
    ] = None,
    idle_exit: Annotated[
        float | None,
        typer.Option(
            help="Exit after this many seconds with nothing queued or running (default: run "
            "until SIGTERM/SIGINT).",
            min=0,
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log every job.")] = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Run ingest, research and eval jobs from the queue named by `jobs.url`.

    With `jobs.url` empty the queue is the workspace's SQLite file (`<workspace>/jobs.db`);
    with `redis://…` any number of workers on any machines share it (each also needs the same
    `store.url`). A job whose worker dies (killed, lost) is handed to another worker after
    `jobs.lease_s` and resumes from its last finished stage, up to `jobs.max_attempts` tries.
    SIGTERM stops taking jobs and lets the running ones finish; SIGINT stops at once (its
    running jobs are resumed by another worker once their lease expires).
    """
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    with _workspace(workspace) as ws:
        queue = _queue(ws)
        try:
            n = threads or queue.workers
            err.print(f"footnote worker {queue.worker_id}: {queue.url}, {n} at once, tasks "
                      f"{', '.join(sorted(queue.tasks))}")  # fmt: skip
            queue.worker(n).run(idle_exit_s=idle_exit)
        finally:
            queue.close()


@jobs_app.command("submit")
def submit_cmd(
    task: Annotated[str, typer.Argument(help="ingest, research or eval.")],
    payload: Annotated[
        str,
        typer.Argument(
            help='The job\'s JSON payload: ingest {"paths": […]}, research {"run_id": …}, eval '
            '{"dataset": …, "mode": …}.'
        ),
    ],
    job_id: Annotated[
        str | None, typer.Option(help="Name the job (submitting a known id queues nothing).")
    ] = None,
    wait: Annotated[
        float | None, typer.Option(help="Wait up to this many seconds for the result.")
    ] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Queue a job for `footnote worker` and print its id (and, with --wait, its outcome)."""
    if task not in TASKS:
        _fail(UsageError(f"unknown task {task!r}; expected one of {', '.join(TASKS)}"))
    try:
        body = json.loads(payload)
    except ValueError as exc:
        _fail(UsageError(f"the payload is not JSON: {exc}"))
    if not isinstance(body, dict):
        _fail(UsageError("the payload must be a JSON object"))
    with _workspace(workspace) as ws:
        from footnote.workspace.jobs import open_queue

        queue = open_queue(ws.settings)
        try:
            jid = queue.submit(task, body, job_id=job_id)
            rec = queue.wait(jid, wait) if wait is not None else queue.status(jid)
        except FootnoteError as exc:
            _fail(exc)
        finally:
            queue.close()
    _show(rec, as_json)


@jobs_app.command("status")
def status_cmd(
    job_id: Annotated[str, typer.Argument(help="A job id (from `footnote jobs submit`).")],
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A job's state, attempts, and result or error."""
    with _workspace(workspace) as ws:
        from footnote.workspace.jobs import open_queue

        queue = open_queue(ws.settings)
        try:
            rec = queue.status(job_id)
        finally:
            queue.close()
    if rec is None:
        _fail(UsageError(f"no job {job_id!r}"))
    _show(rec, as_json)


def _show(rec: Any, as_json: bool) -> None:
    data = {"id": rec.id, "task": rec.task, "state": rec.state, "attempts": rec.attempts,
            "result": rec.result, "error": rec.error}  # fmt: skip
    if as_json:
        _print_json(data)
        return
    out.print(f"{rec.id} {rec.task} {rec.state} (attempts {rec.attempts})")
    if rec.error:
        out.print(f"error: {rec.error}")
    if rec.result is not None:
        out.print(json.dumps(rec.result, ensure_ascii=False, indent=2))
