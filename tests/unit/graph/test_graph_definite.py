"""A definite reference its value does not narrow to one node is asked back (seen in the
embedded run, gd-062: "How many orders did the customer from Madrid place?" — three customers
are in Madrid — was answered with one customer's count)."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.config import GraphSettings
from footnote.index.graph.align import EntityIndex, entity_index
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.definite import definite_signals, references
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.base import GraphSpec, GraphStore
from footnote.verify.cypher.guard import Principal
from footnote.workspace import graph_catalog

SPEC = {"name": "shops", "nodes": {"Shop": {
    "properties": {"name": "STRING", "city": "STRING", "owner": "STRING"},
    "key": "name", "name": "name"}}, "relationships": {},
    "restricted": {"Shop": {"property": "owner", "attribute": "owners"}}}  # fmt: skip
ROWS = {"Shop": [
    {"name": "Ada's", "city": "Madrid", "owner": "ada"},
    {"name": "Bo", "city": "Madrid", "owner": "bo"},
    {"name": "Cy", "city": "Lyon", "owner": "ada"},
]}  # fmt: skip
OPENS = "MATCH (s:Shop) WHERE s.city = 'Madrid' RETURN s.name AS name"


@pytest.fixture()
def shops(tmp_path: Path) -> tuple[GraphStore, EntityIndex]:
    catalog = graph_catalog(GraphSettings(dir=str(tmp_path)), tmp_path)
    catalog.create(GraphSpec.model_validate(SPEC), ROWS, {})
    store = catalog.open("shops")
    return store, entity_index(store, None, GraphSettings(), catalog.folder("shops") / "align")


def test_definite_singular_references_to_a_label() -> None:
    spec = GraphSpec.model_validate(SPEC)
    assert references("When does the shop in Madrid open?", spec) == [
        ("Shop", "the shop in Madrid", "Madrid")
    ]
    assert references("When do the shops in Madrid open?", spec) == []  # plural: all of them
    assert references("When does the store in Madrid open?", spec) == []  # no such label
    assert references("Who owns the shop Bo?", spec) == []


def test_several_holders_ask_back_and_one_does_not(shops: tuple[GraphStore, EntityIndex]) -> None:
    store, index = shops
    asked: list[tuple[str, str, str]] = []

    def holders(label: str, prop: str, value: str) -> list[str]:
        asked.append((label, prop, value))
        return {"Madrid": ["Ada's", "Bo"], "Lyon": ["Cy"]}[value]

    two = definite_signals("When does the shop in madrid open?", store.spec, index, holders)
    assert asked == [] and two == []  # "madrid" is no capitalised value: not read as one
    two = definite_signals("When does the shop in Madrid open?", store.spec, index, holders)
    assert asked == [("Shop", "city", "Madrid")]
    assert [s.kind for s in two] == ["definite"] and two[0].options == ("Ada's", "Bo")
    assert "Ada's or Bo" in two[0].says
    assert definite_signals("When does the shop in Lyon open?", store.spec, index, holders) == []
    store.close()


async def test_the_pipeline_asks_back_from_the_graph_as_the_caller(
    shops: tuple[GraphStore, EntityIndex],
) -> None:
    store, index = shops
    cfg = GraphSettings(understand="rules", answer="template", retries=0, fallback_candidates=0)

    async def run(question: str, principal: Principal) -> GraphQAPipeline:
        writer = RoleModel("cypher", FakeChatModel([OPENS]), ledger=Ledger(), external=False)
        p = GraphQAPipeline(GraphDeps(store=store, index=index, settings=cfg, cypher_model=writer))
        _ = [e async for e in p.run(GraphRequest(question, principal))]
        return p

    p = await run("What is the name of the shop in Madrid?", Principal(unrestricted=True))
    assert p.outcome.status == "clarify", p.outcome.reason
    assert p.outcome.options == ["Ada's", "Bo"]
    # row permissions apply: the caller who sees only Ada's shops sees one shop in Madrid
    ada = Principal(id="ada", attributes={"owners": ("ada",)})
    one = await run("What is the name of the shop in Madrid?", ada)
    assert one.outcome.status == "answered", one.outcome.reason
    assert one.outcome.rows == [{"name": "Ada's"}]
    store.close()
