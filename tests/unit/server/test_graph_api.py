"""Graph QA over HTTP (issue #19): `GET /v1/graphs` and `POST /v1/graph/ask` on the films
graph (real LadybugDB, real SQLite auth), the principal and its row filters from the API
key's user — never from the body — typed SSE events, runs traced, the server's LIMIT."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from server_support import StubAsk, parse_sse, wait_run

from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.server import create_app
from footnote.server.state import ServerDeps, ServerState
from footnote.store.graph.base import GraphSpec
from footnote.workspace import Workspace

_path = Path(__file__).resolve().parents[2] / "data" / "graph_films.py"
_spec = importlib.util.spec_from_file_location("graph_films_server", _path)
assert _spec is not None and _spec.loader is not None
films = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(films)

ALL_FILMS = "MATCH (f:Film) RETURN f.title AS title, f.region AS region ORDER BY title"


@pytest.fixture()
def app_ws(tmp_path: Path) -> Iterator[tuple[TestClient, Workspace, dict[str, dict[str, str]]]]:
    ws = Workspace.open(tmp_path / "ws", overrides={"graph": {"understand": "rules",
                                                              "answer": "template"}})  # fmt: skip
    catalog = ws.graph_catalog()
    catalog.create(GraphSpec.model_validate(films.FILMS), films.NODES, films.RELS)
    secret = {**films.FILMS, "name": "secret", "acl_groups": ["finance"], "labels": ["internal"]}
    catalog.create(GraphSpec.model_validate(secret), films.NODES, films.RELS)
    cypher = RoleModel("cypher", FakeChatModel(lambda _m: ALL_FILMS), ledger=Ledger(),
                       external=False)  # fmt: skip
    deps = ServerDeps(ask=StubAsk(), use_models=False, graph_models={"cypher": cypher})
    app = create_app(ws, deps)
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        state: ServerState = c.app.state.footnote  # type: ignore[attr-defined]
        keys = {
            "alice": {"X-API-Key": state.auth.add_key("alice", ("regions:US",))},
            "bob": {"X-API-Key": state.auth.add_key("bob", ("regions:EU", "finance"))},
        }
        yield c, ws, keys
    ws.close()


def ask(client: TestClient, who: dict[str, str], question: str, graph: str = "films",
        **extra: Any) -> tuple[int, list[dict[str, Any]], str]:  # fmt: skip
    body = {"graph": graph, "question": question, **extra}
    with client.stream("POST", "/v1/graph/ask", json=body, headers=who) as resp:
        if resp.status_code != 200:
            resp.read()
            return resp.status_code, [], ""
        return 200, parse_sse(resp.iter_lines()), resp.headers["x-run-id"]


def of(frames: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [f["data"] for f in frames if f["event"] == kind]


def test_graphs_listed_by_acl(app_ws) -> None:
    client, _, keys = app_ws
    assert [g["name"] for g in client.get("/v1/graphs", headers=keys["alice"]).json()] == ["films"]
    both = client.get("/v1/graphs", headers=keys["bob"]).json()
    assert [g["name"] for g in both] == ["films", "secret"]
    assert both[1]["labels"] == ["internal"] and both[1]["restricted"] == ["Film"]
    assert client.get("/v1/graphs").status_code == 401
    status, _, _ = ask(client, keys["alice"], "Which films did Ada Stone act in?", graph="secret")
    assert status == 404  # a graph the caller may not see does not exist for them


def test_requests_open_the_alignment_index_and_never_build_it(app_ws) -> None:
    """The alias table was built when the graph was imported; requests only open it."""
    from footnote.index.graph.aliases import BUILDS

    client, _, keys = app_ws
    before = dict(BUILDS)
    for _ in range(2):
        status, frames, _ = ask(client, keys["alice"], "Which films did Ada Stone act in?")
        assert status == 200 and of(frames, "answer")[0]["status"] == "answered"
    assert dict(BUILDS) == before


def test_a_session_carries_the_conversation_for_its_own_caller(app_ws) -> None:
    """`session` names a conversation: the follow-up is understood from the caller's earlier
    turn (rebuilt from their recorded runs); the same name is a fresh session for another."""
    client, _, keys = app_ws
    body = {"graph": "films", "question": "Which films did Ada Stone act in?", "session": "s1"}
    with client.stream("POST", "/v1/graph/ask", json=body, headers=keys["alice"]) as resp:
        assert resp.headers["x-session-id"] == "s1"
        wait_run(client, resp.headers["x-run-id"], keys["alice"])
    _, frames, _ = ask(client, keys["alice"], "and when was she born?", session="s1")
    answer = of(frames, "answer")[0]
    assert answer["status"] == "answered" and answer["text"] == "Ada Stone was born in 1970."
    _, frames, _ = ask(client, keys["bob"], "and when was she born?", session="s1")
    assert "Ada Stone" not in of(frames, "answer")[0]["text"]  # bob's s1 is his own: no Ada
    _, alone, _ = ask(client, keys["alice"], "and when was she born?")
    assert "Ada Stone" not in of(alone, "answer")[0]["text"]  # no session: no history
    assert ask(client, keys["alice"], "x", session="bad id!")[0] == 422


def test_typed_events_and_row_footnotes(app_ws) -> None:
    client, _, keys = app_ws
    status, frames, run_id = ask(client, keys["alice"], "Which films did Ada Stone act in?")
    assert status == 200
    kinds = [f["event"] for f in frames]
    order = [kinds.index(k) for k in ("intent", "entities", "cypher", "guard", "rows", "answer")]
    assert order == sorted(order) and kinds[-1] == "done"
    answer = of(frames, "answer")[0]
    assert answer["status"] == "answered" and answer["text"] == "Blue Lake (1999)."
    assert answer["sentences"][0]["rows"] == ["row:0"] and answer["support"] == 1.0
    assert of(frames, "rows")[0]["rows"] == [["Blue Lake", 1999]]  # alice: US films only
    run = wait_run(client, run_id, keys["alice"])
    assert run["kind"] == "graph" and run["status"] == "completed"
    trace = client.get(f"/v1/runs/{run_id}/trace", headers=keys["alice"]).json()
    assert "guard" in str(trace) and "query" in str(trace)
    assert client.get(f"/v1/runs/{run_id}", headers=keys["bob"]).status_code == 404


def test_row_filter_comes_from_the_key_not_the_body(app_ws) -> None:
    client, _, keys = app_ws
    q = "List every film with its region"
    widen = {"principal": {"id": "bob", "attributes": {"regions": ["EU", "US"]}}}
    assert ask(client, keys["alice"], q, **widen)[0] == 422
    assert ask(client, keys["alice"], q, attributes={"regions": ["EU"]})[0] == 422
    # bob's request (EU) in between cannot change what alice's (US) filter lets through
    _, alice1, _ = ask(client, keys["alice"], q)
    _, bob, _ = ask(client, keys["bob"], q)
    _, alice2, _ = ask(client, keys["alice"], q)
    assert of(alice1, "rows")[0]["rows"] == of(alice2, "rows")[0]["rows"] == [["Blue Lake", "US"]]
    assert of(bob, "rows")[0]["rows"] == [["Green Hill", "EU"], ["Red River", "EU"]]
    guard = next(g for g in of(alice2, "guard") if g["ok"])
    assert "$__allow_Film" in guard["cypher"] and guard["cypher"].endswith("LIMIT 201")
    assert "LIMIT 201" in guard["injected"]


def test_library_graph_per_caller(app_ws, tmp_path: Path) -> None:
    client, ws, keys = app_ws
    for name, acl in (("pub", []), ("eu", ["regions:EU"])):
        doc = tmp_path / f"{name}.md"
        doc.write_text(f"# Paper {name}\n\n## Method\n\nA paragraph long enough to be a block.\n")
        ws.ingest([doc], index=False, acl_groups=acl)
    made = client.post("/v1/graphs/library", headers=keys["alice"])
    assert made.status_code == 201, made.text
    alice_graph = made.json()["name"]
    assert made.json()["acl_groups"] == []  # only the public paper: alice cannot read "eu"
    bob_made = client.post("/v1/graphs/library", headers=keys["bob"]).json()
    assert bob_made["acl_groups"] == ["regions:EU"]
    alice_sees = [g["name"] for g in client.get("/v1/graphs", headers=keys["alice"]).json()]
    assert alice_graph in alice_sees and bob_made["name"] not in alice_sees
    store = ws.graph_catalog().open(alice_graph)
    try:
        titles = store.query("MATCH (p:Paper) RETURN p.title AS t", {}, limit=10, timeout_s=5).rows
    finally:
        store.close()
    assert titles == (("Paper pub",),)
