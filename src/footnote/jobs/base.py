"""What a job is: its record in the ledger, the ledger's protocol, and the context a task runs in.

A job is a task name and a JSON payload. The ledger (SQLite or Redis, beside the queue) keeps
each job's state, its attempts, the lease of the worker running it and the stages it finished;
the queue only carries job ids. A task reruns safely: `JobContext.stage` returns a finished
stage's recorded value instead of running it again, and every task's own writes are idempotent
(content-hashed sources, research artifacts by stage, eval cases by id).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from footnote.errors import FootnoteError

JobState = Literal["queued", "running", "done", "failed"]
FINAL: frozenset[str] = frozenset({"done", "failed"})
CANCEL_STAGE = "__cancel__"
"""The stage a cancel request of a running job is recorded as (no task stage has this name)."""
CANCELLED = "cancelled"
"""The error of a job cancelled before a worker took it."""
T = TypeVar("T")


class LeaseLost(FootnoteError):
    """This worker's claim on the job expired and another worker may have it: stop at once."""


@dataclass(frozen=True)
class JobRecord:
    """One job as the ledger holds it."""

    id: str
    task: str
    payload: dict[str, Any]
    state: JobState
    attempts: int = 0
    worker: str = ""
    lease_until: float = 0.0
    result: dict[str, Any] | None = None
    error: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0


def dumps(value: Any) -> str:
    """JSON of a payload, result or stage value (non-JSON values are refused early)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class Ledger(Protocol):
    """Job records, leases and stage checkpoints, shared by every worker of one queue.

    Every method that changes a running job names the worker; it changes nothing (and says
    False) when another worker holds the job now."""

    def create(self, job_id: str, task: str, payload: dict[str, Any], now: float) -> bool:
        """Record a queued job; False (nothing changed) when the id exists."""
        ...

    def get(self, job_id: str) -> JobRecord | None:
        """The job, or None."""
        ...

    def claim(self, job_id: str, worker: str, lease_s: float, now: float) -> int | None:
        """Take a queued job (or one whose lease expired): its attempt number, or None when it
        is finished or another worker's lease on it is live."""
        ...

    def renew(self, job_id: str, worker: str, lease_s: float, now: float) -> bool:
        """Extend the worker's lease; False when the worker no longer holds the job."""
        ...

    def finish(self, job_id: str, worker: str, result: dict[str, Any], now: float) -> bool:
        """Mark the job done with its result."""
        ...

    def release(self, job_id: str, worker: str, error: str, fail: bool, now: float) -> bool:
        """After an error: back to `queued` for another try, or `failed` when `fail`."""
        ...

    def expired(self, now: float) -> list[str]:
        """Ids of running jobs whose lease ran out (their worker died or hangs)."""
        ...

    def requeue(self, job_id: str, max_attempts: int, now: float) -> JobState | None:
        """Hand back a job whose lease expired: `queued` (send it again) or `failed` when it
        used all its attempts; None when it is not expired any more (another reaper won)."""
        ...

    def stale(self, before: float) -> list[str]:
        """Ids of queued jobs unchanged since `before` (their message may have been lost)."""
        ...

    def touch(self, job_id: str, now: float) -> bool:
        """Mark a queued job as sent again now; False when it is no longer queued."""
        ...

    def reset(self, job_id: str, now: float) -> bool:
        """Make a finished (done or failed) job queued again with no attempts and no stages;
        False when it is not finished."""
        ...

    def stages(self, job_id: str) -> dict[str, Any]:
        """The job's finished stages and their recorded values."""
        ...

    def put_stage(self, job_id: str, worker: str, stage: str, value: Any, now: float) -> bool:
        """Record a finished stage; False (nothing recorded) when the worker lost the job."""
        ...

    def cancel(self, job_id: str, now: float) -> JobState | None:
        """Ask the job to stop: a queued one is failed at once (error `cancelled`) and says
        `queued`; a running one gets the `CANCEL_STAGE` mark its worker polls and says
        `running`; None when it is finished or unknown."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


Clock = Callable[[], float]


@dataclass
class JobContext:
    """What a running task sees of its job: its id and attempt, and stage checkpoints."""

    job_id: str
    attempt: int
    worker: str
    ledger: Ledger
    clock: Clock
    lost: threading.Event = field(default_factory=threading.Event)
    last_attempt: bool = True
    """No further try follows when this one fails (so a task may write its ending)."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    on_cancel: Callable[[], None] | None = None
    """Called once (from the heartbeat thread) when a cancel request is seen."""
    _done: dict[str, Any] | None = None

    def cancel_requested(self) -> bool:
        """Whether the job was asked to stop (`JobQueue.cancel`); reads the ledger until it was."""
        if not self.cancelled.is_set() and CANCEL_STAGE in self.ledger.stages(self.job_id):
            self.cancelled.set()
        return self.cancelled.is_set()

    def check(self) -> None:
        """Raise `LeaseLost` when this worker no longer holds the job."""
        if self.lost.is_set():
            raise LeaseLost(f"job {self.job_id}: the lease was lost; another worker resumes it")

    def finished(self) -> dict[str, Any]:
        """Stages an earlier attempt (or this one) finished, with their values."""
        if self._done is None:
            self._done = self.ledger.stages(self.job_id)
        return self._done

    def stage(self, name: str, run: Callable[[], T]) -> T:
        """`run()` once per job: a stage an earlier attempt finished returns its recorded
        (JSON) value; a finished stage is recorded before the next one starts."""
        self.check()
        done = self.finished()
        if name in done:
            value: T = done[name]
            return value
        value = run()
        self.check()
        if not self.ledger.put_stage(self.job_id, self.worker, name, value, self.clock()):
            self.lost.set()
            self.check()
        done[name] = value
        return value


Task = Callable[[dict[str, Any], JobContext], dict[str, Any]]
"""`task(payload, context) -> result`: a job's work; the result is JSON."""
