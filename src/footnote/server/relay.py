"""Run events across API replicas: a Redis stream per run and a lease per live run.

The replica driving a run persists each batch of events in the store, then appends it to
the stream `footnote:run:<id>` with stream ids `<seq>-0`, and keeps the lease
`footnote:lease:<id>` alive while the run executes. Any replica can then follow any run: it
replays the store after `Last-Event-ID`, then blocks on the stream (`XREAD` from `<seq>-0`,
so nothing is missed or repeated between the two), and stops at `done`. A run whose lease
expired while it was still `running` lost its replica: the first follower to notice closes
its stored stream (`error` interrupted + `done`) and marks it failed, exactly once.

Leases are renewed by a thread of their own (`LeaseKeeper`), so an event loop that is busy for
longer than a lease cannot lose them; if another replica closed a run anyway, the replica
executing it stops it and writes nothing more.

The lease also counts toward its user's runs in flight across replicas: `footnote:inflight:
<user>` is a sorted set of the user's live run ids scored by when their lease ends, so a run
whose replica died stops counting when its lease would have expired.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from footnote.store.records import StoredEvent

log = logging.getLogger(__name__)
PREFIX = "footnote"
ALL_USERS = "*"
"""The user id under which every user's live runs are counted together."""


class RedisRelay:
    """Publishes a replica's run events and leases; reads any replica's."""

    def __init__(self, url: str, *, lease_s: float = 10.0, ttl_s: int = 86_400) -> None:
        import redis
        import redis.asyncio as aioredis

        self.lease_s, self.ttl_s = lease_s, ttl_s
        self.replica = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.sync: Any = redis.Redis.from_url(url, socket_timeout=2, decode_responses=True)
        self.aio: Any = aioredis.from_url(url, socket_timeout=None, decode_responses=True)

    @staticmethod
    def stream(run_id: str) -> str:
        """The run's stream key."""
        return f"{PREFIX}:run:{run_id}"

    @staticmethod
    def lease(run_id: str) -> str:
        """The run's lease key."""
        return f"{PREFIX}:lease:{run_id}"

    def publish(self, run_id: str, events: list[StoredEvent]) -> None:
        """Append persisted events to the run's stream (a repeated seq is dropped)."""
        key = self.stream(run_id)
        try:
            last = (
                self.sync.xinfo_stream(key)["last-generated-id"] if self.sync.exists(key) else "0-0"
            )
        except Exception:
            last = "0-0"
        top = int(str(last).split("-")[0])
        pipe = self.sync.pipeline(transaction=False)
        for e in events:
            if e.seq > top:
                pipe.xadd(key, {"type": e.type, "data": e.data}, id=f"{e.seq}-0")
        pipe.expire(key, self.ttl_s)
        pipe.execute()

    @staticmethod
    def inflight(user_id: str) -> str:
        """The sorted set of a user's live runs (score: when the lease ends)."""
        return f"{PREFIX}:inflight:{user_id}"

    def hold(self, run_id: str, user_id: str | None = None) -> None:
        """Take (or renew) the run's lease for this replica; with `user_id`, the run counts
        toward that user's runs in flight until the lease ends."""
        pipe = self.sync.pipeline(transaction=False)
        pipe.set(self.lease(run_id), self.replica, px=int(self.lease_s * 1000))
        if user_id is not None:
            ends = time.time() + self.lease_s
            for key in (self.inflight(user_id), self.inflight(ALL_USERS)):
                pipe.zadd(key, {run_id: ends})
                pipe.expire(key, max(1, int(self.lease_s * 3)))
        pipe.execute()

    def release(self, run_id: str, user_id: str | None = None) -> None:
        """Give the lease up (the run finished here)."""
        pipe = self.sync.pipeline(transaction=False)
        pipe.delete(self.lease(run_id))
        if user_id is not None:
            pipe.zrem(self.inflight(user_id), run_id)
            pipe.zrem(self.inflight(ALL_USERS), run_id)
        pipe.execute()

    def in_flight(self, user_id: str) -> int:
        """The user's runs executing on any replica (leases not yet expired); `ALL_USERS`:
        everyone's."""
        key = self.inflight(user_id)
        pipe = self.sync.pipeline(transaction=False)
        pipe.zremrangebyscore(key, "-inf", time.time())
        pipe.zcard(key)
        return int(pipe.execute()[1])

    def alive(self, run_id: str) -> bool:
        """Whether some replica holds the run's lease."""
        return bool(self.sync.exists(self.lease(run_id)))

    def closed_elsewhere(self, run_id: str) -> bool:
        """Whether another replica closed the run as abandoned."""
        who = self.sync.get(f"{PREFIX}:closed:{run_id}")
        return who is not None and who != self.replica

    def reopen(self, run_id: str) -> None:
        """Forget an earlier close of the run (it is driven again: a resumed research run)."""
        self.sync.delete(f"{PREFIX}:closed:{run_id}")

    def claim_close(self, run_id: str) -> bool:
        """True for exactly one caller: the one that closes an abandoned run."""
        return bool(
            self.sync.set(f"{PREFIX}:closed:{run_id}", self.replica, nx=True, ex=self.ttl_s)
        )

    async def read(self, run_id: str, after: int, block_ms: int) -> list[StoredEvent]:
        """Events with seq > `after` (waiting up to `block_ms` for the first)."""
        got = await self.aio.xread({self.stream(run_id): f"{after}-0"}, block=block_ms, count=512)
        out: list[StoredEvent] = []
        for _, entries in got or []:
            for entry_id, fields in entries:
                out.append(StoredEvent(int(entry_id.split("-")[0]), fields["type"], fields["data"]))
        return out

    async def close(self) -> None:
        """Close the connections."""
        await self.aio.aclose()
        self.sync.close()


class LeaseKeeper:
    """Renews the leases of this replica's live runs every third of a lease, from its own
    thread; calls `lost(run_id)` for a live run another replica closed."""

    def __init__(
        self,
        relay: RedisRelay,
        live: Callable[[], Sequence[tuple[str, str]]],
        lost: Callable[[str], None],
    ) -> None:
        self.relay, self.live, self.lost = relay, live, lost
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="footnote-leases", daemon=True)

    def start(self) -> None:
        """Start renewing (once)."""
        if not self._thread.is_alive() and not self._stop.is_set():
            self._thread.start()

    def stop(self) -> None:
        """Stop renewing (the replica shuts down)."""
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.relay.lease_s / 3):
            for run_id, user_id in self.live():
                try:
                    if self.relay.closed_elsewhere(run_id):
                        self.lost(run_id)
                    else:
                        self.relay.hold(run_id, user_id)
                except Exception as exc:  # Redis down: followers elsewhere poll the store
                    log.warning("run %s: lease not renewed (%s)", run_id, exc)
