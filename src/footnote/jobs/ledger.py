"""The two ledgers: a SQLite table beside the embedded queue, and Redis hashes beside the
distributed one. Each state change is one atomic step (a conditional UPDATE, a Lua script), so
two workers never both hold a job and two reapers never both hand it back."""

from __future__ import annotations

import fcntl
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from footnote.jobs.base import CANCEL_STAGE, CANCELLED, JobRecord, JobState, dumps

_SCHEMA = """
CREATE TABLE IF NOT EXISTS footnote_jobs (
  queue TEXT NOT NULL, id TEXT NOT NULL, task TEXT NOT NULL, payload TEXT NOT NULL,
  state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, worker TEXT NOT NULL DEFAULT '',
  lease_until REAL NOT NULL DEFAULT 0, result TEXT, error TEXT,
  created_at REAL NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (queue, id));
CREATE INDEX IF NOT EXISTS footnote_jobs_lease ON footnote_jobs (queue, state, lease_until);
CREATE INDEX IF NOT EXISTS footnote_jobs_queued ON footnote_jobs (queue, state, updated_at);
CREATE TABLE IF NOT EXISTS footnote_job_stages (
  queue TEXT NOT NULL, job_id TEXT NOT NULL, stage TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (queue, job_id, stage));
"""


class SqliteLedger:
    """Jobs in `footnote_jobs` (and `footnote_job_stages`) of the embedded queue's file."""

    def __init__(self, path: Path, queue: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.queue = queue
        self.lock = threading.Lock()
        self.conn = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA busy_timeout=30000")
        # one opener at a time: switching a new file to WAL fails at once, without waiting,
        # when another process opening it holds a read lock
        with Path(f"{path}.open.lock").open("a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.executescript(_SCHEMA)

    def _change(self, sql: str, args: tuple[Any, ...]) -> bool:
        with self.lock:
            return self.conn.execute(sql, args).rowcount == 1

    def create(self, job_id: str, task: str, payload: dict[str, Any], now: float) -> bool:
        return self._change(
            "INSERT OR IGNORE INTO footnote_jobs (queue, id, task, payload, state, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, 'queued', ?, ?)",
            (self.queue, job_id, task, dumps(payload), now, now),
        )

    def get(self, job_id: str) -> JobRecord | None:
        with self.lock:
            row = self.conn.execute(
                "SELECT id, task, payload, state, attempts, worker, lease_until, result, error, "
                "created_at, updated_at FROM footnote_jobs WHERE queue = ? AND id = ?",
                (self.queue, job_id),
            ).fetchone()
        if row is None:
            return None
        return JobRecord(
            row[0], row[1], json.loads(row[2]), row[3], row[4], row[5], row[6],
            json.loads(row[7]) if row[7] is not None else None, row[8], row[9], row[10],
        )  # fmt: skip

    def claim(self, job_id: str, worker: str, lease_s: float, now: float) -> int | None:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                n = self.conn.execute(
                    "UPDATE footnote_jobs SET state = 'running', worker = ?, lease_until = ?, "
                    "attempts = attempts + 1, updated_at = ? WHERE queue = ? AND id = ? AND "
                    "(state = 'queued' OR (state = 'running' AND lease_until < ?))",
                    (worker, now + lease_s, now, self.queue, job_id, now),
                ).rowcount
                row = self.conn.execute(
                    "SELECT attempts FROM footnote_jobs WHERE queue = ? AND id = ?",
                    (self.queue, job_id),
                ).fetchone()
            finally:
                self.conn.execute("COMMIT")
        return int(row[0]) if n == 1 and row else None

    def renew(self, job_id: str, worker: str, lease_s: float, now: float) -> bool:
        return self._change(
            "UPDATE footnote_jobs SET lease_until = ?, updated_at = ? WHERE queue = ? AND id = ? "
            "AND state = 'running' AND worker = ?",
            (now + lease_s, now, self.queue, job_id, worker),
        )

    def finish(self, job_id: str, worker: str, result: dict[str, Any], now: float) -> bool:
        return self._change(
            "UPDATE footnote_jobs SET state = 'done', result = ?, error = NULL, lease_until = 0, "
            "updated_at = ? WHERE queue = ? AND id = ? AND state = 'running' AND worker = ?",
            (dumps(result), now, self.queue, job_id, worker),
        )

    def release(self, job_id: str, worker: str, error: str, fail: bool, now: float) -> bool:
        return self._change(
            "UPDATE footnote_jobs SET state = ?, error = ?, lease_until = 0, updated_at = ? "
            "WHERE queue = ? AND id = ? AND state = 'running' AND worker = ?",
            ("failed" if fail else "queued", error, now, self.queue, job_id, worker),
        )

    def expired(self, now: float) -> list[str]:
        with self.lock:
            rows = self.conn.execute(
                "SELECT id FROM footnote_jobs WHERE queue = ? AND state = 'running' "
                "AND lease_until < ? ORDER BY lease_until",
                (self.queue, now),
            ).fetchall()
        return [r[0] for r in rows]

    def requeue(self, job_id: str, max_attempts: int, now: float) -> JobState | None:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                n = self.conn.execute(
                    "UPDATE footnote_jobs SET state = CASE WHEN attempts >= ? THEN 'failed' "
                    "ELSE 'queued' END, error = CASE WHEN attempts >= ? THEN ? ELSE error END, "
                    "worker = '', lease_until = 0, updated_at = ? WHERE queue = ? AND id = ? "
                    "AND state = 'running' AND lease_until < ?",
                    (max_attempts, max_attempts, _gave_up(max_attempts), now, self.queue,
                     job_id, now),
                ).rowcount  # fmt: skip
                row = self.conn.execute(
                    "SELECT state FROM footnote_jobs WHERE queue = ? AND id = ?",
                    (self.queue, job_id),
                ).fetchone()
            finally:
                self.conn.execute("COMMIT")
        state: JobState | None = row[0] if n == 1 and row else None
        return state

    def stale(self, before: float) -> list[str]:
        with self.lock:
            rows = self.conn.execute(
                "SELECT id FROM footnote_jobs WHERE queue = ? AND state = 'queued' "
                "AND updated_at < ? ORDER BY updated_at",
                (self.queue, before),
            ).fetchall()
        return [r[0] for r in rows]

    def touch(self, job_id: str, now: float) -> bool:
        return self._change(
            "UPDATE footnote_jobs SET updated_at = ? WHERE queue = ? AND id = ? AND state = 'queued'",
            (now, self.queue, job_id),
        )

    def reset(self, job_id: str, now: float) -> bool:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                n = self.conn.execute(
                    "UPDATE footnote_jobs SET state = 'queued', attempts = 0, worker = '', "
                    "lease_until = 0, result = NULL, error = NULL, updated_at = ? WHERE queue = ? "
                    "AND id = ? AND state IN ('done', 'failed')",
                    (now, self.queue, job_id),
                ).rowcount
                if n == 1:
                    self.conn.execute(
                        "DELETE FROM footnote_job_stages WHERE queue = ? AND job_id = ?",
                        (self.queue, job_id),
                    )
            finally:
                self.conn.execute("COMMIT")
        return n == 1

    def stages(self, job_id: str) -> dict[str, Any]:
        with self.lock:
            rows = self.conn.execute(
                "SELECT stage, value FROM footnote_job_stages WHERE queue = ? AND job_id = ?",
                (self.queue, job_id),
            ).fetchall()
        return {stage: json.loads(value) for stage, value in rows}

    def put_stage(self, job_id: str, worker: str, stage: str, value: Any, now: float) -> bool:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                held = self.conn.execute(
                    "SELECT 1 FROM footnote_jobs WHERE queue = ? AND id = ? AND state = 'running' "
                    "AND worker = ?",
                    (self.queue, job_id, worker),
                ).fetchone()
                if held:
                    self.conn.execute(
                        "INSERT OR REPLACE INTO footnote_job_stages (queue, job_id, stage, value) "
                        "VALUES (?, ?, ?, ?)",
                        (self.queue, job_id, stage, dumps(value)),
                    )
            finally:
                self.conn.execute("COMMIT")
        return held is not None

    def cancel(self, job_id: str, now: float) -> JobState | None:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                row = self.conn.execute(
                    "SELECT state FROM footnote_jobs WHERE queue = ? AND id = ?",
                    (self.queue, job_id),
                ).fetchone()
                was: JobState | None = row[0] if row and row[0] in ("queued", "running") else None
                if was == "queued":
                    self.conn.execute(
                        "UPDATE footnote_jobs SET state = 'failed', error = ?, updated_at = ? "
                        "WHERE queue = ? AND id = ?", (CANCELLED, now, self.queue, job_id),
                    )  # fmt: skip
                elif was == "running":
                    self.conn.execute(
                        "INSERT OR REPLACE INTO footnote_job_stages (queue, job_id, stage, value) "
                        "VALUES (?, ?, ?, 'true')", (self.queue, job_id, CANCEL_STAGE),
                    )  # fmt: skip
            finally:
                self.conn.execute("COMMIT")
        return was

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def _gave_up(max_attempts: int) -> str:
    return f"the worker running this job was lost {max_attempts} time(s); not tried again"


# Redis: `<queue>:job:<id>` (a hash), `<queue>:stages:<id>` (a hash of stage -> JSON) and
# `<queue>:leases` (a sorted set of running job ids by lease end).
_CLAIM = """
local st = redis.call('HGET', KEYS[1], 'state')
if not st or st == 'done' or st == 'failed' then return -1 end
if st == 'running' and tonumber(redis.call('HGET', KEYS[1], 'lease_until')) >= tonumber(ARGV[3])
then return -1 end
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], 'state', 'running', 'worker', ARGV[1], 'lease_until', ARGV[2],
           'updated_at', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
redis.call('ZREM', KEYS[3], ARGV[4])
return n
"""
_HELD = """
if redis.call('HGET', KEYS[1], 'state') ~= 'running' or
   redis.call('HGET', KEYS[1], 'worker') ~= ARGV[1] then return 0 end
"""
_RENEW = (
    _HELD
    + """
redis.call('HSET', KEYS[1], 'lease_until', ARGV[2], 'updated_at', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
return 1
"""
)
_END = (
    _HELD
    + """
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'lease_until', 0, 'updated_at', ARGV[3])
if ARGV[5] == '1' then redis.call('HSET', KEYS[1], 'result', ARGV[6]) redis.call('HDEL', KEYS[1], 'error')
else redis.call('HSET', KEYS[1], 'error', ARGV[6]) end
redis.call('ZREM', KEYS[2], ARGV[4])
if ARGV[2] == 'queued' then redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4]) end
return 1
"""
)
_REQUEUE = """
if redis.call('HGET', KEYS[1], 'state') ~= 'running' or
   tonumber(redis.call('HGET', KEYS[1], 'lease_until')) >= tonumber(ARGV[2]) then return false end
local st = 'queued'
if tonumber(redis.call('HGET', KEYS[1], 'attempts')) >= tonumber(ARGV[1]) then
  st = 'failed' redis.call('HSET', KEYS[1], 'error', ARGV[4]) end
redis.call('HSET', KEYS[1], 'state', st, 'worker', '', 'lease_until', 0, 'updated_at', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[3])
if st == 'queued' then redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3]) end
return st
"""
_RESET = """
local st = redis.call('HGET', KEYS[1], 'state')
if st ~= 'done' and st ~= 'failed' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'queued', 'attempts', 0, 'worker', '', 'lease_until', 0,
           'updated_at', ARGV[1])
redis.call('HDEL', KEYS[1], 'result', 'error')
redis.call('DEL', KEYS[2])
redis.call('ZADD', KEYS[3], ARGV[1], ARGV[2])
return 1
"""
_TOUCH = """
if redis.call('HGET', KEYS[1], 'state') ~= 'queued' then return 0 end
redis.call('HSET', KEYS[1], 'updated_at', ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[2])
return 1
"""
_CANCEL = """
local st = redis.call('HGET', KEYS[1], 'state')
if st == 'queued' then
  redis.call('HSET', KEYS[1], 'state', 'failed', 'error', ARGV[2], 'updated_at', ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[3])
  return st
end
if st == 'running' then redis.call('HSET', KEYS[2], ARGV[4], 'true') return st end
return false
"""
_STAGE = (
    _HELD
    + """
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
"""
)


class RedisLedger:
    """Jobs as Redis hashes under the queue's prefix; state changes are Lua scripts."""

    def __init__(self, client: Any, queue: str) -> None:
        self.r = client
        self.prefix = queue
        self.leases = f"{queue}:leases"
        self.queued = f"{queue}:queued"
        self._claim = client.register_script(_CLAIM)
        self._renew = client.register_script(_RENEW)
        self._end = client.register_script(_END)
        self._requeue = client.register_script(_REQUEUE)
        self._stage = client.register_script(_STAGE)
        self._reset = client.register_script(_RESET)
        self._touch = client.register_script(_TOUCH)
        self._cancel = client.register_script(_CANCEL)

    def _key(self, job_id: str) -> str:
        return f"{self.prefix}:job:{job_id}"

    def create(self, job_id: str, task: str, payload: dict[str, Any], now: float) -> bool:
        key = self._key(job_id)
        if not self.r.hsetnx(key, "state", "queued"):
            return False
        self.r.hset(key, mapping={"task": task, "payload": dumps(payload), "attempts": 0,
                                  "worker": "", "lease_until": 0, "created_at": now,
                                  "updated_at": now})  # fmt: skip
        self.r.zadd(self.queued, {job_id: now})
        return True

    def get(self, job_id: str) -> JobRecord | None:
        raw = self.r.hgetall(self._key(job_id))
        if not raw or b"task" not in raw:
            return None
        h = {k.decode(): v.decode() for k, v in raw.items()}
        return JobRecord(
            job_id, h["task"], json.loads(h["payload"]), h["state"],
            int(h.get("attempts", 0)), h.get("worker", ""), float(h.get("lease_until", 0)),
            json.loads(h["result"]) if "result" in h else None, h.get("error"),
            float(h.get("created_at", 0)), float(h.get("updated_at", 0)),
        )  # fmt: skip

    def claim(self, job_id: str, worker: str, lease_s: float, now: float) -> int | None:
        n = int(self._claim(keys=[self._key(job_id), self.leases, self.queued],
                            args=[worker, now + lease_s, now, job_id]))  # fmt: skip
        return n if n > 0 else None

    def renew(self, job_id: str, worker: str, lease_s: float, now: float) -> bool:
        return bool(self._renew(keys=[self._key(job_id), self.leases],
                                args=[worker, now + lease_s, now, job_id]))  # fmt: skip

    def _finish(
        self, job_id: str, worker: str, state: str, ok: bool, text: str, now: float
    ) -> bool:
        return bool(self._end(keys=[self._key(job_id), self.leases, self.queued],
                              args=[worker, state, now, job_id, "1" if ok else "0", text]))  # fmt: skip

    def finish(self, job_id: str, worker: str, result: dict[str, Any], now: float) -> bool:
        return self._finish(job_id, worker, "done", True, dumps(result), now)

    def release(self, job_id: str, worker: str, error: str, fail: bool, now: float) -> bool:
        return self._finish(job_id, worker, "failed" if fail else "queued", False, error, now)

    def expired(self, now: float) -> list[str]:
        return [m.decode() for m in self.r.zrangebyscore(self.leases, "-inf", f"({now}")]

    def requeue(self, job_id: str, max_attempts: int, now: float) -> JobState | None:
        got = self._requeue(keys=[self._key(job_id), self.leases, self.queued],
                            args=[max_attempts, now, job_id, _gave_up(max_attempts)])  # fmt: skip
        state: JobState | None = got.decode() if got else None
        return state

    def reset(self, job_id: str, now: float) -> bool:
        keys = [self._key(job_id), f"{self.prefix}:stages:{job_id}", self.queued]
        return bool(self._reset(keys=keys, args=[now, job_id]))

    def stale(self, before: float) -> list[str]:
        return [m.decode() for m in self.r.zrangebyscore(self.queued, "-inf", f"({before}")]

    def touch(self, job_id: str, now: float) -> bool:
        return bool(self._touch(keys=[self._key(job_id), self.queued], args=[now, job_id]))

    def stages(self, job_id: str) -> dict[str, Any]:
        raw = self.r.hgetall(f"{self.prefix}:stages:{job_id}")
        return {k.decode(): json.loads(v) for k, v in raw.items()}

    def put_stage(self, job_id: str, worker: str, stage: str, value: Any, now: float) -> bool:
        return bool(self._stage(keys=[self._key(job_id), f"{self.prefix}:stages:{job_id}"],
                                args=[worker, stage, dumps(value)]))  # fmt: skip

    def cancel(self, job_id: str, now: float) -> JobState | None:
        keys = [self._key(job_id), f"{self.prefix}:stages:{job_id}", self.queued]
        got = self._cancel(keys=keys, args=[now, CANCELLED, job_id, CANCEL_STAGE])
        state: JobState | None = got.decode() if got else None
        return state

    def close(self) -> None:
        self.r.close()
