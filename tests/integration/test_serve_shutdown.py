"""`footnote serve` stops on SIGTERM (what `docker stop`, Kubernetes and a terminal send). With
the job queue's embedded worker started in the server process, huey's consumer installed its
own SIGTERM handler over uvicorn's, and the server never stopped (the docs test's server did
not end within 20 s of `terminate()`); only `footnote worker` owns the signals now."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from live import free_port

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_serve_stops_on_sigterm_with_its_job_worker_running(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "FOOTNOTE_JOBS__SERVER_THREADS": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "footnote.cli", "serve", "--port", str(port), "-w", "ws"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        for _ in range(600):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise AssertionError("footnote serve did not start")
        server.send_signal(signal.SIGTERM)
        # uvicorn shuts down gracefully, then re-raises the signal so the exit status tells it
        assert server.wait(30) in (0, -signal.SIGTERM)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
