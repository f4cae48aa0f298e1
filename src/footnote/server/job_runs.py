"""Research runs worked by the job queue (`server.research_jobs`).

Such a run is a `research` job (`research:<run id>`): `footnote worker` processes, or this
server's own `jobs.server_threads`, execute it and persist its events in the store, which every
API replica shares. So a follower reads the store (from `Last-Event-ID`) and polls it until the
stream's `done` while the job is queued or running; a run restarts nothing when the API process
does, and none is marked orphaned while its job is alive. Cancellation goes through the ledger:
a queued job is dropped and its stream ended here; a running one is stopped by its worker,
which writes the ending. A job that ended without one (its worker lost on the last attempt) is
closed here, once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from footnote.events import Done, Error, Event
from footnote.jobs import FINAL, JobQueue
from footnote.server.runner import append_events
from footnote.store.base import EventStore, RunStore
from footnote.store.records import StoredEvent

log = logging.getLogger(__name__)
PREFIX = "research:"
POLL_S = 0.25


def job_of(run: dict[str, Any] | None) -> str | None:
    """The job id a run is worked under, or None (a run the API process drives itself)."""
    inp = run.get("input") if run else None
    job = inp.get("job") if isinstance(inp, dict) else None
    return str(job) if job else None


class JobRuns:
    """Start, follow and cancel runs that the job queue executes."""

    def __init__(self, queue: JobQueue, runs: RunStore, events: EventStore) -> None:
        self.queue, self.runs, self.events = queue, runs, events

    def job(self, run_id: str) -> str | None:
        """The run's job id, or None."""
        return job_of(self.runs.get_run(run_id))

    def alive(self, run_id: str) -> bool:
        """Whether the run is a job that is queued or running."""
        job = self.job(run_id)
        rec = self.queue.status(job) if job else None
        return rec is not None and rec.state not in FINAL

    def submit(self, run_id: str, user_id: str, *, resume: bool = False) -> str:
        """Queue the run as a job (again, from its last finished stage, with `resume`)."""
        job = PREFIX + run_id
        if self.runs.get_run(run_id) is None:
            self.runs.start(run_id, "research", {"research_run": run_id, "job": job},
                            user_id=user_id)  # fmt: skip
        self.queue.submit("research", {"run_id": run_id, "user_id": user_id}, job_id=job,
                          rerun=resume)  # fmt: skip
        return job

    def _append(self, run_id: str, ending: list[Event]) -> list[StoredEvent]:
        """End a run's stored stream with `ending` (nothing when another replica just did)."""
        try:
            return append_events(self.events, run_id, ending)
        except Exception as exc:  # a concurrent closer took these ids: its ending stands
            log.info("run %s: ending already written (%s)", run_id, exc)
            return []

    def cancel(self, run_id: str) -> str | None:
        """Ask the run's job to stop: `cancelled` (it had not started), `cancelling` (its
        worker stops it), or None when it was not queued or running."""
        job = self.job(run_id)
        was = self.queue.cancel(job) if job else None
        if was == "queued":
            self._append(run_id, [Error("cancelled", "the run was cancelled"), Done()])
            self.runs.finish(run_id, "cancelled", {"research_run": run_id})
            return "cancelled"
        return "cancelling" if was == "running" else None

    async def wait(self, run_id: str, timeout_s: float) -> bool:
        """Until the run's job is no longer alive (True) or `timeout_s` passed (False)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.alive(run_id):
            if loop.time() > deadline:
                return False
            await asyncio.sleep(POLL_S)
        return True

    def _close_lost(self, run_id: str) -> list[StoredEvent]:
        """The job ended with no `done` (its worker was lost on the last attempt)."""
        job = self.job(run_id)
        rec = self.queue.status(job) if job else None
        why = rec.error if rec is not None and rec.error else "its worker stopped"
        ending: list[Event] = [Error("interrupted", f"the run stopped: {why}; resume it"), Done()]
        stored = self._append(run_id, ending)
        if stored:
            self.runs.finish(run_id, "failed", {"research_run": run_id})
        return stored

    async def follow(
        self, run_id: str, after: int = 0, *, poll_s: float = POLL_S,
        alive: Callable[[str], bool] | None = None,
    ) -> AsyncIterator[StoredEvent]:  # fmt: skip
        """Every stored event with seq > `after`, then new ones as the worker stores them,
        until the stream's `done` once the job is over (a resumed run's earlier `done` is
        passed through)."""
        is_alive = alive or self.alive
        last = ""
        while True:
            got = self.events.events(run_id, after)
            for stored in got:
                yield stored
                after, last = stored.seq, stored.type
            if got:
                continue
            if is_alive(run_id):
                await asyncio.sleep(poll_s)
                continue
            rest = self.events.events(run_id, after)  # stored before the ledger said so
            if not rest and last != "done":
                rest = self._close_lost(run_id) or self.events.events(run_id, after)
            for stored in rest:
                yield stored
                after, last = stored.seq, stored.type
            if not rest or last == "done":
                return
