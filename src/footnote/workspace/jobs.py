"""The job queue a workspace gets (`jobs.url`) and the ingest and research tasks.

`jobs.url` empty (or `sqlite`) is the embedded queue, `<workspace>/jobs.db`: huey's SQLite
storage with the ledger in the same file; `redis://…` is the distributed queue, shared by every
`footnote worker` (a `rediss://` or `unix://` URL works too). Each task is idempotent:

- `ingest`: files are stored under their content hash (`access.scoped_source_id`), so a retry
  finds a stored file and only resumes its indexing (committed batches stay): no document or
  block is stored twice; an attempt whose indexing stopped is retried.
- `research`: the pipeline skips every stage whose artifact is stored; its events continue the
  run's stream, and a retry after a lost worker drops the events the earlier attempt already
  persisted (the replay of finished stages), so no event is stored twice. The run's stream
  ends (`done`) with its last attempt; a cancel request (`JobQueue.cancel`) ends it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footnote.config import Settings
from footnote.errors import ConfigError, FootnoteError, IngestError, NotFound, error_code
from footnote.events import BriefEvent, Done, Error, Event, Status
from footnote.jobs import JobContext, JobQueue, LeaseLost
from footnote.serialize import event_to_dict
from footnote.store.records import StoredEvent
from footnote.workspace.core import UPLOAD_TICKET

if TYPE_CHECKING:
    from footnote.workspace.core import Workspace

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
KEPT_ON_RETRY = frozenset({"answer_delta", "thinking", "error", "done"})
"""Event types a retry never drops as replays (the same token may legitimately recur; an
ending is written once per run or resume, never by a finished stage's replay)."""


_GUARDS: weakref.WeakKeyDictionary[Workspace, dict[str, threading.Lock]] = (
    weakref.WeakKeyDictionary()
)
_GUARDS_LOCK = threading.Lock()


def ingest_guard(ws: Workspace, key: str) -> threading.Lock:
    """The lock that keeps one process's ingest of an upload (`key`: its source id, or the
    files of a job) apart from that upload's deletion and ticket writes; ingests of other
    uploads go on meanwhile."""
    with _GUARDS_LOCK:
        return _GUARDS.setdefault(ws, {}).setdefault(key, threading.Lock())


def queue_url(settings: Settings) -> str:
    """The effective queue URL of `jobs.url`."""
    url = settings.jobs.url
    if url in ("", "sqlite"):
        return f"sqlite:///{settings.workspace / 'jobs.db'}"
    return url


def open_queue(settings: Settings) -> JobQueue:
    """The queue named by `jobs.url` (tasks are registered by `register_tasks`)."""
    cfg, url = settings.jobs, queue_url(settings)
    try:
        from huey import RedisHuey, SqliteHuey
    except ImportError as exc:  # the optional extra is not installed
        raise ConfigError(f"the job queue needs `pip install footnote[queue]` ({exc})") from exc
    from footnote.jobs.ledger import RedisLedger, SqliteLedger

    ledger: Any
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        huey = SqliteHuey(cfg.name, filename=str(path), results=False, utc=True)
        ledger = SqliteLedger(path, cfg.name)
    elif url.startswith(REDIS_SCHEMES):
        import redis

        huey = RedisHuey(cfg.name, url=url, results=False, utc=True, read_timeout=1)
        ledger = RedisLedger(redis.Redis.from_url(url), f"footnote:jobs:{cfg.name}")
    else:
        raise ConfigError(
            f"unsupported jobs.url {url!r}: use sqlite (embedded), sqlite:///PATH or redis://…"
        )
    return JobQueue(huey, ledger, url=url, lease_s=cfg.lease_s, max_attempts=cfg.max_attempts,
                    retry_delay_s=cfg.retry_delay_s, workers=cfg.workers)  # fmt: skip


def register_tasks(queue: JobQueue, ws: Workspace) -> None:
    """Make `ingest` and `research` runnable on this workspace (the CLI adds `eval`)."""
    queue.register("ingest", lambda payload, ctx: ingest_task(ws, payload, ctx))
    queue.register("research", lambda payload, ctx: research_task(ws, payload, ctx))


def ingest_task(ws: Workspace, payload: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
    """Ingest files: `paths`, and optionally `labels`, `acl_groups`, `owner`, `public`.

    Stage `ingest` stores and indexes every file (a file stored by an earlier attempt is only
    indexed further); its per-file outcome is the result. A file stored but not fully indexed
    (the index write failed, e.g. a deadlock between workers) fails the attempt, so the job is
    tried again and resumes the indexing; a file that cannot be parsed, or is gone (a deleted
    upload: a retry never brings it back), is a result, not retried. A cancelled job ingests
    nothing. An upload (`upload`: its source id; `uri`: the name its versions share) whose
    ticket is gone is not ingested, and if that happens while it is ingested, what it stored is
    removed again; ingests of other uploads run meanwhile."""

    gone: list[dict[str, Any]] = []
    upload = str(payload.get("upload", ""))
    key = upload or "\n".join(sorted(str(p) for p in payload["paths"]))

    def wanted() -> bool:  # an upload deleted (its ticket gone) or cancelled is not ingested
        ticket = ws.upload_dir(upload) / UPLOAD_TICKET if upload else None
        return not ctx.cancel_requested() and (ticket is None or ticket.is_file())

    def dropped(paths: list[Path], why: str) -> list[dict[str, Any]]:
        return [{"path": str(p), "outcome": "failed", "blocks": 0, "source_id": None,
                 "error": why} for p in paths]  # fmt: skip

    def run() -> list[dict[str, Any]]:
        with ingest_guard(ws, key):  # a deletion holds it too: a deleted upload's file is gone
            paths = [Path(p) for p in payload["paths"]]
            if not wanted():
                gone[:] = dropped(paths, "the upload was deleted")
                return []
            gone[:] = dropped([p for p in paths if not p.exists()], "the file is gone (deleted)")
            paths = [p for p in paths if p.exists()]
            if not paths:
                return []
        report = ws.ingest(  # unlocked: other uploads, and this one's deletion, go on meanwhile
            paths, labels=tuple(payload.get("labels", ())),
            acl_groups=tuple(payload.get("acl_groups", ())),
            owner=str(payload.get("owner", "")), public=bool(payload.get("public", False)),
            uri=payload.get("uri") or None,
        )  # fmt: skip
        with ingest_guard(ws, key):
            if upload and not wanted():  # deleted while it was ingested: nothing of it stays
                for r in report.results:
                    if r.source is not None and (r.outcome != "unchanged" or r.source.id == upload):
                        ws.indexer.remove_source(r.source.id)
                        ws.store.delete_source(r.source.id)
                gone[:] = dropped(paths, "the upload was deleted")
                return []
        stopped = [r for r in report.results if r.outcome == "failed" and r.source is not None]
        if stopped:  # stored, but indexing stopped (e.g. a deadlock): a retry resumes it
            raise IngestError(f"{stopped[0].path.name}: {stopped[0].error}")
        return [
            {"path": str(r.path), "outcome": r.outcome, "blocks": r.blocks, "error": r.error,
             "source_id": r.source.id if r.source else None}
            for r in report.results
        ]  # fmt: skip

    files = ctx.stage("ingest", run) + gone
    return {"files": files, "failed": sum(1 for f in files if f["outcome"] == "failed")}


def research_task(ws: Workspace, payload: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
    """Run (or resume) a confirmed research run: `run_id`, optionally `user_id`."""
    run_id, user_id = str(payload["run_id"]), str(payload.get("user_id", "local"))
    if ws.research_store.get_research(run_id) is None:
        raise NotFound(f"no research run {run_id!r}")
    state = asyncio.run(_drive_research(ws, run_id, user_id, ctx))
    record = ws.research_store.get_research(run_id)
    return {"research_run": run_id, "status": state, "state": record.state if record else None}


def event_key(kind: str, data: str) -> str:
    """An event's identity across attempts: its type and its JSON with keys sorted and whole
    floats as integers (a stage replayed from its stored artifact reads `3` back as `3.0`)."""

    def norm(value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    return kind + ":" + json.dumps(norm(json.loads(data)), sort_keys=True, ensure_ascii=False)


async def _drive_research(ws: Workspace, run_id: str, user_id: str, ctx: JobContext) -> str:
    """Persist the run's events as the server's run hub does, ending the stream (`done`) when
    this attempt is the run's last: completed, cancelled, or failed with no try left. Events an
    earlier attempt (or an earlier run of a resumed run) stored are not stored again (the
    finished stages replay them). A cancel request stops the run at its next event, or within
    a heartbeat while it waits on a model."""
    from footnote.workspace.research import research_events

    if ws.runs.get_run(run_id) is None:
        ws.runs.start(run_id, "research", {"research_run": run_id, "job": ctx.job_id},
                      user_id=user_id)  # fmt: skip
    stored = ws.events.events(run_id)
    seq = len(stored)
    seen = {event_key(e.type, e.data) for e in stored}
    status, ending, final = "failed", list[Event](), False

    def add(event: Event) -> None:
        nonlocal seq
        data = json.dumps(event_to_dict(event, run_id=run_id), default=str)
        if event.type not in KEPT_ON_RETRY and event_key(event.type, data) in seen:
            return
        seq += 1
        ws.events.add_events(run_id, [StoredEvent(seq, event.type, data)])

    loop, me = asyncio.get_running_loop(), asyncio.current_task()
    if me is not None:

        def stop() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: the run had ended
                loop.call_soon_threadsafe(me.cancel)

        ctx.on_cancel = stop
    if stored:
        add(Status("resumed", f"attempt {ctx.attempt}: resuming after the last finished stage"))
    try:
        if ctx.cancel_requested():
            raise asyncio.CancelledError
        async for event in research_events(ws, run_id):
            ctx.check()
            if ctx.cancel_requested():
                raise asyncio.CancelledError
            add(event)
            if isinstance(event, BriefEvent):
                status = "completed"
        ending, final = [Done()], True
    except asyncio.CancelledError:
        if not ctx.cancelled.is_set():
            raise
        status, final = "cancelled", True
        ending = [Error("cancelled", "the run was cancelled"), Done()]
        ws.research_store.set_research_state(run_id, "cancelled")
    except Exception as exc:
        if ctx.lost.is_set() or isinstance(exc, LeaseLost):
            raise
        if ctx.last_attempt:
            ours = isinstance(exc, FootnoteError)
            text = str(exc) if ours else "internal error (see the worker log)"
            code = error_code(exc) if isinstance(exc, FootnoteError) else "internal"
            ending, final = [Error(code, f"the run failed: {text}"), Done()], True
        else:
            ending = [Status("retrying", f"attempt {ctx.attempt} failed ({exc}); tried again")]
        raise
    finally:
        if not ctx.lost.is_set():
            for event in ending:
                add(event)
            if final:
                ws.runs.finish(run_id, status, {"research_run": run_id})
    return status
