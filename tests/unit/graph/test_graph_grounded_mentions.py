"""An entity the understanding names must come from the user's words (or the conversation's):
seen in the embedded-model run, "Which actor was born earliest?" was read as being about
Keanu Reeves — a name the question never says — and answered "The actor born earliest is born
in 1964." (his year) with every check passed. A mention the question and the earlier turns do
not hold is dropped before alignment; a Latin name for a Chinese question is a translation the
index decides on, and is kept."""

from __future__ import annotations

import json
from collections.abc import Sequence

from footnote.config import GraphSettings
from footnote.events import Entities
from footnote.index.graph.align import EntityIndex
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.conversation import GraphTurn
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.understand import grounded_mention
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal

EARLIEST = "MATCH (p:Person) RETURN p.name AS name ORDER BY p.born LIMIT 1"


def role(name: str, model: FakeChatModel) -> RoleModel:
    return RoleModel(name, model, ledger=Ledger(), external=False)


def reading(*names: str) -> str:
    return json.dumps({
        "intent": "person_born", "confidence": 1.0,
        "entities": [{"text": n, "label": "Person"} for n in names], "constraints": [],
        "question": "Which actor was born earliest?",
    })  # fmt: skip


def writer(messages: Sequence[Message]) -> str:
    """Binds the invented name when the prompt offers it as a parameter, else ranks by age."""
    user = messages[-1].content
    if "$person" in user:
        return "MATCH (p:Person {name: $person}) RETURN p.born AS born"
    return EARLIEST


async def test_a_name_the_question_never_says_is_not_aligned(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    cfg = GraphSettings(understand="model", answer="template", retries=0, judge=False)
    deps = GraphDeps(
        store=films, index=films_index, settings=cfg,
        understand_model=role("understand", FakeChatModel([reading("Ada Stone")])),
        cypher_model=role("cypher", FakeChatModel(writer)),
    )  # fmt: skip
    p = GraphQAPipeline(deps)
    q = "Which person was born earliest?"
    events = [e async for e in p.run(GraphRequest(q, Principal(unrestricted=True)))]
    (ents,) = [e for e in events if isinstance(e, Entities)]
    assert ents.aligned == [] and "person" not in p.outcome.params
    assert p.outcome.status == "answered", p.outcome.reason
    assert p.outcome.rows == [{"name": "Cy Moreau"}]


def test_grounding_rules() -> None:
    assert not grounded_mention("Keanu Reeves", "Which actor was born earliest?", ())
    assert grounded_mention("Tom Hanks", "What did Hanks act in?", ())  # a name completed
    assert grounded_mention("the matrix", "Who acted in The Matrix?", ())
    assert grounded_mention("Ada Stone", "艾达·斯通演过哪些电影？", ())  # a translation
    assert grounded_mention("艾达·斯通", "艾达斯通演过哪些电影？", ())
    assert not grounded_mention("汤姆·汉克斯", "艾达·斯通演过哪些电影？", ())
    earlier = (GraphTurn("Who directed Apollo 13?", "Ron Howard directed Apollo 13."),)
    assert grounded_mention("Ron Howard", "What else did he direct?", earlier)
    assert grounded_mention("Apollo 13", "Who acted in it?", earlier)
