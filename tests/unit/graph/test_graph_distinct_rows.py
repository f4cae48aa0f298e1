"""A result that repeats rows is shown once per row (seen in the embedded run: "Which
suppliers are based in Germany?" joined through SUPPLIES and returned each supplier once per
product — 11 rows for 3 suppliers — so the evidence board repeated them and the rows no longer
matched what was asked)."""

from __future__ import annotations

from footnote.config import GraphSettings
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.results import distinct_rows
from footnote.store.graph.base import GraphRows
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal

ACTORS = "MATCH (p:Person)-[:ACTED_IN]->(f:Film) RETURN p.name AS name ORDER BY name"


def test_repeated_rows_are_dropped_in_order_with_a_note() -> None:
    rows = GraphRows(("id", "name"), (("11", "Heli"), ("11", "Heli"), ("12", "Plutzer")))
    once = distinct_rows(rows)
    assert once.rows == (("11", "Heli"), ("12", "Plutzer"))
    assert once.notes == ("1 repeated row(s) shown once",)
    assert distinct_rows(once) is once  # nothing repeated: unchanged


async def test_the_pipeline_shows_each_row_once(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    cfg = GraphSettings(understand="rules", answer="template", retries=0, fallback_candidates=0)
    writer = RoleModel("cypher", FakeChatModel([ACTORS]), ledger=Ledger(), external=False)
    p = GraphQAPipeline(
        GraphDeps(store=films, index=films_index, settings=cfg, cypher_model=writer)
    )
    _ = [e async for e in p.run(GraphRequest("Who acted in a film?", Principal(unrestricted=True)))]
    assert p.outcome.status == "answered", p.outcome.reason
    assert p.outcome.rows == [{"name": "Ada Stone"}, {"name": "Ben Stone"}, {"name": "Dee Park"}]
