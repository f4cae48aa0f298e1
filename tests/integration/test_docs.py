"""The docs site: `mkdocs build --strict` (API reference from the docstrings) succeeds, and
every example on the surface pages runs — Python blocks as scripts, bash blocks as shell
commands (against a live `footnote serve` where a page needs one), TOML blocks validated
against the settings tree — in a folder with `paper.md` and a workspace `ws/` (WordLlama,
extractive answers), as docs/index.md says."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live import CONFIG, PAPER, free_port

from footnote.config import load_settings

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SESSION = "a page's python blocks run as one script, in order"
PAGES = ["python.md", "terminal.md", "mcp.md", "openai.md", "models.md", "telemetry.md"]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks(page: str, lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall((DOCS / page).read_text("utf-8")) if kind == lang]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str], int]]:
    root = tmp_path_factory.mktemp("docs")
    (root / "ws").mkdir()
    (root / "ws" / "config.toml").write_text(CONFIG, encoding="utf-8")
    (root / "paper.md").write_text(PAPER, encoding="utf-8")
    # `footnote` on PATH runs this checkout (an MCP client starts it with a bare environment)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "footnote"
    launcher.write_text(
        f'#!/bin/sh\nPYTHONPATH={ROOT / "src"} exec {sys.executable} -m footnote.cli "$@"\n'
    )
    launcher.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1",
           "PATH": f"{bin_dir}:{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}  # fmt: skip
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "footnote.cli", "serve", "--port", str(port), "-w", "ws"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(200):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise AssertionError("footnote serve did not start")
        yield root, env, port
    finally:
        server.terminate()
        server.wait(20)


def test_mkdocs_builds_strictly_with_the_api_reference(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs, "mkdocs is installed by scripts/setup (the docs extra)"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([mkdocs, "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text("utf-8")
    assert "ask_events" in api and "Answer a question" in api


@pytest.mark.parametrize("page", PAGES)
def test_every_example_runs(page: str, folder: tuple[Path, dict[str, str], int]) -> None:
    root, env, port = folder
    python = blocks(page, "python")
    if python:  # a page's blocks are one session, as a reader runs them in turn
        code = "\n".join(python).replace("8765", str(port))
        script = root / f"{page}.py"
        script.write_text(code, encoding="utf-8")
        done = subprocess.run([sys.executable, str(script)], cwd=root, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, f"{page} python:\n{done.stderr[-3000:]}"
        assert done.stdout.strip(), f"{page} python printed nothing"
    for code in blocks(page, "bash"):
        for line in code.splitlines():
            command = line.split("#", 1)[0].strip()
            if not command:
                continue
            done = subprocess.run(["bash", "-c", command], cwd=root, env=env,
                                  capture_output=True, text=True, timeout=300)  # fmt: skip
            assert done.returncode == 0, f"{page} bash {command!r}:\n{done.stderr[-3000:]}"
    for i, toml in enumerate(blocks(page, "toml")):
        ws = root / f"toml-{page}-{i}"
        ws.mkdir()
        (ws / "config.toml").write_text(toml, encoding="utf-8")
        load_settings(ws)  # raises ConfigError for an unknown or invalid setting


def test_every_surface_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text("utf-8")
    assert all(p in nav for p in PAGES)


def test_footnote_serve_mounts_mcp_and_metrics(folder: tuple[Path, dict[str, str], int]) -> None:
    """The MCP endpoint and /metrics exist on `footnote serve` itself (not only in tests)."""
    _, _, port = folder
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "docs", "version": "1"}}}  # fmt: skip
    headers = {"Accept": "application/json, text/event-stream"}
    resp = httpx.post(f"http://127.0.0.1:{port}/mcp", json=init, headers=headers, timeout=10)
    assert resp.status_code == 200 and "footnote" in resp.text
    metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
    assert metrics.status_code == 200 and "footnote_runs_total" in metrics.text
