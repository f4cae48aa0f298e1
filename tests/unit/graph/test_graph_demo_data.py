"""The README's graph commands on a fresh clone: the movies and northwind demo data ship in
the package (compact, with their licences recorded), so `footnote graph demo` needs no
`../shared`; `graph.data_dir` still reads the upstream files when it holds them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from footnote.cli import app
from footnote.examples import EXAMPLES_DIR, GRAPHS_DIR
from footnote.pipelines.graph.sources import demo_rows

runner = CliRunner()


@pytest.fixture()
def no_models(monkeypatch: pytest.MonkeyPatch) -> None:
    for role in ("UNDERSTAND", "CYPHER", "COMPOSE", "EMBED"):
        monkeypatch.setenv(f"FOOTNOTE_MODELS__{role}__URL", "")


def _demo(name: str, ws: Path, data_dir: Path) -> dict[str, int]:
    res = runner.invoke(
        app, ["graph", "demo", name, "-w", str(ws), "--json"],
        env={"FOOTNOTE_GRAPH__DATA_DIR": str(data_dir), "COLUMNS": "300"},
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    counts: dict[str, int] = json.loads(res.stdout)["counts"]
    return counts


def test_readme_graph_commands_work_without_shared_data(tmp_path: Path, no_models: None) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    ws = tmp_path / "ws"
    movies = _demo("movies", ws, empty)
    assert (movies["Movie"], movies["Person"], movies["ACTED_IN"]) == (38, 133, 172)
    res = runner.invoke(app, ["graph", "ask", "movies", "Who directed The Matrix?", "-w", str(ws),
                              "--json"], env={"FOOTNOTE_GRAPH__DATA_DIR": str(empty)})  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["status"] == "answered"
    assert {r["director"] for r in data["rows"]} == {"Lana Wachowski", "Lilly Wachowski"}
    north = _demo("northwind", ws, empty)
    assert (north["Product"], north["Category"], north["Supplier"]) == (77, 8, 29)
    assert (north["Customer"], north["Order"], north["ORDERS"]) == (91, 830, 2155)


def test_data_dir_with_upstream_files_is_read_instead(tmp_path: Path) -> None:
    """`graph.data_dir` has an effect: when it holds the upstream layout, that is imported."""
    data = tmp_path / "data"
    (data / "neo4j-example-graphs" / "movies").mkdir(parents=True)
    (data / "neo4j-example-graphs" / "movies" / "movies.cypher").write_text(
        "CREATE (M:Movie {title:'Only One', released:2020, tagline:'x'})\n"
        "CREATE (P:Person {name:'Solo Person', born:1990})\n"
        "CREATE (P)-[:ACTED_IN {roles:['Me']}]->(M)\n",
        encoding="utf-8",
    )
    counts = _demo("movies", tmp_path / "ws", data)
    assert (counts["Movie"], counts["Person"], counts["ACTED_IN"]) == (1, 1, 1)


def test_bundled_data_is_compact_and_attributed() -> None:
    data = [p for p in GRAPHS_DIR.rglob("*") if p.is_file() and p.name != "graph.json"]
    assert {p.parent.name for p in data} >= {"movies", "northwind"}
    shipped = sum(p.stat().st_size for p in data if p.name != "COPYING")
    assert shipped < 80_000, shipped  # compressed: the upstream files are ~300 kB
    attribution = (EXAMPLES_DIR / "ATTRIBUTION.md").read_text(encoding="utf-8")
    for needed in ("graphs/movies/", "GPL-3.0", "graphs/northwind/", "MIT", "Microsoft"):
        assert needed in attribution, needed
    assert "GNU GENERAL PUBLIC LICENSE" in (GRAPHS_DIR / "movies" / "COPYING").read_text("utf-8")


def test_bundled_northwind_rows_are_whole() -> None:
    """Upstream CSV rows with an unquoted comma shift every later column (an order's
    `shipCountry`, which permissions filter on, became its postal code); the bundled copy
    holds them whole."""
    nodes, _ = demo_rows("northwind")
    assert "Pavlova, Ltd." in {s["companyName"] for s in nodes["Supplier"]}
    countries = {c["country"] for c in nodes["Customer"]}
    assert {o["shipCountry"] for o in nodes["Order"]} <= countries
