"""The job queue: huey carries job ids, the ledger makes each job run to the end exactly once.

Why huey: it is small (one pure-Python package, no broker daemon of its own), it has the two
storages footnote needs behind one API — SQLite for the embedded workspace and Redis for the
distributed one — so both run the same task code, and its consumer brings worker threads,
delayed retries, graceful shutdown and worker health checks. Celery needs a broker and a result
backend and brings far more than three task kinds; arq and Dramatiq have no SQLite storage, so
the embedded path would be a second code path.

What huey does not do is redeliver a message whose worker died: it pops the message when a
worker takes it. So the queue keeps a ledger (`jobs.ledger`) beside it: a worker claims the job
there with a lease it renews while it runs; a reaper in every worker hands a job whose lease ran
out back to the queue (once, atomically) until `max_attempts`; a duplicate delivery finds the
job claimed or finished and does nothing. Tasks record stage checkpoints (`JobContext.stage`)
and write idempotently, so a retried job skips what was finished and duplicates nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

from footnote.errors import NotFound, UsageError
from footnote.jobs.base import (
    FINAL,
    Clock,
    JobContext,
    JobRecord,
    JobState,
    LeaseLost,
    Ledger,
    Task,
)

log = logging.getLogger(__name__)
HUEY_TASK = "footnote.job"


class JobQueue:
    """Submit jobs, read their state and results, and work them (`worker`)."""

    def __init__(
        self,
        huey: Any,
        ledger: Ledger,
        *,
        url: str,
        lease_s: float = 30.0,
        max_attempts: int = 3,
        retry_delay_s: float = 5.0,
        workers: int = 2,
        clock: Clock = time.time,
    ) -> None:
        self.huey = huey
        self.ledger = ledger
        self.url = url
        """The queue URL it was opened from (`jobs.url`, resolved)."""
        self.lease_s = lease_s
        self.max_attempts = max_attempts
        self.retry_delay_s = retry_delay_s
        self.workers = workers
        """Jobs one worker runs at once unless `worker()` is told otherwise."""
        self.clock = clock
        self.tasks: dict[str, Task] = {}
        self.running = 0
        """Jobs this process is executing now."""
        self._count = threading.Lock()
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._send = huey.task(name=HUEY_TASK)(self._execute)

    def register(self, name: str, task: Task) -> None:
        """Make a task runnable by this process's workers (producers need not register)."""
        self.tasks[name] = task

    def submit(
        self, task: str, payload: dict[str, Any], *, job_id: str | None = None, rerun: bool = False
    ) -> str:
        """Queue a job; its id. Submitting an existing `job_id` again queues nothing (a job is
        keyed by what it does, e.g. the file's hash, to make submission idempotent), unless
        `rerun` and the job has finished: then it runs again from its first stage."""
        job_id = job_id or uuid.uuid4().hex
        now = self.clock()
        if self.ledger.create(job_id, task, payload, now) or (
            rerun and self.ledger.reset(job_id, now)
        ):
            self._send(job_id)
        return job_id

    def status(self, job_id: str) -> JobRecord | None:
        """The job's record (state, attempts, result or error), or None."""
        return self.ledger.get(job_id)

    def wait(self, job_id: str, timeout_s: float | None = None, poll_s: float = 0.1) -> JobRecord:
        """The job once it is done or failed (raises `UsageError` after `timeout_s`)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            rec = self.ledger.get(job_id)
            if rec is None:
                raise NotFound(f"no job {job_id!r}")
            if rec.state in FINAL:
                return rec
            if deadline is not None and time.monotonic() > deadline:
                raise UsageError(f"job {job_id} still {rec.state} after {timeout_s:g} s")
            time.sleep(poll_s)

    def result(self, job_id: str, timeout_s: float | None = None) -> dict[str, Any] | None:
        """The job's result when it finished (None when it failed)."""
        rec = self.wait(job_id, timeout_s)
        return rec.result if rec.state == "done" else None

    def cancel(self, job_id: str) -> JobState | None:
        """Ask a job to stop (`Ledger.cancel`): `queued` (it will not run), `running` (its
        worker stops it within a third of `lease_s`, or at the task's next check), or None
        when it had finished."""
        return self.ledger.cancel(job_id, self.clock())

    def pending(self) -> int:
        """Messages waiting in the queue (scheduled retries not counted)."""
        return int(self.huey.pending_count())

    # -- working -------------------------------------------------------------------------
    def _execute(self, job_id: str) -> None:
        """One delivery of a job: claim, run with a renewed lease, record the outcome."""
        rec = self.ledger.get(job_id)
        if rec is None or rec.state in FINAL:
            return
        task = self.tasks.get(rec.task)
        if task is None:  # e.g. an eval job taken by the API server: leave it to a worker
            log.info("job %s: task %r is not run by this process; sent back", job_id, rec.task)
            self._send.schedule((job_id,), delay=max(1.0, self.retry_delay_s))
            return
        holder = f"{self.worker_id}/{uuid.uuid4().hex[:6]}"  # this delivery, even in-process
        attempt = self.ledger.claim(job_id, holder, self.lease_s, self.clock())
        if attempt is None:  # a duplicate delivery: the job is held or finished
            return
        with self._count:
            self.running += 1
        try:
            self._run(rec, task, attempt, holder)
        finally:
            with self._count:
                self.running -= 1

    def _run(self, rec: JobRecord, task: Task, attempt: int, holder: str) -> None:
        job_id = rec.id
        ctx = JobContext(job_id, attempt, holder, self.ledger, self.clock,
                         last_attempt=attempt >= self.max_attempts)  # fmt: skip
        stop = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(ctx, stop), daemon=True)
        beat.start()
        try:
            result = task(rec.payload, ctx)
        except LeaseLost:
            log.warning("job %s: lease lost on attempt %d; left to its new worker", job_id, attempt)
            return
        except Exception as exc:
            final = attempt >= self.max_attempts
            log.warning("job %s (%s) attempt %d failed: %s", job_id, rec.task, attempt, exc,
                        exc_info=not isinstance(exc, UsageError | NotFound))  # fmt: skip
            error = f"{type(exc).__name__}: {exc}"
            if self.ledger.release(job_id, holder, error, final, self.clock()) and not final:
                self._send.schedule((job_id,), delay=self.retry_delay_s)
            return
        finally:
            stop.set()
            beat.join()
        if not self.ledger.finish(job_id, holder, result, self.clock()):
            log.warning("job %s: finished after its lease was lost", job_id)

    def _heartbeat(self, ctx: JobContext, stop: threading.Event) -> None:
        while not stop.wait(self.lease_s / 3):
            try:
                held = self.ledger.renew(ctx.job_id, ctx.worker, self.lease_s, self.clock())
            except Exception as exc:  # the ledger is unreachable: try again next beat
                log.warning("job %s: lease not renewed (%s)", ctx.job_id, exc)
                continue
            if not held:
                ctx.lost.set()
                return
            try:
                asked = not ctx.cancelled.is_set() and ctx.cancel_requested()
            except Exception as exc:
                log.warning("job %s: cancel request unknown (%s)", ctx.job_id, exc)
                continue
            if asked and ctx.on_cancel is not None:
                log.info("job %s: cancel requested; stopping it", ctx.job_id)
                ctx.on_cancel()

    def reap(self) -> list[str]:
        """Hand every job whose lease expired back to the queue (or fail it after its last
        attempt), and send again a job left queued with no message; the ids sent again."""
        sent = []
        now = self.clock()
        for job_id in self.ledger.expired(now):
            state = self.ledger.requeue(job_id, self.max_attempts, now)
            if state == "queued":
                log.warning("job %s: its worker was lost; queued again", job_id)
                self._send(job_id)
                sent.append(job_id)
            elif state == "failed":
                log.error("job %s: its worker was lost on the last attempt; failed", job_id)
        if not self.pending() and not self.huey.scheduled_count():
            # nothing waits in the queue, yet these jobs stayed queued for a whole lease: a
            # worker died between taking the message and claiming the job; send them again
            for job_id in self.ledger.stale(now - self.lease_s):
                if self.ledger.touch(job_id, now):
                    log.warning("job %s: its message was lost; sent again", job_id)
                    self._send(job_id)
                    sent.append(job_id)
        return sent

    def worker(self, threads: int | None = None) -> Worker:
        """A worker over this queue running `threads` (default `workers`) jobs at once (`start`
        it in the background, or `run` it in the foreground)."""
        return Worker(self, threads or self.workers)

    def close(self) -> None:
        """Release the queue's connections."""
        self.ledger.close()
        self.huey.storage.close()


