"""Imports point down the layers of design §3; siblings on one layer stay apart; files stay small."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "footnote"
MAX_LINES = 600

# Layer of each top-level module or package under footnote/. L0 modules may import the
# L0 modules listed before them (errors <- types <- textnorm <- events).
LAYERS: dict[str, float] = {
    "errors": 0.0,
    "types": 0.1,
    "textnorm": 0.2,
    "events": 0.3,
    "config": 1,
    "prompts": 1,
    "ingest": 2,
    "store": 2,
    "models": 2,
    "index": 3,
    "verify": 3,
    "agent": 4,
    "pipelines": 5,
    "workspace": 6,
    "server": 7,
    "web": 7,
    "eval": 7,
    "cli": 8,
}


def _unit_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _imported_units(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "footnote" and len(parts) > 1:
                found.add(parts[1])
    return found


PY_FILES = sorted(p for p in SRC.rglob("*.py") if p.name != "__init__.py" or p.parent != SRC)


def test_every_unit_has_a_layer() -> None:
    units = {_unit_of(p) for p in PY_FILES}
    assert units <= set(LAYERS), f"modules without a layer: {units - set(LAYERS)}"


@pytest.mark.parametrize("path", PY_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_point_down(path: Path) -> None:
    unit = _unit_of(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for target in _imported_units(tree) - {unit}:
        assert target in LAYERS, f"{path}: imports unknown footnote.{target}"
        assert LAYERS[target] < LAYERS[unit], (
            f"{path.relative_to(SRC)} (layer {LAYERS[unit]}) imports footnote.{target} "
            f"(layer {LAYERS[target]}): imports must point down, siblings stay apart"
        )


@pytest.mark.parametrize("path", PY_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_file_size_budget(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(SRC)} has {lines} lines; split it"
