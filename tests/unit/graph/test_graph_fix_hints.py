"""A rejected query's retry names the small model's own mistake with the Cypher form for it.

Seen with the embedded model (dev set gd-010, gd-054): for questions about several entities it
wrote SQL (`… INTERSECT SELECT …`) or one `MATCH … RETURN` per entity; the retry showed only
the parser's "expected rule iC_Statements", and the model sent the same query back five times
(87 s and 123 s, then a refusal)."""

from __future__ import annotations

from test_graph_ladder import calls, role, run

from footnote.events import Guard
from footnote.index.graph.align import EntityIndex
from footnote.pipelines.graph.fixes import fix_hint, one_statement, several_statements
from footnote.store.graph.base import GraphSpec
from footnote.store.graph.ladybug import LadybugGraph

PER_ENTITY = (
    "MATCH (p:Product {productID: $product})-[:PART_OF]->(c:Category) RETURN c.categoryName AS category\n"
    "MATCH (p:Product {productID: $product2})-[:PART_OF]->(c:Category) RETURN c.categoryName AS category\n"
    "MATCH (p:Product {productID: $product3})-[:PART_OF]->(c:Category) RETURN c.categoryName AS category LIMIT 200"
)  # fmt: skip
SQL = (
    "MATCH (p:Person)-[r:ACTED_IN]->(m:Movie) WHERE m.title = $movie RETURN p.name AS name\n"
    "WITH p.name AS name WHERE name IN (SELECT name FROM (MATCH (p:Person)-[r:ACTED_IN]->(m:Movie) "
    "WHERE m.title = $movie RETURN p.name) INTERSECT SELECT name FROM (MATCH (p:Person)-[r:ACTED_IN]->"
    "(m:Movie) WHERE m.title = $movie2 RETURN p.name)) RETURN name AS actor"
)  # fmt: skip


def test_one_statement_per_entity_is_told_the_in_list() -> None:
    hint = fix_hint(PER_ENTITY, ["product", "product2", "product3"])
    assert "WHERE p.productID IN [$product, $product2, $product3]" in hint
    assert "one statement" in hint and "the entity's name" in hint
    shop = GraphSpec.model_validate({"name": "shop", "nodes": {
        "Product": {"properties": {"productID": "STRING", "productName": "STRING"},
                    "key": "productID", "name": "productName"},
        "Category": {"properties": {"categoryName": "STRING"}, "key": "categoryName"}},
        "relationships": {"PART_OF": {"from": "Product", "to": "Category"}}})  # fmt: skip
    assert "RETURN `p.productName` beside" in fix_hint(PER_ENTITY, ["product", "product2"], shop)


def test_sql_is_told_the_shared_pattern_with_the_querys_own_names() -> None:
    hint = fix_hint(SQL, ["movie", "movie2"])
    assert (
        "MATCH (a:Movie)<-[:ACTED_IN]-(x)-[:ACTED_IN]->(b:Movie) "
        "WHERE a.title = $movie AND b.title = $movie2 RETURN DISTINCT x" in hint
    )
    reverse = "MATCH (m:Movie {title: $movie})<-[:DIRECTED]-(p:Person) SELECT p INTERSECT x"
    assert "(a:Movie)<-[:DIRECTED]-(x)-[:DIRECTED]->(b:Movie)" in fix_hint(
        reverse, ["movie", "movie2"]
    )
    assert "SQL is not Cypher" in fix_hint("SELECT name FROM Person", [])


def test_well_formed_queries_get_no_hint() -> None:
    for ok in (
        "MATCH (p:Person) RETURN p.name AS name",
        "MATCH (a:Film) RETURN a.title AS t UNION MATCH (b:Film) RETURN b.title AS t",
        "MATCH (p:Person) WITH p MATCH (p)-[:ACTED_IN]->(f) RETURN f.title",
        "MATCH (p:Person {name: 'Select Intersect'}) RETURN p.born",  # words in a name
        "MATCH (p:Person) RETURN p.name, EXISTS { MATCH (p)-[:DIRECTED]->() } AS directs",
    ):
        assert fix_hint(ok, ["person", "person2"]) == "", ok
    assert several_statements(PER_ENTITY)
    assert not several_statements("MATCH (a) RETURN a UNION ALL MATCH (b) RETURN b")


