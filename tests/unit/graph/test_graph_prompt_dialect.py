"""The Cypher prompt speaks the store's dialect (LadybugDB `label(r)`, FalkorDB `type(r)`),
and the schema it shows carries example values taken at import (never of a restricted label)."""

from __future__ import annotations

from graph_films import FILMS

from footnote.config import GraphSettings
from footnote.events import Event
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.cypher import cypher_messages
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.base import GraphSpec
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal

SPEC = GraphSpec.model_validate(FILMS)


def test_the_prompt_follows_the_backend() -> None:
    kuzu = cypher_messages(SPEC, "q", {}, backend="ladybug")[0].content
    falkor = cypher_messages(SPEC, "q", {}, backend="falkordb")[0].content
    assert "label(r)" in kuzu and "LadybugDB" in kuzu and "type(r)` for" not in kuzu
    assert "type(r)" in falkor and "FalkorDB" in falkor and "label(r)` for" not in falkor


async def test_the_schema_shown_carries_example_values(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    assert films.spec.samples["Person"]["name"][:2] == ["Ada Stone", "Ben Stone"]
    assert "Film" not in films.spec.samples  # restricted by region: its values stay unseen
    model = FakeChatModel(["MATCH (f:Film) RETURN count(f) AS films"])
    cfg = GraphSettings(understand="rules", answer="template", prune_schema=False)
    p = GraphQAPipeline(GraphDeps(store=films, index=films_index, settings=cfg,
                                  cypher_model=RoleModel("cypher", model, ledger=Ledger(), external=False)))  # fmt: skip
    _: list[Event] = [
        e
        async for e in p.run(
            GraphRequest("How many films exist in total?", Principal(unrestricted=True))
        )
    ]
    system = model.calls[0][0].content
    assert "name: STRING e.g. 'Ada Stone', 'Ben Stone', 'Cy Moreau'" in system
    assert "label(r)" in system  # the films graph is a LadybugDB store
