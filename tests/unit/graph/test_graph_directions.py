"""A relationship written against the schema's direction can match nothing: seen in the
embedded-model run, "Which movie has the highest average review rating?" became
`(m:Movie)-[r:REVIEWED]->(u:Person)` (the schema: Person REVIEWED Movie) and was reported as
"no rows for this query". Such an arrow is turned before the query runs; an arrow the schema
allows either way, an undirected pattern or an unknown label is left as written."""

from __future__ import annotations

from collections.abc import Sequence

from footnote.config import GraphSettings
from footnote.index.graph.align import EntityIndex
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.directions import along_schema
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.base import GraphSpec
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal


def test_an_arrow_against_the_schema_is_turned(films: LadybugGraph) -> None:
    spec: GraphSpec = films.spec
    q = "MATCH (f:Film)-[r:ACTED_IN]->(p:Person) RETURN p.name AS name"
    assert along_schema(q, spec) == (
        "MATCH (f:Film)<-[r:ACTED_IN]-(p:Person) RETURN p.name AS name",
        ["ACTED_IN"],
    )
    back = "MATCH (p:Person)<-[:`DIRECTED`]-(f:`Film`) RETURN p.name"
    assert along_schema(back, spec)[0] == "MATCH (p:Person)-[:`DIRECTED`]->(f:`Film`) RETURN p.name"
    by_var = "MATCH (p:Person), (f:Film {title: $t}) MATCH (f)-[:ACTED_IN]->(p) RETURN p.name"
    assert along_schema(by_var, spec)[0].endswith("MATCH (f)<-[:ACTED_IN]-(p) RETURN p.name")
    chain = "MATCH (a:Person)-[:ACTED_IN]->(f:Film)-[:DIRECTED]->(d:Person) RETURN d.name"
    assert along_schema(chain, spec)[0] == (
        "MATCH (a:Person)-[:ACTED_IN]->(f:Film)<-[:DIRECTED]-(d:Person) RETURN d.name"
    )
    one_side = "MATCH (f:Film)-[:ACTED_IN]->(x) RETURN x"  # the known end contradicts
    assert along_schema(one_side, spec)[0] == "MATCH (f:Film)<-[:ACTED_IN]-(x) RETURN x"


def test_what_the_schema_allows_or_cannot_tell_is_left_alone(films: LadybugGraph) -> None:
    spec: GraphSpec = films.spec
    for q in (
        "MATCH (p:Person)-[:ACTED_IN]->(f:Film) RETURN f.title",
        "MATCH (f:Film)-[:ACTED_IN]-(p:Person) RETURN p.name",  # undirected
        "MATCH (a)-[:ACTED_IN]->(b) RETURN a, b",  # no label on either end
        "MATCH (f:Film)-[:ACTED_IN|DIRECTED]->(p:Person) RETURN p",  # several types
        "MATCH (p:Person) WHERE p.name = '(f:Film)-[:ACTED_IN]->(p:Person)' RETURN p",
    ):
        assert along_schema(q, spec) == (q, []), q


def writer(messages: Sequence[Message]) -> str:
    return (
        "MATCH (f:Film)-[:ACTED_IN]->(p:Person) WHERE f.title = 'Blue Lake' RETURN p.name AS name"
    )


async def test_the_turned_query_answers(films: LadybugGraph, films_index: EntityIndex) -> None:
    cfg = GraphSettings(understand="rules", answer="template", retries=0, judge=False)
    cypher = RoleModel("cypher", FakeChatModel(writer), ledger=Ledger(), external=False)
    deps = GraphDeps(store=films, index=films_index, settings=cfg, cypher_model=cypher)
    p = GraphQAPipeline(deps)
    q = "Which people are in the cast of Blue Lake?"
    _ = [e async for e in p.run(GraphRequest(q, Principal(unrestricted=True)))]
    assert p.outcome.status == "answered", p.outcome.reason
    assert "<-[:`ACTED_IN`]-" in p.outcome.cypher
    assert {r["name"] for r in p.outcome.rows} == {"Ada Stone", "Ben Stone"}