class Worker:
    """Huey's consumer (threads) plus the reaper; in the foreground it stops on SIGINT/SIGTERM
    (graceful: running jobs finish) and `idle_exit_s` ends it once the queue stayed empty."""

    def __init__(self, queue: JobQueue, threads: int) -> None:
        from huey.consumer import Consumer

        worker = self

        class _Consumer(Consumer):  # type: ignore[misc]
            def _set_signal_handlers(self) -> None:
                # only a foreground worker (`footnote worker`) owns the signals: in a server the
                # handlers would replace uvicorn's, and SIGTERM would never stop the server
                if worker.foreground and threading.current_thread() is threading.main_thread():
                    super()._set_signal_handlers()

        self.foreground = False
        """Set by `run`: the worker owns SIGINT/SIGTERM."""
        self.queue = queue
        self.stopping = threading.Event()
        self.consumer = _Consumer(
            queue.huey, workers=threads, worker_type="thread", periodic=False,
            initial_delay=0.05, backoff=1.5, max_delay=1.0, graceful_signal="TERM",
        )  # fmt: skip
        self._reaper = threading.Thread(target=self._reap_loop, name="footnote-reaper", daemon=True)

    def _reap_loop(self) -> None:
        interval = max(0.2, min(self.queue.lease_s / 2, 5.0))
        while not self.stopping.wait(interval):
            try:
                self.queue.reap()
            except Exception as exc:  # the ledger is unreachable: next round
                log.warning("reaper: %s", exc)

    def start(self) -> None:
        """Run in background threads (the server's embedded workers)."""
        self.consumer.start()
        self._reaper.start()

    def stop(self, graceful: bool = True) -> None:
        """Stop taking jobs; with `graceful`, wait for the running ones."""
        self.stopping.set()
        self.consumer.stop(graceful=graceful)

    def run(self, idle_exit_s: float | None = None) -> None:
        """Work in the foreground until a signal (or `idle_exit_s` seconds with nothing queued
        and nothing running)."""
        from huey.consumer import ConsumerStopped

        self.foreground = True
        self.start()
        idle_since = checked = time.monotonic()
        q = self.queue
        try:
            while True:
                try:
                    checked = self.consumer.loop(checked)
                except ConsumerStopped:
                    break
                if idle_exit_s is None:
                    continue
                if (
                    q.running
                    or q.pending()
                    or q.huey.scheduled_count()
                    or q.ledger.expired(q.clock())
                ):
                    idle_since = time.monotonic()
                elif time.monotonic() - idle_since >= idle_exit_s:
                    self.stop(graceful=True)
                    break
        finally:
            self.stopping.set()
