"""Research runs as queue jobs on two API replicas and two workers, then one of each killed.

Everything is a real process on loopback (see `replicas_load.py`): PostgreSQL with pgvector,
a `redis-server` (run relay, and the job queue on another database), two `footnote serve`
replicas with `server.research_jobs` on and no job threads of their own, and two `footnote
worker` processes. No model is bound (the research pipeline runs extractively over a small
library), so what is measured is the queue, the store and the streams.

Each run is started on one replica (`POST /v1/research`, confirmed at once) and followed on
the other; the baseline phase follows on the replica that started it. The kill phase
SIGKILLs replica A and worker 1 once half the runs have started: streams followed on A
reconnect to B with `Last-Event-ID`, and the jobs worker 1 held are taken by worker 2 when
their lease (`jobs.lease_s`, 3 s here) ends and resume after their last finished stage.
Reported per phase: runs, p50/p95 seconds to the first event and to the `brief`, runs that
ended `interrupted`, and streams that lost or repeated an event (ids must run 1..n, ending
with `done`).

    .venv/bin/python bench/research_jobs_load.py [--runs 16,32] [--kill-at 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from replicas_load import STARTED, Stack, follow, report
from replicas_load import phase as load_phase

LIBRARY = {
    "size.md": "# Size\n\nThe recycling market was worth 4.2 billion euros in 2023, the "
    "ministry's report says. Its volume reached 61 million tonnes.\n",
    "growth.md": "# Growth\n\nThe recycling market grew by 11% in 2023, according to the trade "
    "association, after 9% in 2022.\n",
    "players.md": "# Players\n\nThe three largest recyclers hold 38% of the market; the largest "
    "alone holds 17%.\n",
}
QUESTION = "How large is the recycling market, how fast does it grow, and who leads it?"


class JobStack(Stack):
    """`Stack` with research jobs on a Redis queue and two `footnote worker` processes."""

    def __init__(self, lease_s: float) -> None:
        super().__init__(0.0, {
            "FOOTNOTE_SERVER__RESEARCH_JOBS": "true", "FOOTNOTE_JOBS__URL": "{redis}/1",
            "FOOTNOTE_JOBS__SERVER_THREADS": "0", "FOOTNOTE_JOBS__LEASE_S": str(lease_s),
            "FOOTNOTE_JOBS__RETRY_DELAY_S": "0.5", "FOOTNOTE_MODELS__COMPOSE__URL": "",
            "FOOTNOTE_RESEARCH__SEARCH_URL": "", "FOOTNOTE_RESEARCH__PARALLEL": "1",
        }, LIBRARY)  # fmt: skip
        self.workers = {
            name: subprocess.Popen(
                [*self.footnote, "worker", "-w", str(self.tmp / name), "--threads", "2"],
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for name in ("w1", "w2")
        }
        self.procs += list(self.workers.values())

    def attempts(self, run_ids: list[str]) -> list[int]:
        """Tries each run's job took (a job a killed worker held took two)."""
        import redis

        from footnote.jobs.ledger import RedisLedger

        ledger = RedisLedger(redis.Redis.from_url(self.env["FOOTNOTE_JOBS__URL"]),
                             "footnote:jobs:footnote")  # fmt: skip
        try:
            return [rec.attempts if (rec := ledger.get(f"research:{r}")) else 0 for r in run_ids]
        finally:
            ledger.close()

    def kill_worker(self, name: str) -> None:
        self.workers[name].send_signal(signal.SIGKILL)
        self.workers[name].wait()


async def research(client: httpx.AsyncClient, start: str, watch: list[str]) -> dict[str, Any]:
    """Start a confirmed run on `start` (the other replica when `start` is down), follow it."""
    t0 = time.monotonic()
    out: dict[str, Any] = {"ids": [], "events": []}
    for url in dict.fromkeys([start, *watch]):
        try:
            r = await client.post(f"{url}/v1/research", json={
                "question": QUESTION, "template": "market_size", "web": False, "confirm": True})  # fmt: skip
        except httpx.HTTPError:
            out["retried_start"] = True
            continue
        if r.status_code != 201:
            out["refused"] = r.status_code
            return out
        STARTED.append(r.json()["id"])
        await follow(client, watch, r.json()["id"], t0, out, final="brief")
        return out
    out["refused"] = "no replica answered"
    return out


async def phase(stack: JobStack, n: int, cross: bool, kill_after: float | None = None
                ) -> dict[str, Any]:  # fmt: skip
    """`replicas_load.phase` with research runs; the kill takes replica A and worker 1."""

    def kill() -> None:
        stack.kill("a")
        stack.kill_worker("w1")

    row = await load_phase(stack, n, cross, kill_after, start=research, kill=kill, timeout=300)
    row["jobs_retried"] = sum(1 for attempts in stack.attempts(STARTED) if attempts > 1)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default="16,32")
    ap.add_argument("--lease", type=float, default=3.0, help="jobs.lease_s of the workers")
    ap.add_argument(
        "--kill-at",
        type=float,
        default=1.0,
        help="kill replica A and worker 1 this many seconds after half the runs started",
    )
    args = ap.parse_args()
    stack = JobStack(args.lease)
    rows: list[tuple[str, dict[str, Any]]] = []
    try:
        asyncio.run(phase(stack, 2, True))  # warm-up (not reported)
        for n in [int(x) for x in args.runs.split(",")]:
            rows.append((f"{n} same replica (baseline)", asyncio.run(phase(stack, n, False))))
            rows.append((f"{n} other replica", asyncio.run(phase(stack, n, True))))
        n = max(int(x) for x in args.runs.split(","))
        rows.append(
            (
                f"{n} other replica, replica A and worker 1 killed mid-run",
                asyncio.run(phase(stack, n, True, args.kill_at)),
            )
        )
    finally:
        stack.close()
    report(rows, "brief")


if __name__ == "__main__":
    main()
