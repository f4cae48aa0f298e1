"""Outside a checkout (a wheel install) the bundled examples are found as package data, and
the demo graphs — whose upstream data states no licence, so it is not bundled — say where
to get their data."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from footnote.cli import app
from footnote.examples import GRAPHS_DIR, PAPERS_DIR


def test_examples_are_package_data() -> None:
    assert PAPERS_DIR.is_dir() and any(PAPERS_DIR.glob("*.pdf"))
    assert (GRAPHS_DIR / "movies").is_dir() and (GRAPHS_DIR / "northwind").is_dir()
    assert PAPERS_DIR.parent.parent.name == "footnote"  # inside the package, not the checkout


def test_demo_graph_without_its_data_says_where_to_get_it(tmp_path: Path) -> None:
    empty = tmp_path / "data"
    empty.mkdir()
    runner = CliRunner()
    for name, repo, path in (("movies", "neo4j-graph-examples/movies", "scripts/movies.cypher"),
                             ("northwind", "neo4j-graph-examples/northwind", "import/*.csv")):  # fmt: skip
        res = runner.invoke(
            app, ["graph", "demo", name, "-w", str(tmp_path / "ws")],
            env={"FOOTNOTE_GRAPH__DATA_DIR": str(empty), "COLUMNS": "300"},
        )  # fmt: skip
        assert res.exit_code == 1
        text = " ".join(res.output.split())
        assert repo in text and path in text, text
        assert "no licence" in text and "graph.data_dir" in text
        assert str(empty / "neo4j-example-graphs" / name) in text
