"""Per-user quotas and rate limits: runs in flight, runs and sessions started per minute, upload
bytes per day, and the runs executing for everyone (`max_runs_total`: the depth of the model
queue). Over a limit the request gets 429 (`too_many_requests`) with `Retry-After`.

`Quotas` keeps the counts in this process (one server process per workspace, as `footnote
serve` runs); `RedisQuotas` keeps the per-minute and per-day windows in Redis sorted sets, so
API replicas sharing a PostgreSQL store share them too. Runs in flight are counted by the
run hub: from the Redis leases of every replica when runs are relayed, else this process's,
so a finished run frees its slot at once.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

from footnote.config import ServerSettings
from footnote.server.errors import ApiError
from footnote.server.relay import ALL_USERS

DAY_S = 86_400.0


class Quotas:
    """Sliding-window counters per (user, what)."""

    def __init__(
        self,
        settings: ServerSettings,
        in_flight: Callable[[str], int],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.in_flight = in_flight
        self.clock = clock
        self._events: dict[tuple[str, str], deque[tuple[float, float]]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _used(self, key: tuple[str, str], window: float, now: float) -> float:
        q = self._events[key]
        while q and q[0][0] <= now - window:
            q.popleft()
        return sum(amount for _, amount in q)

    def _take(self, user: str, what: str, amount: float, limit: float, window: float) -> None:
        with self._lock:
            now = self.clock()
            key = (user, what)
            used = self._used(key, window, now)
            if used + amount > limit:
                q = self._events[key]
                retry = math.ceil(q[0][0] + window - now) if q else math.ceil(window)
                raise ApiError(
                    429,
                    f"quota exceeded: {what} (limit {limit:g} per {_span(window)})",
                    detail={"quota": what, "limit": limit, "retry_after_s": max(1, retry)},
                )
            self._events[key].append((now, amount))

    def used(self, user: str, what: str, window: float) -> float:
        """How much of `what` the user used in the last `window` seconds."""
        with self._lock:
            return self._used((user, what), window, self.clock())

    def start_run(self, user: str) -> None:
        """Before a run starts: all runs in flight (the model queue), the user's runs in
        flight and runs this minute."""
        total = self.settings.max_runs_total
        if self.in_flight(ALL_USERS) >= total:
            raise ApiError(429, f"the server is at capacity ({total} runs executing); retry "
                           "shortly", detail={"quota": "runs_total", "limit": total,
                                              "retry_after_s": 2})  # fmt: skip
        limit = self.settings.max_runs_in_flight
        if self.in_flight(user) >= limit:
            raise ApiError(429, f"quota exceeded: {limit} runs in flight; wait for one to end",
                           detail={"quota": "runs_in_flight", "limit": limit,
                                   "retry_after_s": 1})  # fmt: skip
        self._take(user, "runs", 1, self.settings.max_runs_per_minute, 60.0)

    def start_session(self, user: str) -> None:
        """Before a session is created."""
        self._take(user, "sessions", 1, self.settings.max_sessions_per_minute, 60.0)

    def check_upload(self, user: str, size: int) -> None:
        """Before reading an upload of (declared) `size` bytes: 429 when it cannot fit today."""
        limit = self.settings.max_upload_mb_per_day * 2**20
        used = self.used(user, "upload bytes", DAY_S)
        if used + size > limit:
            raise ApiError(429, f"quota exceeded: upload bytes (limit "
                           f"{self.settings.max_upload_mb_per_day:g} MiB per day)",
                           detail={"quota": "upload bytes", "limit": limit})  # fmt: skip

    def charge_upload(self, user: str, size: int) -> None:
        """Count an upload's bytes (429 when it would pass today's limit)."""
        self._take(user, "upload bytes", size, self.settings.max_upload_mb_per_day * 2**20, DAY_S)


_TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1] - ARGV[2])
local used = 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  used = used + tonumber(string.match(m, '^([^:]+)'))
end
if used + tonumber(ARGV[3]) > tonumber(ARGV[4]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if oldest[2] then return tostring(oldest[2] + ARGV[2] - ARGV[1]) end
  return ARGV[2]
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3] .. ':' .. ARGV[5])
redis.call('PEXPIRE', KEYS[1], math.ceil(ARGV[2] * 1000))
return false
"""


class RedisQuotas(Quotas):
    """The same limits with the windows in Redis (`footnote:quota:<user>:<what>` sorted sets,
    checked and charged atomically by one Lua script), shared by every replica."""

    def __init__(
        self,
        settings: ServerSettings,
        in_flight: Callable[[str], int],
        url: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        import redis

        super().__init__(settings, in_flight, clock)
        self.client: Any = redis.Redis.from_url(url, socket_timeout=2, decode_responses=True)
        self._script = self.client.register_script(_TAKE)

    @staticmethod
    def key(user: str, what: str) -> str:
        """The sorted set of one user's window."""
        return f"footnote:quota:{user}:{what.replace(' ', '_')}"

    def _take(self, user: str, what: str, amount: float, limit: float, window: float) -> None:
        retry = self._script(
            keys=[self.key(user, what)],
            args=[self.clock(), window, amount, limit, uuid.uuid4().hex],
        )
        if retry is not None:
            raise ApiError(
                429,
                f"quota exceeded: {what} (limit {limit:g} per {_span(window)})",
                detail={"quota": what, "limit": limit,
                        "retry_after_s": max(1, math.ceil(float(retry)))},
            )  # fmt: skip

    def used(self, user: str, what: str, window: float) -> float:
        """How much of `what` the user used in the last `window` seconds (all replicas)."""
        now = self.clock()
        members = self.client.zrangebyscore(self.key(user, what), now - window, "+inf")
        return sum(float(m.split(":", 1)[0]) for m in members)


def _span(window: float) -> str:
    return "minute" if window == 60.0 else "day"
