"""Fair ingestion of uploads: each user's uploads wait in a queue of their own, one upload of a
user is ingested at a time, and up to `server.ingest_workers` uploads of different users run
side by side. A free slot goes to the waiting user served longest ago (a user never served
first; round-robin among users who keep uploading), so one user's large or hostile files hold
at most one slot and another user's small upload waits for a free slot at most, never behind
the rest of someone else's queue.

An upload reaches the job queue (`jobs.url`, an `ingest` job) only when its turn comes; the
job queue keeps what it always kept (leases, retries, remote workers). A scheduler thread
polls the jobs in flight and frees a slot when one ends; a cancelled upload leaves its queue at
once, and one already in flight keeps its slot until its job ends (its output is discarded by
the task: `workspace.jobs.ingest_task`).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from footnote.jobs import JobQueue
from footnote.jobs.base import FINAL, JobRecord

log = logging.getLogger(__name__)


@dataclass
class Upload:
    """One upload waiting for (or holding) a slot."""

    source_id: str
    user_id: str
    job_id: str
    payload: dict[str, Any]
    cancelled: bool = False


@dataclass
class FairIngest:
    """Per-user queues, round-robin dispatch onto the job queue, `slots` jobs in flight at most.

    `on_start(upload)` runs when an upload gets its slot, before its job is queued (False: it is
    not wanted any more, skip it); `on_end(upload, record)` when its job ended (record None when
    the ledger lost it)."""

    queue: JobQueue
    slots: int
    on_start: Callable[[Upload], bool]
    on_end: Callable[[Upload, JobRecord | None], None]
    poll_s: float = 0.05
    waiting: dict[str, deque[Upload]] = field(default_factory=dict)
    """Uploads not yet dispatched, by user, oldest first."""
    turns: deque[str] = field(default_factory=deque)
    """Users with uploads waiting, in the order they started waiting."""
    served: dict[str, int] = field(default_factory=dict)
    """When each user last got a slot (a count of slots given)."""
    running: dict[str, Upload] = field(default_factory=dict)
    """Uploads in flight, by source id."""
    _given: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _wake: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def add(self, upload: Upload) -> None:
        """Queue an upload behind its user's others (nothing when it is queued or in flight)."""
        with self._lock:
            if self._holds(upload.source_id):
                return
            mine = self.waiting.setdefault(upload.user_id, deque())
            mine.append(upload)
            if upload.user_id not in self.turns:
                self.turns.append(upload.user_id)
        self._wake.set()

    def cancel(self, source_id: str) -> bool:
        """Forget an upload: taken out of its queue, or (in flight) no longer reported; whether
        it was held."""
        with self._lock:
            held = self.running.get(source_id)
            if held is not None and not held.cancelled:
                held.cancelled = True
                return True
            for user, mine in self.waiting.items():
                for upload in mine:
                    if upload.source_id == source_id:
                        mine.remove(upload)
                        if not mine:
                            self._drop_user(user)
                        return True
        return False

    def holds(self, source_id: str) -> bool:
        """Whether the upload waits for a slot or is in flight (and was not cancelled)."""
        with self._lock:
            return self._holds(source_id)

    def _holds(self, source_id: str) -> bool:
        held = self.running.get(source_id)
        if held is not None:
            return not held.cancelled
        return any(u.source_id == source_id for q in self.waiting.values() for u in q)

    def _drop_user(self, user: str) -> None:
        self.waiting.pop(user, None)
        if user in self.turns:
            self.turns.remove(user)

    def step(self) -> None:
        """One round: free the slots of ended jobs, then fill free slots in turn."""
        with self._lock:
            flying = list(self.running.values())
        for upload in flying:
            record = self.queue.status(upload.job_id)
            if record is not None and record.state not in FINAL:
                continue
            with self._lock:
                self.running.pop(upload.source_id, None)
            if not upload.cancelled:
                try:
                    self.on_end(upload, record)
                except Exception:
                    log.exception("upload %s: recording its end failed", upload.source_id)
        while (turn := self._next()) is not None:
            try:
                wanted = self.on_start(turn)
                if wanted:
                    self.queue.submit("ingest", turn.payload, job_id=turn.job_id, rerun=True)
            except Exception:
                log.exception("upload %s: could not be started", turn.source_id)
                wanted = False
            if not wanted:
                with self._lock:
                    self.running.pop(turn.source_id, None)

    def _next(self) -> Upload | None:
        """The next user's oldest upload, moved in flight, when a slot is free."""
        with self._lock:
            if len(self.running) >= self.slots:
                return None
            busy = {u.user_id for u in self.running.values()}
            ready = [user for user in self.turns if user not in busy]
            if not ready:
                return None
            user = min(ready, key=lambda u: self.served.get(u, -1))  # stable: first waiting
            self._given += 1
            self.served[user] = self._given
            mine = self.waiting[user]
            upload = mine.popleft()
            if not mine:
                self._drop_user(user)
            self.running[upload.source_id] = upload
            return upload

    def start(self) -> None:
        """Run the scheduler in a background thread (once)."""
        with self._lock:
            if self._thread is not None:
                return
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="footnote-ingest", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop dispatching (jobs in flight go on in their workers)."""
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(5)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()  # an upload added from here on wakes the next wait
            try:
                self.step()
            except Exception:  # the ledger is unreachable: next round
                log.exception("ingest scheduler round failed")
            self._wake.wait(self.poll_s if self.running else 1.0)
