"""Graph QA end to end on a real LadybugDB holding the movies demo graph (shared data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from footnote.cli import app
from footnote.config import GraphSettings
from footnote.index.graph.align import entity_index
from footnote.models.fake import FakeChatModel, HashEmbedder
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.sources import demo_data_dir
from footnote.store.graph.base import GraphQueryError
from footnote.verify.cypher.guard import GraphGuard, Principal
from footnote.workspace import graph_catalog

try:
    demo_data_dir(GraphSettings())
    HAVE_DATA = True
except Exception:
    HAVE_DATA = False

pytestmark = [
    pytest.mark.integration,
    pytest.mark.shared,
    pytest.mark.skipif(not HAVE_DATA, reason="../shared/data/neo4j-example-graphs is absent"),
]
runner = CliRunner()


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ws")
    res = runner.invoke(app, ["graph", "demo", "movies", "-w", str(path), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["counts"]["Movie"] == 38
    return path


def ask_json(ws: Path, question: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    for role in ("UNDERSTAND", "CYPHER", "COMPOSE", "EMBED"):
        monkeypatch.setenv(f"FOOTNOTE_MODELS__{role}__URL", "")
    res = runner.invoke(app, ["graph", "ask", "movies", question, "-w", str(ws), "--json"])
    assert res.exit_code == 0, res.output
    data: dict[str, object] = json.loads(res.stdout)
    return data


def test_template_path_through_the_cli(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = ask_json(ws, "Who directed The Matrix?", monkeypatch)
    assert data["status"] == "answered" and data["params"] == {"movie": "The Matrix"}
    rows: list[dict[str, str]] = data["rows"]  # type: ignore[assignment]
    assert {r["director"] for r in rows} == {"Lana Wachowski", "Lilly Wachowski"}
    assert "The Matrix" not in str(data["cypher"])
    assert set(data) >= {"status", "answer", "cypher", "params", "rows", "reason"}


def test_ls_lists_the_graph(ws: Path) -> None:
    res = runner.invoke(app, ["graph", "ls", "-w", str(ws), "--json"])
    assert [g["name"] for g in json.loads(res.stdout)] == ["movies"]


def test_clarify_and_refuse_statuses(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask_json(ws, "What movies did Tom act in?", monkeypatch)["status"] == "clarify"
    assert (
        ask_json(ws, "How many movies have more than 3 actors?", monkeypatch)["status"] == "refused"
    )


async def test_generated_path_with_a_fake_model(ws: Path) -> None:
    cat = graph_catalog(GraphSettings(), ws)
    store = cat.open("movies")
    model = RoleModel("cypher", FakeChatModel([
        "```cypher\nMATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE p.name = $person "
        "RETURN count(m) AS movies\n```"
    ]), ledger=Ledger(), external=False)  # fmt: skip
    cfg = GraphSettings(understand="rules", answer="template")
    pipe = GraphQAPipeline(GraphDeps(store, entity_index(store, HashEmbedder(), cfg, None), cfg,
                                     cypher_model=model))  # fmt: skip
    async for _ in pipe.run(GraphRequest("How many movies has Tom Hanks been in?")):
        pass
    store.close()
    assert pipe.outcome.source == "model" and pipe.outcome.params == {"person": "Tom Hanks"}
    assert pipe.outcome.rows == [{"movies": 12}] and pipe.outcome.answer == "The answer is 12."


def test_explain_rejects_what_the_static_check_cannot_see(ws: Path) -> None:
    store = graph_catalog(GraphSettings(), ws).open("movies")
    try:
        with pytest.raises(GraphQueryError, match="Actor"):
            store.explain("MATCH (a:Actor) RETURN a", {})
        v = GraphGuard(store).check("MATCH (p:Person) WITH p AS x RETURN x.title", {}, Principal())
        assert not v.ok and "does not compile" in v.reason
        with pytest.raises(GraphQueryError, match="read-only"):
            store.query("CREATE (:Person {name: 'x'})", {}, limit=1, timeout_s=5)
    finally:
        store.close()


def test_graph_questions_are_traced_runs(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from footnote.store.sqlite import SqliteRunStore
    from footnote.workspace import Workspace

    data = ask_json(ws, "Who directed The Matrix?", monkeypatch)
    run_id = str(data["run_id"])
    w = Workspace.open(ws)
    try:
        runs = SqliteRunStore(w.store)
        run = runs.get_run(run_id)
        spans = [(s.kind, s.name) for s in runs.spans(run_id)]
    finally:
        w.close()
    assert run is not None and run["kind"] == "graph" and run["status"] == "answered"
    assert run["input"]["question"] == "Who directed The Matrix?"
    assert run["output"]["cypher"] == data["cypher"]
    kinds = [k for k, _ in spans]
    assert kinds == ["understand", "align", "route", "guard", "query", "compose"]
    assert ("route", "template") in spans
