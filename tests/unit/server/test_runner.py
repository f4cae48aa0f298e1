"""The run hub: events persisted before followers see them; resume is exact; cancel ends cleanly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from footnote.events import AnswerDelta, Done, Event
from footnote.server.runner import RunHub
from footnote.store.sqlite import (
    SqliteEventStore,
    SqliteRunStore,
    SqliteStore,
)


def _hub(tmp_path: Path) -> tuple[RunHub, SqliteEventStore]:
    store = SqliteStore(tmp_path / "f.db")
    events = SqliteEventStore(store)
    return RunHub(events, SqliteRunStore(store)), events


async def _slow(n: int, gate: asyncio.Event | None = None) -> AsyncIterator[Event]:
    for i in range(n):
        if gate is not None and i == n // 2:
            await gate.wait()
        await asyncio.sleep(0)
        yield AnswerDelta(f"w{i}")
    yield Done()


async def test_follower_that_leaves_and_resumes_gets_every_event_once(tmp_path: Path) -> None:
    hub, sessions = _hub(tmp_path)
    gate = asyncio.Event()
    hub.start("run_1", "chat", "u", None, {}, lambda: _slow(20, gate))
    first = []
    async for ev in hub.follow("run_1"):
        first.append(ev)
        if len(first) == 4:
            break  # the client disconnects; the run goes on
    gate.set()
    resumed = [ev async for ev in hub.follow("run_1", after=first[-1].seq)]
    await hub.wait("run_1")
    stored = sessions.events("run_1")
    assert first + resumed == stored
    assert [e.seq for e in stored] == list(range(1, 22)) and stored[-1].type == "done"
    # after the run: served from the store alone
    assert [e async for e in hub.follow("run_1", after=18)] == stored[18:]


async def test_cancel_emits_error_and_done(tmp_path: Path) -> None:
    hub, sessions = _hub(tmp_path)
    never = asyncio.Event()
    hub.start("run_2", "chat", "u", None, {}, lambda: _slow(10, never))
    await asyncio.sleep(0.05)
    assert hub.cancel("run_2")
    await hub.wait("run_2")
    events = sessions.events("run_2")
    assert [e.type for e in events[-2:]] == ["error", "done"]
    assert '"cancelled"' in events[-2].data
    assert hub.runs.get_run("run_2")["status"] == "cancelled"  # type: ignore[index]
    assert not hub.cancel("run_2")


async def test_an_internal_failure_keeps_its_text_inside(tmp_path: Path) -> None:
    """Issue #15: a run's unexpected exception reached clients verbatim (paths, SQL, keys)."""
    hub, events = _hub(tmp_path)

    async def broken() -> AsyncIterator[Event]:
        yield AnswerDelta("partial")
        raise RuntimeError("sqlite3 at /srv/secret/path.db: token fn_abc123")

    hub.start("run_x", "chat", "u", None, {}, broken)
    await hub.wait("run_x")
    stored = events.events("run_x")
    assert [e.type for e in stored][-2:] == ["error", "done"]
    assert "secret" not in stored[-2].data and "fn_abc123" not in stored[-2].data
    assert '"internal"' in stored[-2].data


async def test_a_failing_store_write_at_the_end_never_keeps_the_in_flight_slot(
    tmp_path: Path,
) -> None:
    """Found by the quota suite: when recording the run's ending raised, the run stayed live
    and its user's in-flight slot stayed taken for good."""
    hub, _ = _hub(tmp_path)

    def broken_finish(*_a: object, **_k: object) -> None:
        raise OSError("disk full")

    hub.runs.finish = broken_finish  # type: ignore[method-assign]
    hub.start("run_9", "chat", "u", None, {}, lambda: _slow(3))
    await hub.wait("run_9")
    await asyncio.sleep(0)
    assert hub.in_flight("u") == 0 and "run_9" not in hub.live
