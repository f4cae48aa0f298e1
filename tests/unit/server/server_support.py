"""Helpers for the server tests: a stub ask, run polling, an SSE frame parser."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

from fastapi.testclient import TestClient

from footnote.events import AnswerDelta, Done, Event, Final, Status
from footnote.types import Answer, Sentence


class StubAsk:
    """Streams `tokens` answer deltas (optionally slowly), then a final answer."""

    def __init__(self, tokens: int = 5, delay: float = 0.0) -> None:
        self.tokens, self.delay = tokens, delay
        self.calls: list[dict[str, Any]] = []

    def __call__(self, question: str, **kw: Any) -> AsyncIterator[Event]:
        self.calls.append({"question": question, **kw})
        return self._events(question)

    async def _events(self, question: str) -> AsyncIterator[Event]:
        yield Status("retrieve", "searching")
        for i in range(self.tokens):
            if self.delay:
                await asyncio.sleep(self.delay)
            yield AnswerDelta(f"t{i} ")
        yield Final(Answer(question, "answered", (Sentence(f"About {question}"),)))
        yield Done()


def wait_run(client: TestClient, run_id: str, headers: dict[str, str] | None = None) -> Any:
    """Poll a run until it is no longer running."""
    for _ in range(200):
        run = client.get(f"/v1/runs/{run_id}", headers=headers).json()
        if run["status"] != "running":
            return run
        time.sleep(0.02)
    raise AssertionError("run did not finish")


def parse_sse(lines: Iterable[str]) -> list[dict[str, Any]]:
    """SSE frames as dicts {id, event, data (parsed JSON)}; comment lines are skipped."""
    frames: list[dict[str, Any]] = []
    cur: dict[str, Any] = {}
    for line in lines:
        if not line:
            if cur:
                frames.append(cur)
                cur = {}
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            cur["data"] = json.loads(value)
        elif field in ("id", "event"):
            cur[field] = int(value) if field == "id" else value
    if cur:
        frames.append(cur)
    return frames