async def test_the_retry_after_sql_shows_the_pattern_and_the_fixed_query_answers(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    sql = (
        "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE f.title = $film RETURN p.name AS name "
        "INTERSECT MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE f.title = $film2 RETURN p.name AS name"
    )  # fmt: skip
    fixed = (
        "MATCH (a:Film)<-[:ACTED_IN]-(x:Person)-[:ACTED_IN]->(b:Film) "
        "WHERE a.title = $film AND b.title = $film2 RETURN DISTINCT x.name AS name"
    )  # fmt: skip
    m = role([sql, fixed])
    p, events = await run(films, films_index, "Who acted in both Red River and Blue Lake?",
                          m, retries=1, fallback_candidates=0)  # fmt: skip
    assert [g.ok for g in events if isinstance(g, Guard)] == [False, True]
    retry = calls(m)[1][-1].content
    assert "(a:Film)<-[:ACTED_IN]-(x:Person)-[:ACTED_IN]->(b:Film)" in retry  # from the schema
    assert "RETURN DISTINCT x.name AS name" in retry
    assert "a.title = $film AND b.title = $film2" in retry
    assert p.outcome.status == "answered" and "Ada Stone" in p.outcome.answer, p.outcome
    blind = role([sql, fixed])
    await run(films, films_index, "Who acted in both Red River and Blue Lake?", blind,
              retries=1, fallback_candidates=0, retry_with_error=False)  # fmt: skip
    assert "INTERSECT" not in calls(blind)[1][-1].content  # a blind resample shows neither


def test_an_unbound_variable_is_told_the_schemas_ways_to_bind_it() -> None:
    shop = GraphSpec.model_validate({"name": "shop", "nodes": {
        "Product": {"properties": {"productID": "STRING"}, "key": "productID"},
        "Category": {"properties": {"categoryName": "STRING"}, "key": "categoryName"}},
        "relationships": {"PART_OF": {"from": "Product", "to": "Category"}}})  # fmt: skip
    query = "MATCH (c:Category {categoryName: 'Condiments'}) RETURN count(p) AS products"
    why = "does not compile: Binder exception: Variable p is not in scope."
    hint = fix_hint(query, [], shop, why)
    assert (
        hint
        == "`p` is used but no pattern binds it: bind it in the MATCH, e.g. `(c)<-[:PART_OF]-(p:Product)`."
    )
    assert fix_hint(query, [], shop, "does not compile: something else") == ""


async def test_the_retry_after_an_unbound_variable_shows_how_to_bind_it(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    unbound = "MATCH (f:Film {title: $film}) RETURN count(p) AS people"
    fixed = "MATCH (f:Film {title: $film})<-[:ACTED_IN]-(p:Person) RETURN count(p) AS people"
    m = role([unbound, fixed])
    p, events = await run(films, films_index, "How many people acted in Blue Lake?", m,
                          retries=1, fallback_candidates=0)  # fmt: skip
    assert [g.ok for g in events if isinstance(g, Guard)] == [False, True]
    retry = calls(m)[1][-1].content
    assert "`p` is used but no pattern binds it" in retry
    assert "(f)<-[:ACTED_IN]-(p:Person)" in retry and "(f)<-[:DIRECTED]-(p:Person)" in retry
    assert p.outcome.status == "answered", p.outcome


def test_one_statement_per_entity_is_repaired_into_the_statement_meant() -> None:
    shop = GraphSpec.model_validate({"name": "shop", "nodes": {
        "Product": {"properties": {"productID": "STRING", "productName": "STRING"},
                    "key": "productID", "name": "productName"},
        "Category": {"properties": {"categoryName": "STRING"}, "key": "categoryName"}},
        "relationships": {"PART_OF": {"from": "Product", "to": "Category"}}})  # fmt: skip
    assert one_statement(PER_ENTITY, shop) == (
        "MATCH (p:Product)-[:PART_OF]->(c:Category) WHERE p.productID IN [$product, $product2, "
        "$product3] RETURN p.productName AS product, c.categoryName AS category"
    )
    by_where = (
        "MATCH (p:Product)-[:PART_OF]->(c:Category) WHERE p.productID = $product RETURN c.categoryName\n"
        "MATCH (p:Product)-[:PART_OF]->(c:Category) WHERE p.productID = $product2 RETURN c.categoryName"
    )  # fmt: skip
    assert one_statement(by_where, shop) == (
        "MATCH (p:Product)-[:PART_OF]->(c:Category) WHERE p.productID IN [$product, $product2] "
        "RETURN p.productName AS product, c.categoryName"
    )
    differ = PER_ENTITY.replace(
        "c.categoryName AS category LIMIT", "c.categoryID AS category LIMIT"
    )
    assert one_statement(differ, shop) is None  # not one query three times: left to the retry
    assert one_statement("MATCH (p:Product) RETURN p.productName", shop) is None


async def test_a_per_entity_query_runs_as_one_and_names_each_row(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    per_film = (
        "MATCH (f:Film {title: $film}) RETURN f.year AS year\n"
        "MATCH (f:Film {title: $film2}) RETURN f.year AS year"
    )
    m = role([per_film])
    p, events = await run(films, films_index, "When were Red River and Blue Lake made?", m,
                          retries=0, fallback_candidates=0)  # fmt: skip
    assert [g.ok for g in events if isinstance(g, Guard)] == [True]
    assert sorted(map(str, p.outcome.rows)) == sorted(map(str, [
        {"film": "Red River", "year": 2001}, {"film": "Blue Lake", "year": 1999}]))  # fmt: skip
