"""Runs execute as background tasks; every event is persisted, then handed to live followers.

A follower reads what it missed (after its `Last-Event-ID`) and then waits for new events,
from the live run's buffer when the run is active in this process, else from the store. The
run never depends on a follower: a client that disconnects loses nothing.

Token events (`answer_delta`, `thinking`) are written in batches (up to 64 events or 100 ms,
one transaction); every other event flushes at once, and the run is fully persisted before it
leaves the live table, so a store reader never sees a gap.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from footnote.events import Done, Error, Event, Final, event_data
from footnote.store.codec import answer_to_dict
from footnote.store.runs import RunStore
from footnote.store.sessions import SessionStore, StoredEvent

log = logging.getLogger(__name__)
EventsFactory = Callable[[], AsyncIterator[Event]]
BATCHED = frozenset({"answer_delta", "thinking"})
BATCH_EVENTS, BATCH_SECONDS = 64, 0.1


@dataclass
class LiveRun:
    """A run executing in this process: its buffered events and who may wait on them."""

    run_id: str
    user_id: str
    session_id: str | None
    events: list[StoredEvent] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    done: bool = False
    finished: bool = False
    output: dict[str, Any] | None = None
    unflushed: list[StoredEvent] = field(default_factory=list)
    oldest: float = 0.0


def encode(event: Event, run_id: str) -> str:
    """An event's JSON payload; `final` carries the public answer JSON."""
    if isinstance(event, Final):
        data: dict[str, Any] = {"answer": answer_to_dict(event.answer, run_id=run_id)}
    else:
        data = event_data(event)
    return json.dumps(data, ensure_ascii=False, default=str)


class RunHub:
    """Starts, cancels and streams runs."""

    def __init__(self, sessions: SessionStore, runs: RunStore) -> None:
        self.sessions = sessions
        self.runs = runs
        self.live: dict[str, LiveRun] = {}

    def start(
        self,
        run_id: str,
        kind: str,
        user_id: str,
        session_id: str | None,
        input: dict[str, Any],
        make_events: EventsFactory,
    ) -> LiveRun:
        """Record the run and drive its events in a background task."""
        self.runs.start(run_id, kind, input, user_id=user_id, session_id=session_id)
        live = LiveRun(run_id, user_id, session_id)
        self.live[run_id] = live
        live.task = asyncio.create_task(self._drive(live, make_events), name=run_id)
        return live

    def active(self, user_id: str, session_id: str) -> LiveRun | None:
        """The run in progress in a session, if any."""
        return next(
            (
                r
                for r in self.live.values()
                if r.user_id == user_id and r.session_id == session_id and not r.finished
            ),
            None,
        )

    def _emit(self, live: LiveRun, event: Event) -> None:
        stored = StoredEvent(len(live.events) + 1, event.type, encode(event, live.run_id))
        if not live.unflushed:
            live.oldest = time.monotonic()
        live.unflushed.append(stored)
        if (
            event.type not in BATCHED
            or len(live.unflushed) >= BATCH_EVENTS
            or time.monotonic() - live.oldest >= BATCH_SECONDS
        ):
            self._flush(live)
        live.events.append(stored)
        if isinstance(event, Final):
            live.output = json.loads(stored.data)["answer"]
        if isinstance(event, Done):
            live.done = True
        changed, live.changed = live.changed, asyncio.Event()
        changed.set()

    def _flush(self, live: LiveRun) -> None:
        if live.unflushed:
            self.sessions.add_events(live.run_id, live.unflushed)
            live.unflushed = []

    async def _drive(self, live: LiveRun, make_events: EventsFactory) -> None:
        status = "failed"
        try:
            events = make_events()
            try:
                async for event in events:
                    self._emit(live, event)
            finally:
                close = getattr(events, "aclose", None)
                if close is not None:
                    await close()
            status = "completed"
        except asyncio.CancelledError:
            status = "cancelled"
            self._emit(live, Error("cancelled", "the run was cancelled"))
        except Exception as exc:
            log.exception("run %s failed", live.run_id)
            self._emit(live, Error("internal", f"the run failed: {type(exc).__name__}: {exc}"))
        finally:
            if not live.done:
                self._emit(live, Done())
            self._flush(live)
            self.runs.finish(live.run_id, status, live.output)
            live.finished = True
            self.live.pop(live.run_id, None)
            live.changed.set()

    def cancel(self, run_id: str) -> bool:
        """Ask a live run to stop; False when it is not running here."""
        live = self.live.get(run_id)
        if live is None or live.task is None or live.finished:
            return False
        live.task.cancel()
        return True

    async def wait(self, run_id: str) -> None:
        """Until the run has finished (returns at once when it is not live)."""
        live = self.live.get(run_id)
        if live is not None and live.task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(live.task)

    async def follow(self, run_id: str, after: int = 0) -> AsyncIterator[StoredEvent]:
        """Every event with seq > `after`, then live ones, until `done`."""
        while True:
            live = self.live.get(run_id)
            if live is None:
                for stored in self.sessions.events(run_id, after):
                    yield stored
                return
            changed = live.changed
            for stored in live.events[after:]:
                yield stored
                after = stored.seq
            if live.finished and after >= len(live.events):
                return
            if len(live.events) <= after:
                await changed.wait()

    async def shutdown(self) -> None:
        """Cancel every live run and wait for them to record it."""
        tasks = [r.task for r in self.live.values() if r.task is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
