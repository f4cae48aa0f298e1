"""A value the question gives, lifted by the Cypher model into a parameter of its own, is
bound by code (seen in the embedded run on tugraph-text2cypher-zh: "找所有name属性值大于或等于
'Peter'的节点…" got `WHERE a.name >= $peter` and "名字在Andres和Tobias之间的人" got `$andres`,
`$tobias`; the guard refused "parameter $peter has no value" and both questions were lost)."""

from __future__ import annotations

from footnote.config import GraphSettings
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.literals import literal_params, question_literals
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal

PETER = "找所有name属性值大于或等于'Peter'的节点，并返回这些节点的name 和 born属性值。"
BETWEEN = "查找图数据库中名字在Andres和Tobias之间的人。他们的出生年份是多少？"


def test_the_values_a_question_writes() -> None:
    assert question_literals(PETER) == ["Peter", "name", "born"]
    assert question_literals(BETWEEN) == ["Andres", "Tobias"]
    assert question_literals('Which films did "Ada Stone" make after 1990?') == ["Ada Stone"]
    assert question_literals("Who directed Blue Lake?") == []  # no quotes: no values in English


def test_a_parameter_spelled_like_a_value_gets_it() -> None:
    q = "MATCH (a) WHERE a.name >= $peter RETURN a.name, a.born"
    assert literal_params(q, {}, PETER) == {"peter": "Peter"}
    two = "MATCH (a) WHERE a.name > $andres AND a.name < $Tobias RETURN a.name, a.born"
    assert literal_params(two, {}, BETWEEN) == {"andres": "Andres", "Tobias": "Tobias"}


def test_one_parameter_left_gets_the_one_value_left_and_nothing_is_guessed() -> None:
    # 'name' and 'born' are words the query uses as property names, not values
    q = "MATCH (a) WHERE a.name >= $value RETURN a.name, a.born"
    assert literal_params(q, {}, PETER) == {"value": "Peter"}
    # two parameters, two values, neither spelled like the other: no guess at the order
    two = "MATCH (a) WHERE a.name > $low AND a.name < $high RETURN a.name"
    assert literal_params(two, {}, BETWEEN) == {}
    # bound already, reserved for the server, or no value in the question: untouched
    assert literal_params("MATCH (a {name: $person}) RETURN a", {"person": "Peter"}, PETER) == {}
    assert literal_params("MATCH (a) WHERE a.x = $__tenant RETURN a", {}, PETER) == {}
    assert literal_params("MATCH (a) WHERE a.name = $who RETURN a", {}, "Who is it?") == {}


def test_a_property_the_question_names_is_no_value_whether_or_not_the_query_uses_it() -> None:
    """Seen on tugraph at 77f9ebc: "…返回所有节点的name和born属性值" bound $name to 'Peter' on the
    first try; the retry's query (`RETURN n`) no longer used `born`, so 'born' counted as a
    value, two values met one parameter and nothing was bound on any later rung."""
    q = "筛选出名称在字典序上等于或在'Peter'之后的所有节点，返回所有节点的name和born属性值。"
    retry = "MATCH (n:Person) WHERE n.name >= $name RETURN n ORDER BY n.name"
    assert literal_params(retry, {}, q) == {}
    assert literal_params(retry, {}, q, schema_names={"name", "born", "Person"}) == {
        "name": "Peter"
    }


def test_numbered_parameters_take_the_values_in_the_order_both_write_them() -> None:
    """Seen on tugraph at 5e0742a: "名字在Andres和Tobias之间的人" got `$name1` and `$name2`, left
    unbound (two values, two parameters). Numbered alike and first used in number order, they
    take the question's values in its order; used out of order, nothing is bound."""
    q = "MATCH (a) WHERE a.name > $name1 AND a.name < $name2 RETURN a.name, a.born"
    assert literal_params(q, {}, BETWEEN) == {"name1": "Andres", "name2": "Tobias"}
    flipped = "MATCH (a) WHERE a.name < $name2 AND a.name > $name1 RETURN a.name"
    assert literal_params(flipped, {}, BETWEEN) == {}
    mixed = "MATCH (a) WHERE a.name > $name1 AND a.born < $year2 RETURN a.name"
    assert literal_params(mixed, {}, BETWEEN) == {}  # not one numbered family
    three = "MATCH (a) WHERE a.name IN [$n1, $n2, $n3] RETURN a.name"
    assert literal_params(three, {}, BETWEEN) == {}  # three parameters, two values


async def test_the_pipeline_runs_a_query_whose_parameter_the_question_gave(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    cypher = "MATCH (p:Person) WHERE p.name >= $dee RETURN p.name AS name ORDER BY name"
    cfg = GraphSettings(understand="rules", answer="template", retries=0, fallback_candidates=0)
    writer = RoleModel("cypher", FakeChatModel([cypher]), ledger=Ledger(), external=False)
    p = GraphQAPipeline(
        GraphDeps(store=films, index=films_index, settings=cfg, cypher_model=writer)
    )
    q = "查找名字在字典序上等于或在'Dee'之后的人，返回他们的名字。"
    _ = [e async for e in p.run(GraphRequest(q, Principal(unrestricted=True)))]
    assert p.outcome.status == "answered", p.outcome.reason
    assert p.outcome.params == {"dee": "Dee"}
    assert p.outcome.rows == [{"name": "Dee Park"}]
