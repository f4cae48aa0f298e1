"""Conservative template routing: a whitelisted template answers a question only when its
slots capture every constraint. Fixtures are real questions from neo4j-text2cypher and
tugraph-text2cypher-zh (the earlier keyword+entity rule sent all the `misfit` ones to a
template and got every one wrong)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from footnote.config import GraphSettings
from footnote.events import CypherEvent, Event, Status
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.sources import demo_spec
from footnote.pipelines.graph.understand import Constraint, template_misfit
from footnote.store.graph.base import GraphSpec
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal

MOVIES = demo_spec("movies")
NORTHWIND = demo_spec("northwind")

# (question, intent the keyword rule picked, entity mentions the index found)
MISFITS = [
    ("Who are the first 3 actors in the movie with the tagline 'Speed has no limits'?",
     "movie_cast", ["speed"]),
    ("List the top 3 actors who have acted in movies with a tagline including the word 'limits'.",
     "movie_cast", []),
    ("Which 3 suppliers provide products in the 'Beverages' category?",
     "category_products", ["beverages"]),
    ("Which products have the lowest unitsInStock in the 'Grains/Cereals' category?",
     "category_products", ["grains/cereals"]),
    ("Show all products in stock that are part of the 'Condiments' category.",
     "category_products", ["condiments"]),
    ("Identify the categories associated with products supplied by 'Mayumi's'.",
     "supplier_products", ["mayumi's"]),
    ("Which customers from 'Reims' have placed orders?", "customer_orders", ["reims"]),
    ("List the orders that were shipped by 'Vins et alcools Chevalier'.",
     "customer_orders", ["vins et alcools chevalier"]),
    ("List three customers who have purchased orders shipped to France.", "customer_orders", []),
    ("Which people born after 1960 acted in The Matrix?", "movie_cast", ["the matrix"]),
    ("Who acted in The Matrix but not in The Matrix Reloaded?",
     "movie_cast", ["the matrix reloaded", "the matrix"]),
    ("Who directed the movies Tom Hanks acted in?", "movie_directors", ["tom hanks"]),
    ("查询图数据库中名称为Carrie-Anne Moss的节点，并返回该节点的 born 属性值，且将该值重命名为"
     "SomethingTotallyDifferent。", "person_born", ["carrie-anne moss"]),
    ("筛选出name属性值大于或等于'Peter'的节点a，返回节点a的name和born属性值。",
     "person_born", ["peter"]),
    ("出生于1967年或名字是Meg Ryan的人有哪些？", "person_born", ["meg ryan"]),
    ("筛选出名称在字典序上等于或在'Peter'之后的所有节点，返回所有节点的name和born属性值。",
     "person_born", ["peter"]),
    # answers to another question (graph bench, wave 3): the whole cast for one role, every
    # film of a director for "other" films, one actor's films for a two-actor question
    ("Who played Morpheus in The Matrix?", "movie_cast", ["the matrix"]),
    ("What other movies did he direct?", "person_directed", []),
    ("Which movies did Ron Howard direct besides Apollo 13?", "person_directed", ["ron howard"]),
    ("Which movies did both Tom Hanks and Meg Ryan act in?", "person_movies", ["tom hanks"]),
    ("Which movies did Tom Hanks act in with Meg Ryan?", "person_movies", ["tom hanks"]),
    ("朗·霍华德还导演过哪些其他电影？", "person_directed", ["朗·霍华德"]),
    ("梅格·瑞恩和汤姆·汉克斯一起演过哪些电影？", "person_movies", ["汤姆·汉克斯"]),
]  # fmt: skip

FITS = [
    ("What are the roles of actors in the movie titled 'Speed Racer'?",
     "movie_cast", ["speed racer"]),
    ("Which movies has Keanu Reeves acted in?", "person_movies", ["keanu reeves"]),
    ("Who directed the movie 'The Matrix'?", "movie_directors", ["the matrix"]),
    ("List all movies directed by Lana Wachowski.", "person_directed", ["lana wachowski"]),
    ("What are the names of the products supplied by 'Exotic Liquids'?",
     "supplier_products", ["exotic liquids"]),
    ("How many orders has Alfreds Futterkiste placed?", "customer_orders", ["alfreds futterkiste"]),
    ("When was Keanu Reeves born?", "person_born", ["keanu reeves"]),
    ("Who played in The Matrix?", "movie_cast", ["the matrix"]),
    ("In which movies did Keanu Reeves act?", "person_movies", ["keanu reeves"]),
    ("Who directed The Matrix? I need the director's name.", "movie_directors", ["the matrix"]),
    ("基努·里维斯是哪年出生的？", "person_born", ["基努·里维斯"]),
]  # fmt: skip


def _spec(intent: str) -> GraphSpec:
    return MOVIES if intent in MOVIES.intents else NORTHWIND


def role(name: str, script: Sequence[str]) -> RoleModel:
    return RoleModel(name, FakeChatModel(list(script)), ledger=Ledger(), external=False)


def pipe(store: LadybugGraph, index: EntityIndex, cypher: RoleModel) -> GraphQAPipeline:
    cfg = GraphSettings(understand="rules", answer="template", retries=1)
    return GraphQAPipeline(GraphDeps(store=store, index=index, settings=cfg, cypher_model=cypher))


async def ask(p: GraphQAPipeline, q: str) -> list[Event]:
    return [e async for e in p.run(GraphRequest(q, Principal(unrestricted=True)))]


@pytest.mark.parametrize(("question", "intent", "mentions"), MISFITS)
def test_extra_constraints_leave_the_template(
    question: str, intent: str, mentions: list[str]
) -> None:
    entities = len(mentions)
    assert template_misfit(question, intent, _spec(intent), mentions, entities) != ""


@pytest.mark.parametrize(("question", "intent", "mentions"), FITS)
def test_questions_the_slots_capture_keep_the_template(
    question: str, intent: str, mentions: list[str]
) -> None:
    assert template_misfit(question, intent, _spec(intent), mentions, len(mentions)) == ""


def test_reasons_name_the_constraint() -> None:
    why = template_misfit(
        "Which 3 suppliers provide products in the 'Beverages' category?",
        "category_products", NORTHWIND, ["beverages"], 1,
    )  # fmt: skip
    assert "number" in why
    why = template_misfit(
        "Which products have a 'quantityPerUnit' specified as '10 boxes x 20 bags'?",
        "category_products", NORTHWIND, [], 0,
    )  # fmt: skip
    assert "quoted value" in why
    why = template_misfit("Who played in The Matrix?", "movie_cast", MOVIES, ["the matrix"], 2)
    assert "2 entities" in why


def test_model_constraints_outside_the_slots_leave_the_template() -> None:
    q = "Who acted in The Matrix?"
    extra = [Constraint(property="born", op=">", value="1960")]
    slot = [Constraint(property="title", op="=", value="The Matrix")]
    assert template_misfit(q, "movie_cast", MOVIES, ["the matrix"], 1, extra)
    assert template_misfit(q, "movie_cast", MOVIES, ["the matrix"], 1, slot) == ""


async def test_pipeline_sends_a_constrained_question_to_generation(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    gen = "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE p.name = $person AND f.year > 2000 "
    gen += "RETURN f.title AS title"
    cypher = role("cypher", [gen])
    p = pipe(films, films_index, cypher)
    events = await ask(p, "Which films after 2000 did Ada Stone act in?")
    route = next(e for e in events if isinstance(e, Status) and e.stage == "route")
    assert route.message.startswith("generated: template person_films skipped")
    assert [e.source for e in events if isinstance(e, CypherEvent)] == ["model"]
    assert p.outcome.route == "generated" and p.outcome.rows == [{"title": "Red River"}]


async def test_pipeline_keeps_the_template_for_a_plain_question(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    cypher = role("cypher", ["MATCH (f:Film) RETURN f.title AS title"])
    p = pipe(films, films_index, cypher)
    await ask(p, "Which films did Ada Stone act in?")
    assert p.outcome.route == "template" and p.outcome.source == "template"
    assert cypher.model.calls == []  # type: ignore[attr-defined]
