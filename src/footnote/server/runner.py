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
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from footnote.errors import FootnoteError, error_code
from footnote.events import BriefEvent, Done, Error, Event, Final
from footnote.serialize import event_to_dict
from footnote.server.relay import ALL_USERS, LeaseKeeper, RedisRelay
from footnote.store.base import EventStore, RunStore
from footnote.store.records import StoredEvent

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
    abandoned: bool = False
    """Another replica closed this run (its lease was judged lost): write nothing more."""


def encode(event: Event, run_id: str) -> str:
    """An event's JSON payload (`serialize.event_to_dict`: `final` and `brief` carry their
    public contracts)."""
    return json.dumps(event_to_dict(event, run_id=run_id), ensure_ascii=False, default=str)


def append_events(store: EventStore, run_id: str, events: list[Event]) -> list[StoredEvent]:
    """Store `events` after a run's persisted ones (ids continue); what was stored."""
    seq = len(store.events(run_id))
    stored = [StoredEvent(seq + i + 1, e.type, encode(e, run_id)) for i, e in enumerate(events)]
    store.add_events(run_id, stored)
    return stored


class RunHub:
    """Starts, cancels and streams runs."""

    def __init__(self, events: EventStore, runs: RunStore, relay: RedisRelay | None = None) -> None:
        self.events = events
        self.runs = runs
        self.relay = relay
        """Set when API replicas share the store: runs stream through Redis to any replica."""
        self.live: dict[str, LiveRun] = {}
        self.outside: dict[str, int] = {}
        """Runs executing in this process outside the hub (MCP tool calls), per user."""
        self.keeper = (
            LeaseKeeper(relay, self._leased, self._lost_elsewhere) if relay is not None else None
        )

    def _leased(self) -> list[tuple[str, str]]:
        """(run id, user id) of the runs executing here (read from the lease thread)."""
        return [(r.run_id, r.user_id) for r in list(self.live.values()) if not r.finished]

    def _lost_elsewhere(self, run_id: str) -> None:
        """Another replica closed a run executing here: stop it, writing nothing more."""
        live = self.live.get(run_id)
        if live is None or live.task is None or live.finished:
            return
        log.warning("run %s: closed by another replica; stopping it here", run_id)
        live.abandoned = True
        live.task.get_loop().call_soon_threadsafe(live.task.cancel)

    def _lease(self, run_id: str, user_id: str) -> None:
        """Take the run's lease and keep it renewed while it executes here."""
        if self.relay is None or self.keeper is None:
            return
        try:
            self.relay.reopen(run_id)
            self.relay.hold(run_id, user_id)
        except Exception as exc:  # the keeper retries; followers elsewhere poll
            log.warning("run %s: lease not taken (%s)", run_id, exc)
        self.keeper.start()

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
        self._lease(run_id, user_id)
        live = LiveRun(run_id, user_id, session_id)
        self.live[run_id] = live
        live.task = asyncio.create_task(self._drive(live, make_events), name=run_id)
        return live

    def resume(self, run_id: str, user_id: str, make_events: EventsFactory) -> LiveRun:
        """Drive a recorded run again (a research run resumes where it stopped); its new
        events follow the stored ones (ids continue, after the earlier `done`)."""
        live = LiveRun(run_id, user_id, None, events=list(self.events.events(run_id)))
        self._lease(run_id, user_id)
        self.live[run_id] = live
        live.task = asyncio.create_task(self._drive(live, make_events), name=run_id)
        return live

    @contextlib.contextmanager
    def hold(self, user_id: str) -> Iterator[None]:
        """Count a run executing outside the hub (an MCP tool call) as in flight while it runs."""
        self.outside[user_id] = self.outside.get(user_id, 0) + 1
        try:
            yield
        finally:
            self.outside[user_id] -= 1
            if not self.outside[user_id]:
                del self.outside[user_id]

    def in_flight(self, user_id: str) -> int:
        """How many of the user's runs (`ALL_USERS`: of everyone) are executing: on every
        replica when runs are relayed
        (the Redis lease count; this process's own when Redis cannot be reached)."""
        here = sum(
            1
            for r in self.live.values()
            if (user_id == ALL_USERS or r.user_id == user_id) and not r.finished
        )
        here += sum(self.outside.values()) if user_id == ALL_USERS else self.outside.get(user_id, 0)
        if self.relay is None:
            return here
        try:
            return max(here, self.relay.in_flight(user_id))
        except Exception as exc:
            log.warning("runs in flight of %s counted on this replica only (%s)", user_id, exc)
            return here

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
        if live.abandoned:
            return
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
        elif isinstance(event, BriefEvent):
            live.output = {"research_run": live.run_id, "wrapped_up": event.brief.wrapped_up}
        if isinstance(event, Done):
            live.done = True
        changed, live.changed = live.changed, asyncio.Event()
        changed.set()

    def _flush(self, live: LiveRun) -> None:
        if live.unflushed and self.relay is not None and not live.abandoned:
            try:  # checked before every write: a closed stream gets nothing after its `done`
                if self.relay.closed_elsewhere(live.run_id):
                    self._lost_elsewhere(live.run_id)
            except Exception as exc:
                log.warning("run %s: close flag unknown (%s)", live.run_id, exc)
        if live.abandoned:
            live.unflushed = []
        if live.unflushed:
            self.events.add_events(live.run_id, live.unflushed)
            if self.relay is not None:  # persisted first: a follower never sees a gap
                try:
                    self.relay.publish(live.run_id, live.unflushed)
                except Exception as exc:  # followers elsewhere fall back to the store
                    log.warning("run %s: events not relayed (%s)", live.run_id, exc)
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
        except FootnoteError as exc:  # ours: the message says what happened, nothing internal
            log.warning("run %s failed: %s", live.run_id, exc)
            self._emit(live, Error(error_code(exc), f"the run failed: {exc}"))
        except Exception:
            log.exception("run %s failed", live.run_id)
            self._emit(live, Error("internal", "the run failed: internal error (see the trace "
                                   "and the server log)"))  # fmt: skip
        finally:
            try:
                if not live.done:
                    self._emit(live, Done())
                self._flush(live)
                if not live.abandoned:  # else the replica that closed it recorded the ending
                    self.runs.finish(live.run_id, status, live.output)
            except Exception:  # the ending could not be recorded: logged; the slot is freed
                log.exception("run %s: recording its ending failed", live.run_id)
            finally:
                if self.relay is not None:
                    with contextlib.suppress(Exception):
                        self.relay.release(live.run_id, live.user_id)
                live.finished = True
                self.live.pop(live.run_id, None)
                live.changed.set()

    def close_orphan(self, run_id: str) -> None:
        """End the stored stream of a run a previous process left unfinished: an `error`
        (code `interrupted`) and `done` after the events it had persisted."""
        append_events(self.events, run_id, [
            Error("interrupted", "the server stopped while this run was in progress; ask again"),
            Done(),
        ])  # fmt: skip

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

    def running_elsewhere(self, run_id: str) -> bool:
        """Whether another replica is executing the run (its lease is held). A `running` run
        whose lease expired lost its replica: it is closed here, once across replicas."""
        if self.relay is None or run_id in self.live:
            return False
        run = self.runs.get_run(run_id)
        if run is None or run["status"] not in ("queued", "running"):
            return False
        try:
            if self.relay.alive(run_id):
                return True
            closing = self.relay.claim_close(run_id)
        except Exception as exc:  # Redis down: treat the run as elsewhere while it runs
            log.warning("run %s: lease unknown (%s)", run_id, exc)
            return True
        if not closing:  # another replica is closing it: wait for its ending
            return True
        self.close_orphan(run_id)
        self.runs.finish(run_id, "failed", None)
        return False

    async def _follow_remote(self, run_id: str, after: int) -> AsyncIterator[StoredEvent]:
        """A run executing on another replica: the store after `after`, then its stream."""
        assert self.relay is not None
        for stored in self.events.events(run_id, after):
            yield stored
            after = stored.seq
            if stored.type == "done":
                return
        while True:
            try:
                got = await self.relay.read(run_id, after, block_ms=1000)
            except Exception as exc:  # Redis down: poll the store instead
                log.warning("run %s: relay unavailable (%s)", run_id, exc)
                await asyncio.sleep(0.5)
                got = self.events.events(run_id, after)
            for stored in got:
                if stored.seq <= after:
                    continue
                yield stored
                after = stored.seq
                if stored.type == "done":
                    return
            if not got and not self.running_elsewhere(run_id):
                for stored in self.events.events(run_id, after):
                    yield stored
                return

    async def follow(self, run_id: str, after: int = 0) -> AsyncIterator[StoredEvent]:
        """Every event with seq > `after`, then live ones, until `done` (from whichever
        replica executes the run, when a relay is set)."""
        while True:
            live = self.live.get(run_id)
            if live is None:
                if self.running_elsewhere(run_id):
                    async for stored in self._follow_remote(run_id, after):
                        yield stored
                    return
                for stored in self.events.events(run_id, after):
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
        if self.keeper is not None:
            self.keeper.stop()
        tasks = [r.task for r in self.live.values() if r.task is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
