"""Server streaming: latency to the first SSE event / answer token, per-token overhead, and
concurrent streaming sessions with the model stubbed out (a fake that streams N tokens).

    .venv/bin/python bench/server_stream.py [--tokens 2000] [--sessions 10,50,100,200]

Baseline (same run): a bare sse-starlette endpoint streaming the same events with no
persistence and no run machinery. Everything runs on loopback in this process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from sse_starlette.event import ServerSentEvent
from sse_starlette.sse import EventSourceResponse

from footnote.events import AnswerDelta, Done, Event, Final, Status
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.types import Answer, Sentence
from footnote.workspace import Workspace


class FakeStream:
    """The ask stub: N answer tokens at `rate` tokens/s (0: as fast as possible)."""

    def __init__(self, tokens: int, rate: float = 0.0) -> None:
        self.tokens, self.rate = tokens, rate

    def __call__(self, question: str, **_: Any) -> AsyncIterator[Event]:
        return self._run(question)

    async def _run(self, question: str) -> AsyncIterator[Event]:
        yield Status("retrieve", "searching")
        for i in range(self.tokens):
            if self.rate:
                await asyncio.sleep(1 / self.rate)
            elif i % 64 == 0:
                await asyncio.sleep(0)
            yield AnswerDelta(f"tok{i} ")
        yield Final(Answer(question, "answered", (Sentence("done"),)))
        yield Done()


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def serve(app: FastAPI) -> tuple[uvicorn.Server, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return server, f"http://127.0.0.1:{port}"


def baseline_app(tokens: int) -> FastAPI:
    app = FastAPI()

    @app.get("/raw")
    async def raw() -> EventSourceResponse:
        async def gen() -> AsyncIterator[ServerSentEvent]:
            async for i, ev in _enumerate(FakeStream(tokens)("q")):
                yield ServerSentEvent(data=json.dumps({"text": getattr(ev, "text", "")}),
                                      event=ev.type, id=str(i + 1))  # fmt: skip

        return EventSourceResponse(gen())

    return app


async def _enumerate(it: AsyncIterator[Event]) -> AsyncIterator[tuple[int, Event]]:
    i = 0
    async for ev in it:
        yield i, ev
        i += 1


async def read_stream(client: httpx.AsyncClient, url: str, t0: float) -> dict[str, float]:
    first = first_token = 0.0
    n = 0
    gaps: list[float] = []
    last = t0
    async with client.stream("GET", url) as resp:
        async for line in resp.aiter_lines():
            if line.startswith("event:"):
                now = time.perf_counter()
                n += 1
                first = first or now - t0
                if "answer_delta" in line:
                    first_token = first_token or now - t0
                    gaps.append(now - last)
                last = now
    return {"first": first, "first_token": first_token, "events": n,
            "total": time.perf_counter() - t0, "max_gap": max(gaps, default=0.0)}  # fmt: skip


async def one_turn(client: httpx.AsyncClient, base: str) -> dict[str, float]:
    sid = (await client.post(f"{base}/v1/sessions", json={})).json()["id"]
    t0 = time.perf_counter()
    turn = (await client.post(f"{base}/v1/sessions/{sid}/messages", json={"content": "q"})).json()
    return await read_stream(client, base + turn["stream_url"], t0)


async def latency(base: str, raw_base: str, tokens: int) -> None:
    async with httpx.AsyncClient(timeout=120) as client:
        await one_turn(client, base)  # warm up
        runs = [await one_turn(client, base) for _ in range(5)]
        raw = []
        for _ in range(5):
            t0 = time.perf_counter()
            raw.append(await read_stream(client, raw_base + "/raw", t0))
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    rmed = {k: statistics.median(r[k] for r in raw) for k in raw[0]}
    n = med["events"]
    print(f"latency (median of 5, {tokens} tokens, model stubbed):")
    print(f"  POST -> first SSE event  {med['first'] * 1000:7.1f} ms")
    print(f"  POST -> first token      {med['first_token'] * 1000:7.1f} ms")
    print(f"  footnote: {n / med['total']:8.0f} events/s  ({med['total'] / n * 1e6:6.1f} µs/event, "
          f"SSE framing + SQLite persistence + run hub)")  # fmt: skip
    print(f"  baseline: {rmed['events'] / rmed['total']:8.0f} events/s  "
          f"({rmed['total'] / rmed['events'] * 1e6:6.1f} µs/event, bare sse-starlette)")  # fmt: skip
    print(f"  overhead per token: {(med['total'] / n - rmed['total'] / rmed['events']) * 1e6:.1f} µs"
          f"  (ratio {rmed['events'] / rmed['total'] / (n / med['total']):.2f}x slower)")  # fmt: skip


async def hub_only(ws: Workspace, tokens: int) -> None:
    """Encoding + persistence + run bookkeeping per event, without HTTP (no follower)."""
    from footnote.server.runner import RunHub

    hub = RunHub(ws.events, ws.runs)
    times = []
    for i in range(3):
        t0 = time.perf_counter()
        hub.start(f"run_hub{i}", "chat", "u", None, {}, lambda: FakeStream(tokens)("q"))
        await hub.wait(f"run_hub{i}")
        times.append(time.perf_counter() - t0)
    per = statistics.median(times) / (tokens + 3)
    print(f"  run hub alone (encode + batched SQLite + buffer): {1 / per:8.0f} events/s "
          f"({per * 1e6:5.1f} µs/event)")  # fmt: skip


async def concurrency(base: str, sessions: list[int], tokens: int, rate: float) -> None:
    print(f"concurrent streams, each {tokens} tokens at {rate:g} tokens/s (model stubbed):")
    async with httpx.AsyncClient(timeout=300, limits=httpx.Limits(max_connections=1000)) as c:
        for n in sessions:
            before = rss_mb()
            t0 = time.perf_counter()
            results = await asyncio.gather(*(one_turn(c, base) for _ in range(n)),
                                           return_exceptions=True)  # fmt: skip
            ok = [r for r in results if isinstance(r, dict) and r["events"] == tokens + 3 + 1]
            wall = time.perf_counter() - t0
            p95_first = sorted(r["first_token"] for r in ok)[int(0.95 * (len(ok) - 1))] if ok else 0
            worst_gap = max((r["max_gap"] for r in ok), default=0.0)
            print(f"  {n:4d} sessions: {len(ok):4d} complete in {wall:5.1f} s, p95 first token "
                  f"{p95_first * 1000:6.0f} ms, worst token gap {worst_gap * 1000:6.0f} ms, "
                  f"RSS +{rss_mb() - before:5.1f} MB (+{(rss_mb() - before) / n * 1024:5.0f} KB/session)")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--sessions", default="10,50,100,200")
    ap.add_argument("--rate", type=float, default=20.0, help="tokens/s per stream (concurrency)")
    ap.add_argument("--stream-tokens", type=int, default=100)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    ws = Workspace.open(tmp / "ws")
    print(f"cpu cores: {os.cpu_count()}, RSS at start {rss_mb():.0f} MB")
    _, base = serve(create_app(ws, ServerDeps(ask=FakeStream(args.tokens), use_models=False)))
    _, raw = serve(baseline_app(args.tokens))
    asyncio.run(latency(base, raw, args.tokens))
    asyncio.run(hub_only(ws, args.tokens))
    ws2 = Workspace.open(tmp / "ws2")
    stub = FakeStream(args.stream_tokens, args.rate)
    _, base2 = serve(create_app(ws2, ServerDeps(ask=stub, use_models=False)))
    asyncio.run(concurrency(base2, [int(s) for s in args.sessions.split(",")],
                            args.stream_tokens, args.rate))  # fmt: skip


if __name__ == "__main__":
    main()
