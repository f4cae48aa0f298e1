"""Browser tests: Debian's Chromium driven by Playwright against a real `footnote serve`.

The server runs in a subprocess on a free loopback port with a fresh workspace and real,
fast embedded components (wordllama embeddings, extractive answers, no judge model).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from footnote.examples import PAPERS_DIR

ROOT = Path(__file__).resolve().parents[2]
PAPER = PAPERS_DIR / "literature-graph-semantic-scholar.pdf"
SHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
FAST_ENV = {
    "FOOTNOTE_MODELS__EMBED__URL": "local:wordllama",
    "FOOTNOTE_ASK__MODE": "extractive",
    "FOOTNOTE_ASK__USE_JUDGE": "false",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--readme-screenshots",
        action="store_true",
        help="write the README's screenshots over docs/ (test_readme_screenshots.py); "
        "without it they go to test-output/readme/",
    )


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's Chromium is not installed (apt-get install chromium)")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Launch Debian's Chromium (Playwright cannot download its own browser here)."""
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_FLAGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    """English by default, a laptop-sized window."""
    return {
        **browser_context_args,
        "locale": "en-US",
        "viewport": {"width": 1440, "height": 900},
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"footnote serve exited early:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/v1/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"footnote serve did not become healthy:\n{log.read_text()}")


@contextlib.contextmanager
def serving(ws: Path, log: Path) -> Iterator[str]:
    """`footnote serve` on a free loopback port over the workspace `ws` (its output in `log`);
    yields its base URL and stops it after."""
    port = _free_port()
    env = {**os.environ, **FAST_ENV, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    cmd = [str(Path(sys.executable).with_name("footnote")), "serve", "--host", "127.0.0.1",
           "--port", str(port), "--workspace", str(ws)]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`footnote serve` on a free loopback port over a fresh workspace; yields its base URL."""
    root = tmp_path_factory.mktemp("web")
    with serving(root / "ws", root / "server.log") as url:
        yield url


@pytest.fixture(scope="session")
def base_url(server: str) -> str:
    """pytest-playwright resolves relative `page.goto` paths against this."""
    return server


ApiCall = Callable[..., Any]


def _api(server: str, method: str, path: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"{server}{path}", data=data, method=method)
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as r:
        raw = r.read()
    return json.loads(raw) if raw else None


def upload(server: str, path: Path) -> dict[str, Any]:
    """Upload a file over multipart and wait until it is ingested."""
    boundary = "----footnote-test"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="{path.name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
    ).encode()
    body = head + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(f"{server}/v1/sources", data=body, method="POST")
    req.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    with urllib.request.urlopen(req, timeout=60) as r:
        source: dict[str, Any] = json.loads(r.read())
    deadline = time.monotonic() + 180
    while source["status"] == "processing" and time.monotonic() < deadline:
        time.sleep(0.5)
        source = _api(server, "GET", f"/v1/sources/{source['id']}")
    assert source["status"] == "ready", source
    return source


@pytest.fixture(scope="session")
def api(server: str) -> ApiCall:
    """`api(method, path, body=None)`: a JSON call to the server, for set-up and checks."""
    return lambda method, path, body=None: _api(server, method, path, body)


@pytest.fixture(scope="session")
def paper(server: str) -> dict[str, Any]:
    """The example paper, ingested (idempotent: a second upload reports it ready)."""
    return upload(server, PAPER)


@pytest.fixture(scope="session")
def shots() -> Path:
    """Where screenshots of the main screens are saved."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
