"""The deployment files are checked by tools made for them (the compose spec's JSON schema,
Kubernetes' OpenAPI schemas), and every FOOTNOTE_* variable they set names a real setting."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from footnote.config import Settings
from footnote.config.environment import ENV_PREFIX, _env_field

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install {name})")
    return path


def test_compose_file_matches_the_compose_spec(tmp_path: Path) -> None:
    tool = _tool("check-jsonschema")
    run = [tool, "--builtin-schema", "vendor.compose-spec"]
    ok = subprocess.run([*run, str(DEPLOY / "compose.yaml")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    broken = tmp_path / "compose.yaml"
    broken.write_text(
        (DEPLOY / "compose.yaml")
        .read_text()
        .replace(
            "    depends_on:\n      postgres:", "    depends_on:\n      postgres:\n        bogus: 1"
        )
    )
    assert subprocess.run([*run, str(broken)], capture_output=True).returncode != 0


def test_kubernetes_manifests_validate(tmp_path: Path) -> None:
    tool = _tool("kubernetes-validate")
    files = sorted((DEPLOY / "k8s").glob("*.yaml"))
    ok = subprocess.run([tool, *map(str, files)], capture_output=True, text=True)
    assert ok.returncode == 0 and "passed" in ok.stdout + ok.stderr, ok.stdout + ok.stderr
    broken = tmp_path / "bad.yaml"
    broken.write_text(files[0].read_text().replace("containerPort: 8765", "containerPort: web8765"))
    assert subprocess.run([tool, str(broken)], capture_output=True).returncode != 0


def test_every_variable_names_a_setting() -> None:
    text = "".join(p.read_text() for p in [DEPLOY / "compose.yaml", *(DEPLOY / "k8s").glob("*")])
    names = set(re.findall(r"\b(FOOTNOTE_[A-Z_]+)", text)) - {"FOOTNOTE_WORKSPACE"}
    assert names
    for name in names:
        path = name[len(ENV_PREFIX) :].lower().split("__")
        assert _env_field(path, Settings) is not None, name
