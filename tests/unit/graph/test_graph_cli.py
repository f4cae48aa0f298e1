"""`footnote graph ask` prints the answer with a footnote per cited row, and the rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from graph_films import FILMS, NODES, RELS
from typer.testing import CliRunner

from footnote.cli import app
from footnote.config import GraphSettings
from footnote.store.graph.base import GraphSpec
from footnote.workspace import graph_catalog

runner = CliRunner()


@pytest.fixture()
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for role in ("UNDERSTAND", "CYPHER", "COMPOSE", "EMBED"):
        monkeypatch.setenv(f"FOOTNOTE_MODELS__{role}__URL", "")
    path = tmp_path / "ws"
    graph_catalog(GraphSettings(), path).create(GraphSpec.model_validate(FILMS), NODES, RELS)
    return path


def test_ask_prints_row_footnotes(ws: Path) -> None:
    res = runner.invoke(app, ["graph", "ask", "films", "Which films did Ada Stone act in?",
                              "-w", str(ws)])  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "Blue Lake (1999).[1] Red River (2001).[2]"
    assert lines[1].split() == ["[1]", "row:0", "title:", "Blue", "Lake;", "year:", "1999"]
    assert lines[2].split()[:2] == ["[2]", "row:1"]
    assert "support 1.00" in res.stdout


def test_ask_json_carries_sentences_with_rows(ws: Path) -> None:
    res = runner.invoke(app, ["graph", "ask", "films", "Which films did Ada Stone act in?",
                              "-w", str(ws), "--json"])  # fmt: skip
    data = json.loads(res.stdout)
    assert [s["rows"] for s in data["sentences"]] == [["row:0"], ["row:1"]]
    assert data["support"] == 1.0


def test_clarify_prints_the_options(ws: Path) -> None:
    res = runner.invoke(app, ["graph", "ask", "films", "Which films did Stone act in?",
                              "-w", str(ws)])  # fmt: skip
    assert "could mean" in res.stdout and "  - Ada Stone" in res.stdout
