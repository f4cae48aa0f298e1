"""A follow-up asking for *other* ones leaves out what the previous turn was about, and says so.

Seen with the embedded model (dev gd-049): after "And who produced it?" (The Matrix), "Which
other movies did that producer produce?" was answered with The Matrix among the "other"
movies: the query the model wrote did not leave it out."""

from __future__ import annotations

import json

from footnote.config import GraphSettings
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.conversation import GraphTurn
from footnote.pipelines.graph.others import asks_for_others, without_prior
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.base import GraphRows
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal

EARLIER = GraphTurn("Who directed Red River?", "Cy Moreau directed Red River.",
                    "MATCH (p:Person)-[:DIRECTED]->(f:Film) WHERE f.title = $film RETURN p.name",
                    (("Film", "Red River"),))  # fmt: skip
TITLES = GraphRows(("title",), (("Red River",), ("Green Hill",)))


def role(name: str, reply: object) -> RoleModel:
    return RoleModel(name, FakeChatModel(reply), ledger=Ledger(), external=False)  # type: ignore[arg-type]


def test_other_ones_leave_the_earlier_entity_out() -> None:
    assert asks_for_others("Which other films did he direct?")
    assert asks_for_others("What else did he direct?") and asks_for_others(
        "他还导演过其他哪些电影？"
    )
    assert not asks_for_others("Which films did he direct?")
    left = without_prior("Which other films did he direct?", TITLES, ["Red River"])
    assert left is not None and left.rows.rows == (("Green Hill",),)
    assert left.how == "Red River left out: the question asks for other ones"
    assert left.how in left.rows.notes
    zh = without_prior("他还导演过其他哪些电影？", TITLES, ["Red River"])
    assert zh is not None and zh.how == "未列出Red River：问题问的是其他的"  # the user's language
    assert without_prior("Which films did he direct?", TITLES, ["Red River"]) is None
    assert without_prior("Which other films?", TITLES, ["Blue Lake"]) is None  # not in the rows
    only = GraphRows(("title",), (("Red River",),))
    assert without_prior("Which other films?", only, ["Red River"]) is None  # nothing would stay


async def test_a_follow_up_for_other_films_does_not_list_the_earlier_one(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    follow = "Which other films did he direct?"
    understood = {"intent": "other", "confidence": 0.9,
                  "question": "Which other films did Cy Moreau direct?",
                  "entities": [{"text": "Cy Moreau", "label": "Person"}],
                  "constraints": [], "sub_questions": []}  # fmt: skip
    query = "MATCH (p:Person)-[:DIRECTED]->(f:Film) WHERE p.name = $person RETURN f.title AS title"
    cfg = GraphSettings(understand="model", answer="template")
    deps = GraphDeps(films, films_index, cfg, understand_model=role("understand", [json.dumps(understood)]),
                     cypher_model=role("cypher", [query]))  # fmt: skip
    p = GraphQAPipeline(deps)
    _ = [
        e
        async for e in p.run(GraphRequest(follow, Principal(unrestricted=True), history=(EARLIER,)))
    ]
    assert p.outcome.status == "answered", p.outcome
    assert p.outcome.rows == [{"title": "Green Hill"}]
    assert "Red River left out" in p.outcome.answer and "Green Hill" in p.outcome.answer
