"""A model sentence that states the query's comparison the other way round is not supported
(seen on tugraph at 5e0742a: "找所有name属性值大于或等于'Peter'的节点…" ran `a.name >= $peter`
over the right 33 rows, and the model's sentences said the names came before Peter). The rows
are right, so the answer is the rows by template, not a refusal."""

from __future__ import annotations

from footnote.config import GraphSettings
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.answer import compose_answer
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.base import GraphRows
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.bounds import query_bounds, reversed_bounds
from footnote.verify.cypher.guard import Principal
from footnote.verify.graph_answer import ShownRows, verify_graph_answer


def test_the_bounds_a_query_puts_on_its_values() -> None:
    q = "MATCH (a) WHERE a.name >= $peter RETURN a.name, a.born"
    assert query_bounds(q, {"peter": "Peter"}) == {"Peter": ">"}
    flipped = "MATCH (m:Movie) WHERE 1990 > m.released AND $low < m.released RETURN m.title"
    assert query_bounds(flipped, {"low": 1980}) == {"1990": "<", "1980": ">"}
    assert query_bounds("MATCH (a {name: $n}) RETURN a", {"n": "Peter"}) == {}
    both = "MATCH (a) WHERE a.x > $v OR a.y < $v RETURN a"
    assert query_bounds(both, {"v": 3}) == {}  # one value bounded both ways: no direction


def test_a_sentence_that_reverses_the_bound_is_found() -> None:
    bounds = {"Peter": ">", "1990": "<"}
    assert reversed_bounds("The names before 'Peter' are Tom Hanks and Zach.", bounds) == [
        "before 'Peter'"
    ]
    assert reversed_bounds("Names less than or equal to Peter: Tom Hanks.", bounds) == [
        "less than or equal to Peter"
    ]
    assert reversed_bounds("Names from Peter on, alphabetically after Peter: Tom.", bounds) == []
    assert reversed_bounds("Films released after 1990: Heat.", bounds) == ["after 1990"]
    assert reversed_bounds("Films released before 1990: Heat.", bounds) == []
    assert reversed_bounds("名字小于Peter的人有Tom Hanks。", bounds) == ["小于Peter"]
    assert reversed_bounds("1990年以后上映的电影有Heat。", bounds) == ["1990年以后"]
    assert reversed_bounds("名字大于或等于Peter的人有Tom Hanks。", bounds) == []
    assert reversed_bounds("Peter and Tom Hanks are in the graph.", bounds) == []


ROWS = GraphRows(("name", "born"), (("Tom Hanks", 1956), ("Zach Grenier", 1954)))


def test_the_gate_drops_the_reversed_sentence_and_the_rows_are_rendered() -> None:
    shown = ShownRows.of(ROWS, 10, {"peter": "Peter"})
    bounds = {"Peter": ">"}
    bad = verify_graph_answer(
        [("The names before 'Peter' are Tom Hanks and Zach Grenier.", ["row:0", "row:1"])],
        shown, bounds=bounds,
    )  # fmt: skip
    assert not bad.sentences and bad.checks[0].missing["direction"] == ["before 'Peter'"]
    good = verify_graph_answer(
        [("The names after 'Peter' are Tom Hanks and Zach Grenier.", ["row:0", "row:1"])],
        shown, bounds=bounds,
    )  # fmt: skip
    assert good.sentences
    reply = ('{"sentences": [{"text": "The names before Peter are Tom Hanks and Zach Grenier.",'
             ' "rows": ["row:0", "row:1"]}]}')  # fmt: skip
    model = RoleModel("compose", FakeChatModel([reply]), ledger=Ledger(), external=False)
    out = compose_answer("找所有name属性值大于或等于'Peter'的节点", ROWS, model=model,
                         params={"peter": "Peter"}, bounds=bounds)  # fmt: skip
    assert out.method == "template" and out.sentences
    assert "Tom Hanks" in out.sentences[0].text


async def test_the_pipeline_renders_the_rows_when_the_model_reverses_the_query(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    cypher = "MATCH (p:Person) WHERE p.name >= $dee RETURN p.name AS name ORDER BY name"
    reply = ('{"sentences": [{"text": "The person named before Dee is Dee Park.",'
             ' "rows": ["row:0"]}]}')  # fmt: skip
    cfg = GraphSettings(understand="rules", answer="model", judge=False, retries=0,
                        fallback_candidates=0)  # fmt: skip
    writer = RoleModel("cypher", FakeChatModel([cypher]), ledger=Ledger(), external=False)
    composer = RoleModel("compose", FakeChatModel([reply]), ledger=Ledger(), external=False)
    p = GraphQAPipeline(GraphDeps(store=films, index=films_index, settings=cfg,
                                  cypher_model=writer, answer_model=composer))  # fmt: skip
    q = "查找名字在字典序上等于或在'Dee'之后的人，返回他们的名字。"
    _ = [e async for e in p.run(GraphRequest(q, Principal(unrestricted=True)))]
    assert p.outcome.status == "answered", p.outcome.reason
    assert "before" not in p.outcome.answer and "Dee Park" in p.outcome.answer
