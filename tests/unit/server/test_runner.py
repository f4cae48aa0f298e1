"""The run hub: events persisted before followers see them; resume is exact; cancel ends cleanly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from footnote.events import AnswerDelta, Done, Event
from footnote.server.runner import RunHub
from footnote.store import SqliteStore
from footnote.store.runs import RunStore
from footnote.store.sessions import SessionStore


def _hub(tmp_path: Path) -> tuple[RunHub, SessionStore]:
    store = SqliteStore(tmp_path / "f.db")
    sessions = SessionStore(store)
    return RunHub(sessions, RunStore(store)), sessions


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
