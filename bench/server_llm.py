"""Concurrent chat turns with the embedded LLM composing (the real bound: CPU and one model).

.venv/bin/python bench/server_llm.py [--sessions 1,2,4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import httpx

from footnote.server import create_app
from footnote.workspace import Workspace
from server_stream import read_stream, rss_mb, serve

PAPER = """# Retrieval study

## Method

We index every paragraph with BM25 and dense vectors, then fuse the rankings with reciprocal rank fusion.

## Results

Hybrid retrieval reached a recall@10 of 0.74, ahead of BM25 at 0.61.

The corpus contains 1,213 annotated papers collected from the ACL Anthology.
"""


QUESTIONS = [
    "What recall did hybrid retrieval reach?",
    "How many annotated papers does the corpus contain?",
    "What recall did BM25 reach?",
    "How are the BM25 and dense vector rankings fused?",
    "Where were the annotated papers collected from?",
]
_next = iter(range(10**6))


async def turn(client: httpx.AsyncClient, base: str) -> dict[str, float]:
    """One turn; every turn asks a different question (no response-cache hits)."""
    sid = (await client.post(f"{base}/v1/sessions", json={})).json()["id"]
    t0 = time.perf_counter()
    body = {"content": QUESTIONS[next(_next) % len(QUESTIONS)]}
    started = (await client.post(f"{base}/v1/sessions/{sid}/messages", json=body)).json()
    return await read_stream(client, base + started["stream_url"], t0)


async def run(base: str, sessions: list[int]) -> None:
    async with httpx.AsyncClient(timeout=900) as client:
        await turn(client, base)  # loads the model
        for n in sessions:
            before = rss_mb()
            t0 = time.perf_counter()
            results = await asyncio.gather(*(turn(client, base) for _ in range(n)))
            wall = time.perf_counter() - t0
            firsts = sorted(r["first_token"] for r in results)
            print(f"  {n} concurrent turns: wall {wall:5.1f} s, first token "
                  f"{firsts[0]:5.1f}..{firsts[-1]:5.1f} s, RSS +{rss_mb() - before:.0f} MB")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", default="1,2,4")
    args = ap.parse_args()
    os.environ.setdefault("FOOTNOTE_MODELS__EMBED__URL", "local:wordllama")
    os.environ.setdefault("FOOTNOTE_ASK__USE_JUDGE", "false")
    tmp = Path(tempfile.mkdtemp())
    (tmp / "study.md").write_text(PAPER, encoding="utf-8")
    ws = Workspace.open(tmp / "ws")
    ws.ingest([tmp / "study.md"])
    print(f"embedded compose model {ws.settings.models.compose.url}, cores {os.cpu_count()}, "
          f"mode {ws.settings.ask.mode}")  # fmt: skip
    _, base = serve(create_app(ws))
    asyncio.run(run(base, [int(s) for s in args.sessions.split(",")]))


if __name__ == "__main__":
    main()
