"""Shared by the suites of issue #15: the tally of tried / blocked / lost, a live server."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn

from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

COUNTS: dict[str, dict[str, int]] = {}
REPORT = Path(__file__).resolve().parents[2] / "test-output" / "suite-counts.json"
FAST: dict[str, Any] = {
    "models": {"embed": {"url": "local:wordllama"}},
    "ask": {"mode": "extractive", "use_judge": False},
}


@dataclass
class Tally:
    """tried / blocked / lost of one suite (plus free-form notes, e.g. what was counted)."""

    suite: str

    def add(self, tried: int = 0, blocked: int = 0, lost: int = 0) -> None:
        c = COUNTS.setdefault(self.suite, {"tried": 0, "blocked": 0, "lost": 0})
        c["tried"] += tried
        c["blocked"] += blocked
        c["lost"] += lost

    @property
    def lost(self) -> int:
        return COUNTS.get(self.suite, {}).get("lost", 0)


def tally(suite: str) -> Tally:
    """The tally of `suite` (created on first use)."""
    COUNTS.setdefault(suite, {"tried": 0, "blocked": 0, "lost": 0})
    return Tally(suite)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """The app under uvicorn on a free loopback port, in a background thread."""

    def __init__(self, ws: Workspace, deps: ServerDeps | None = None) -> None:
        self.app = create_app(ws, deps or ServerDeps(use_models=False))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="error")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)


FRESH_PROCESS = ("/bin/sh", "-c", '"$@"; exit $?', "sh")
"""Prefix that starts a command as a *fork of a small shell*, not of this process. Linux keeps
a process's peak RSS (`getrusage` `ru_maxrss`) across `execve`, and a child forked from a
pytest process that loaded models inherits that peak: libFuzzer's `-rss_limit_mb` then reads
the parent's memory as the fuzzer's and reports an out-of-memory at the first input. The
shell runs the command as its own child (the `exit` keeps it from exec-ing in place)."""


def in_fresh_process(cmd: list[str]) -> list[str]:
    """`cmd` started through `FRESH_PROCESS`, so its peak RSS counts only its own memory."""
    return [*FRESH_PROCESS, *cmd]
