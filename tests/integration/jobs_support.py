"""Pieces of the job-queue tests: a redis-server of their own on a free loopback port, an
OpenAI-compatible embeddings server on loopback that can hold a request (so a worker is
stopped at a known point, mid-ingest), worker subprocesses and store counts."""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/openai_loopback.py
from openai_loopback import LoopbackServer, Reply, Response, embed_inputs

SRC = Path(__file__).resolve().parents[2] / "src"
_REDIS: list[str] = []


def redis_url() -> str:
    """A redis-server started once for these tests (skipped when not installed)."""
    if _REDIS:
        return _REDIS[0]
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (scripts/setup installs it)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    atexit.register(proc.terminate)
    import redis

    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(100):
        try:
            redis.Redis.from_url(url, socket_timeout=1).ping()
            _REDIS.append(url)
            return url
        except Exception:
            time.sleep(0.05)
    pytest.skip("redis-server did not start")


def vector(text: str, dim: int = 16) -> list[float]:
    """A deterministic embedding of a text (its hash's bytes)."""
    digest = hashlib.sha256(text.encode()).digest()
    return [b / 255.0 - 0.5 for b in digest[:dim]]


class EmbedServer:
    """`POST /v1/embeddings` on loopback. The first request `hold` accepts waits until
    `release()`; `held` is set when it arrived."""

    def __init__(self, hold: Callable[[list[str]], bool] | None = None) -> None:
        self.hold = hold
        """Which request to hold (the first whose texts it accepts), or None."""
        self.held = threading.Event()
        self.released = threading.Event()
        self.inputs: list[str] = []
        self.refuse = 0
        """How many more requests embedding document text to answer 400 (an index write fails)."""
        self.server = LoopbackServer(self._answer, model="emb")
        self.url = self.server.url

    def _answer(self, _path: str, body: dict[str, Any]) -> Reply:
        texts = embed_inputs(body)
        if self.refuse and document_text(texts):
            self.refuse -= 1
            raw = b'{"error": {"message": "refused by the test", "type": "invalid"}}'
            return Response(400, raw)
        if self.hold and not self.held.is_set() and self.hold(texts):
            self.held.set()
            self.released.wait(60)
        self.inputs += texts
        return [vector(t) for t in texts]

    def release(self) -> None:
        self.released.set()

    def stop(self) -> None:
        self.release()
        self.server.stop()


def document_text(texts: list[str]) -> bool:
    """A request embedding document text (not the dimension probe)."""
    return texts != ["dimension probe"]


def write_config(
    ws: Path, jobs: dict[str, Any], embed_url: str, extra: str = "", store_url: str = ""
) -> None:
    """`<ws>/config.toml` naming the queue and the embedder (and `extra` TOML), read by every
    process."""
    ws.mkdir(parents=True, exist_ok=True)
    lines = ["[jobs]"] + [f"{k} = {json.dumps(v)}" for k, v in jobs.items()]
    if store_url:
        lines += ["", "[store]", f"url = {json.dumps(store_url)}"]
    lines += ["", "[models.embed]", f"url = {json.dumps(embed_url)}", "",
              "[ask]", "use_judge = false", "", "[eval]", "judge_citations = false"]  # fmt: skip
    (ws / "config.toml").write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")


def spawn_worker(ws: Path, *args: str) -> subprocess.Popen[bytes]:
    """`footnote worker` on the workspace, in a process of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen(
        [sys.executable, "-m", "footnote.cli", "worker", "-w", str(ws), *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


def paper(path: Path, paragraphs: int = 24) -> Path:
    """A Markdown paper of `paragraphs` distinct paragraphs (each its own block)."""
    body = "\n\n".join(
        f"Paragraph {i}: hybrid retrieval over {i * 7} passages reached a recall of 0.{i:02d} "
        "in this measurement, which the authors report with its confidence interval."
        for i in range(paragraphs)
    )
    path.write_text(f"# A study of retrieval\n\n## Results\n\n{body}\n", encoding="utf-8")
    return path


TABLES = ("sources", "blocks", "index_blocks", "block_vectors")


def counts(ws: Path, store_url: str = "") -> dict[str, int]:
    """Rows of the store (embedded, or PostgreSQL at `store_url`): sources, blocks, lexical
    rows, vectors."""
    if store_url:
        import psycopg

        with psycopg.connect(store_url) as pg:
            return {t: int(pg.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in TABLES}  # type: ignore[index]
    conn = sqlite3.connect(ws / "footnote.db")
    try:
        return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in TABLES}
    finally:
        conn.close()


def wait_for(check: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


RESEARCH_CONFIG = """
[models.understand]
url = ""
[models.compose]
url = ""
[models.judge]
url = ""
[research]
search_url = ""
parallel = 1
"""
"""TOML of a research run with no model and no web search (the library, extractive)."""


def research_library(tmp_path: Path) -> list[Path]:
    """Two one-paragraph papers a research run's library search finds (market size, growth)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "size.md").write_text("# Size\n\nThe recycling market was worth 4.2 billion euros "
                                  "in 2023, the ministry's report says.\n")  # fmt: skip
    (docs / "growth.md").write_text("# Growth\n\nThe recycling market grew by 11% in 2023, "
                                    "according to the trade association.\n")  # fmt: skip
    return [docs / "size.md", docs / "growth.md"]
