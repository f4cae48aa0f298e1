"""`graph.understand = auto` reads the question by rules first and calls the `understand`
model only when the rules' reading is not enough: no template intent, a template that would
not capture the whole question, an entity that does not align to one node, or earlier turns
to resolve. Seen in the embedded run: every question paid ~20 s for an understanding the
template route did not need (p50 61 s against the issue's 20 s)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from footnote.config import GraphSettings
from footnote.events import Event, Intent
from footnote.index.graph.align import EntityIndex
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.conversation import GraphTurn
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal

READING = json.dumps({
    "intent": "other", "confidence": 0.9, "entities": [{"text": "Ada Stone", "label": "Person"}],
    "constraints": [], "question": "Which films after 2000 did Ada Stone act in?",
})  # fmt: skip
AFTER_2000 = (
    "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE p.name = $person AND f.year > 2000 "
    "RETURN f.title AS title"
)
COUNT = "MATCH (f:Film) RETURN count(f) AS films"


def cypher_writer(messages: Sequence[Message]) -> str:
    return COUNT if "How many" in messages[-1].content else AFTER_2000


def role(name: str, script: Sequence[str]) -> RoleModel:
    return RoleModel(name, FakeChatModel(list(script)), ledger=Ledger(), external=False)


async def ask(
    films: LadybugGraph,
    index: EntityIndex,
    question: str,
    mode: str,
    history: tuple[GraphTurn, ...] = (),
) -> tuple[GraphQAPipeline, RoleModel, list[Event]]:
    understand = role("understand", [READING] * 3)
    cfg = GraphSettings(understand=mode, answer="template", retries=1, judge=False)
    deps = GraphDeps(
        store=films, index=index, settings=cfg, understand_model=understand,
        cypher_model=RoleModel("cypher", FakeChatModel(cypher_writer), ledger=Ledger(), external=False),
    )  # fmt: skip
    p = GraphQAPipeline(deps)
    req = GraphRequest(question, Principal(unrestricted=True), history=history)
    return p, understand, [e async for e in p.run(req)]


def calls(model: RoleModel) -> int:
    fake = model.model
    assert isinstance(fake, FakeChatModel)
    return len(fake.calls)


async def test_a_question_the_template_captures_skips_the_model(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    p, understand, events = await ask(
        films, films_index, "Which films did Ada Stone act in?", "auto"
    )
    assert calls(understand) == 0
    intent = next(e for e in events if isinstance(e, Intent))
    assert intent.method == "rules" and intent.intent == "person_films"
    assert p.outcome.status == "answered" and p.outcome.route == "template"
    assert {r["title"] for r in p.outcome.rows} == {"Red River", "Blue Lake"}


async def test_model_mode_always_asks_the_model(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    _, understand, events = await ask(
        films, films_index, "Which films did Ada Stone act in?", "model"
    )
    assert calls(understand) == 1
    assert next(e for e in events if isinstance(e, Intent)).method == "model"


async def test_a_constraint_outside_the_template_asks_the_model(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    p, understand, events = await ask(
        films, films_index, "Which films after 2000 did Ada Stone act in?", "auto"
    )
    assert calls(understand) == 1
    assert next(e for e in events if isinstance(e, Intent)).method == "model"
    assert p.outcome.route == "generated" and p.outcome.rows == [{"title": "Red River"}]


async def test_a_question_with_no_template_intent_asks_the_model(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    p, understand, _ = await ask(films, films_index, "How many films are there?", "auto")
    assert calls(understand) == 1
    assert p.outcome.rows == [{"films": 3}]


async def test_a_follow_up_asks_the_model(films: LadybugGraph, films_index: EntityIndex) -> None:
    earlier = GraphTurn(
        "Who acted in Red River?", "Ada Stone played Mara.",
        "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE f.title = $film RETURN p.name AS name",
        (("Film", "Red River"),),
    )  # fmt: skip
    _, understand, _ = await ask(
        films, films_index, "Which films did Ada Stone act in?", "auto", (earlier,)
    )
    assert calls(understand) == 1
