"""Background jobs (ingest, research, eval) on one queue: embedded (SQLite) or distributed
(Redis), the same task code on both; see `jobs.queue` for the design."""

from footnote.jobs.base import FINAL, JobContext, JobRecord, JobState, LeaseLost, Ledger, Task
from footnote.jobs.queue import JobQueue, Worker

__all__ = [
    "FINAL",
    "JobContext",
    "JobQueue",
    "JobRecord",
    "JobState",
    "LeaseLost",
    "Ledger",
    "Task",
    "Worker",
]
