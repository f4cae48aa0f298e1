"""The fallback rung is real (issue #33 item 4): with no stronger `cypher_fallback` model
bound (or one bound to the `cypher` model itself) it is a different strategy with `cypher` —
the full schema instead of the pruned one, examples retrieved for the failing pattern, more
candidates chosen by agreement — and `models probe` says which rung each role serves."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from graph_films import FILMS, NODES, RELS
from typer.testing import CliRunner

from footnote.cli import app
from footnote.config import GraphSettings
from footnote.events import CypherEvent
from footnote.index.graph.align import entity_index
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.context import ExampleRetriever
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.rungs import fallback_rung
from footnote.store.graph.base import Example, GraphSpec, GraphStore
from footnote.verify.cypher.guard import Principal
from footnote.workspace import Workspace, graph_catalog

BAD = "MATCH (p:Person)-[:DIRECTED]->(f:Film) WHERE f.yr > 2005 RETURN f.title AS title"
GOOD = ("MATCH (f:Film) WHERE f.year > 2005 RETURN f.title AS title",
        "MATCH (f:Film) WHERE f.year >= 2006 RETURN f.title AS title")  # fmt: skip
STUDIOS = {
    **FILMS,
    "name": "studios",
    "nodes": {**FILMS["nodes"], "Studio": {"properties": {"name": "STRING"}, "key": "name",
                                           "name": "name"}},
    "relationships": {**FILMS["relationships"], "EMPLOYS": {"from": "Studio", "to": "Person"}},
}  # fmt: skip
LIBRARY = [
    Example(question="How many films are there?", cypher="MATCH (f:Film) RETURN count(f) AS n"),
    Example(question="Who directed Red River?",
            cypher="MATCH (p:Person)-[:DIRECTED]->(f:Film) WHERE f.title = 'Red River' "
            "RETURN p.name"),
]  # fmt: skip


@pytest.fixture()
def studios(tmp_path: Path) -> Iterator[GraphStore]:
    catalog = graph_catalog(GraphSettings(dir=str(tmp_path)), tmp_path)
    rows = {**NODES, "Studio": [{"name": "North"}]}
    catalog.create(GraphSpec.model_validate(STUDIOS), rows,
                   {**RELS, "EMPLOYS": [{"from": "North", "to": "Ada Stone"}]})  # fmt: skip
    store = catalog.open("studios")
    yield store
    store.close()


def scripted(first: Sequence[str], then: Sequence[str] = ()) -> RoleModel:
    """`first` for the ladder's own tries, then `then` in turn (the fallback's candidates)."""
    replies = [*first, *then]

    def reply(messages: Sequence[Message]) -> str:
        return replies[min(len(model.calls) - 1, len(replies) - 1)]

    model = FakeChatModel(reply)
    return RoleModel("cypher", model, ledger=Ledger(), external=False)


async def ask(store: GraphStore, cypher: RoleModel, fallback: RoleModel | None = None,
              **cfg: Any) -> GraphQAPipeline:  # fmt: skip
    settings = GraphSettings(understand="rules", answer="template", retries=1, few_shot=1,
                             prune_schema=True, **cfg)  # fmt: skip
    deps = GraphDeps(store=store, index=entity_index(store, None, settings, None),
                     settings=settings, cypher_model=cypher, fallback_model=fallback,
                     examples=ExampleRetriever(LIBRARY))  # fmt: skip
    p = GraphQAPipeline(deps)
    p.events = [e async for e in p.run(GraphRequest("Which films are from after 2005?",  # type: ignore[attr-defined]
                                                    Principal(unrestricted=True)))]  # fmt: skip
    return p


def calls(model: RoleModel) -> list[list[Message]]:
    return model.model.calls  # type: ignore[attr-defined, no-any-return]


async def test_the_fallback_is_a_different_strategy_with_the_cypher_model(
    studios: GraphStore,
) -> None:
    cypher = scripted([BAD, BAD], [GOOD[0], GOOD[1], GOOD[0]])
    p = await ask(studios, cypher)
    assert p.outcome.status == "answered" and "Green Hill" in p.outcome.answer
    sources = [e.source for e in p.events if isinstance(e, CypherEvent)]  # type: ignore[attr-defined]
    assert sources == ["model", "retry", "fallback", "fallback", "fallback"]
    own, fallback = calls(cypher)[0][0].content, calls(cypher)[2][0].content
    assert "Studio" not in own and "Studio" in fallback  # pruned schema, then the whole one
    assert "Who directed Red River?" not in own  # retrieved for the question …
    assert "Who directed Red River?" in fallback  # … then for the failing DIRECTED pattern
    shown = calls(cypher)[2]  # the rejected query, with its error
    assert any(BAD in m.content for m in shown) and "unknown property f.yr" in shown[-1].content


async def test_fallback_candidates_zero_turns_the_rung_off(studios: GraphStore) -> None:
    cypher = scripted([BAD, BAD], [GOOD[0]])
    p = await ask(studios, cypher, fallback_candidates=0)
    assert p.outcome.status != "answered" and len(calls(cypher)) == 2


async def test_a_stronger_model_bound_takes_the_rung(studios: GraphStore) -> None:
    cypher = scripted([BAD, BAD], [GOOD[0]])
    stronger = RoleModel("cypher_fallback", FakeChatModel([GOOD[0]]), ledger=Ledger(),
                         external=False)  # fmt: skip
    p = await ask(studios, cypher, stronger)
    assert p.outcome.status == "answered" and len(calls(cypher)) == 2
    assert len(calls(stronger)) == 1


def test_the_rung_rule_and_its_wiring(tmp_path: Path) -> None:
    same = "openai+http://127.0.0.1:9/v1?model=small"
    other = "openai+http://127.0.0.1:9/v1?model=large"
    assert fallback_rung(same, "") == "strategy" and fallback_rung(same, same) == "strategy"
    assert fallback_rung(same, other) == "model"
    runner = CliRunner()
    for bound, wired in (("", False), (same, False), (other, True)):
        ws = Workspace.open(tmp_path / "ws", overrides={
            "graph": {"understand": "rules", "answer": "template"},
            "models": {"cypher": {"url": same}, "cypher_fallback": {"url": bound},
                       "embed": {"url": ""}},
        })  # fmt: skip
        ws.graph_catalog().create(GraphSpec.model_validate(FILMS), NODES, RELS, replace=True)
        pipe = ws.graph("films", user_groups=None)
        assert (pipe.deps.fallback_model is not None) is wired
        pipe.close()
        ws.close()
    env = {"FOOTNOTE_MODELS__CYPHER__URL": same, "FOOTNOTE_MODELS__CYPHER_FALLBACK__URL": same}
    res = runner.invoke(app, ["models", "probe", "cypher_fallback", "-w", str(tmp_path / "ws"),
                              "--json"], env=env)  # fmt: skip
    assert (
        "the same model as `cypher`" in res.output and "fallback rung as a strategy" in res.output
    )
    env["FOOTNOTE_MODELS__CYPHER_FALLBACK__URL"] = ""
    res = runner.invoke(app, ["models", "probe", "cypher_fallback", "-w", str(tmp_path / "ws")],
                        env=env)  # fmt: skip
    assert res.exit_code != 0 and "none (unbound)" in res.output
