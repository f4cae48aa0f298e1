"""A real OpenAI-compatible server (llama-cpp-python's) on loopback, for integration tests."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from footnote.errors import ProviderUnavailable
from footnote.models import ensure_gguf


def gguf_05b() -> Path:
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("fastapi") is None:
        pytest.skip("llama-cpp-python[server] is not installed")
    try:
        return ensure_gguf("qwen2.5-coder-0.5b")
    except ProviderUnavailable as exc:
        pytest.skip(str(exc))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """`python -m llama_cpp.server` with the embedded 0.5B model on a free loopback port."""

    def __init__(self, model: Path, log: Path) -> None:
        self.port = _free_port()
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1"}
        self.log = log.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(model),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_ctx",
                "2048",
                "--n_threads",
                "2",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self.url = f"openai+http://127.0.0.1:{self.port}/v1?model=qwen-0.5b"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited; see {log}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v1/models", timeout=1)
                return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not start in 90 s; see {log}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()
