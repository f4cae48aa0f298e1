"""`graph import` from CSV/JSON with a declared schema, and the library's own graph."""

from __future__ import annotations

import json
from pathlib import Path

import graph_films  # type: ignore[import-not-found]  # registered by conftest.py
import pytest
from typer.testing import CliRunner

from footnote.cli import app
from footnote.config import GraphSettings
from footnote.pipelines.graph.sources import library_rows, library_spec, parse_create_script
from footnote.workspace import Workspace, graph_catalog

runner = CliRunner()


def test_import_csv_and_json_then_ask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for role in ("UNDERSTAND", "CYPHER", "COMPOSE", "EMBED"):
        monkeypatch.setenv(f"FOOTNOTE_MODELS__{role}__URL", "")
    (tmp_path / "schema.json").write_text(json.dumps(graph_films.FILMS))
    (tmp_path / "Person.csv").write_text("name,born\n" + "\n".join(
        f"{p['name']},{p['born']}" for p in graph_films.NODES["Person"]))  # fmt: skip
    (tmp_path / "Film.json").write_text(json.dumps(graph_films.NODES["Film"]))
    (tmp_path / "ACTED_IN.json").write_text(
        "\n".join(json.dumps(r) for r in graph_films.RELS["ACTED_IN"])
    )
    ws = tmp_path / "ws"
    files = [str(tmp_path / n) for n in ("Person.csv", "Film.json", "ACTED_IN.json")]
    res = runner.invoke(app, ["graph", "import", "films", "--schema", str(tmp_path / "schema.json"),
                              *files, "-w", str(ws), "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["counts"] == {"Person": 4, "Film": 3, "ACTED_IN": 4}
    res = runner.invoke(
        app, ["graph", "ask", "films", "When was Dee Park born?", "-w", str(ws), "--json"]
    )
    assert json.loads(res.stdout)["answer"] == "Dee Park was born in 1990."
    res = runner.invoke(app, ["graph", "ask", "films", "Which films did Ada Stone act in?",
                              "--attr", "regions=US", "-w", str(ws), "--json"])  # fmt: skip
    assert [r["title"] for r in json.loads(res.stdout)["rows"]] == ["Blue Lake"]


def test_create_script_parser() -> None:
    nodes, rels = parse_create_script(
        "CREATE (A:Person {name:'Ann', born:1960})\nCREATE (M:Movie {title:\"X\", tags:['a','b']})\n"
        "CREATE (A)-[:ACTED_IN {roles:['Eve']}]->(M), (A)-[:DIRECTED]->(M);"
    )
    assert nodes == {
        "Person": [{"name": "Ann", "born": 1960}],
        "Movie": [{"title": "X", "tags": ["a", "b"]}],
    }
    assert rels["ACTED_IN"][0]["roles"] == ["Eve"] and rels["DIRECTED"][0]["to"] == {
        "title": "X",
        "tags": ["a", "b"],
    }


def test_library_graph_from_the_store(tmp_path: Path) -> None:
    doc = tmp_path / "paper.md"
    doc.write_text(
        "# Graph paper\n\n## Method\n\nWe follow prior work [1].\n\n## References\n\n"
        "[1] Smith, J. Graphs for everyone. 2019.\n\n[2] Lee, K. Cypher at scale. 2021.\n"
    )
    with Workspace.open(tmp_path / "ws") as ws:
        report = ws.ingest([doc], index=False)
        assert not report.failed
        nodes, rels = library_rows(ws.store)
        counts = graph_catalog(GraphSettings(), ws.dir).create(library_spec(), nodes, rels)
        assert counts["Paper"] == 1 and counts["Section"] >= 2
        store = graph_catalog(GraphSettings(), ws.dir).open("library")
        rows = store.query("MATCH (p:Paper)-[:HAS_SECTION]->(s:Section) RETURN s.title AS t",
                           {}, limit=50, timeout_s=5).rows  # fmt: skip
        store.close()
    assert ("Method",) in rows
