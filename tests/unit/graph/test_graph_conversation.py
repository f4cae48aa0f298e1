"""Graph conversations (issue #33 item 1): the understanding is built from the last turns and
the question (standalone rewrite, sub-questions), a follow-up carries the earlier entities,
the user's own words are kept for answering and display, and the HTTP route keeps a
session per caller."""

from __future__ import annotations

import json
from collections.abc import Sequence

from footnote.config import GraphSettings
from footnote.events import Final, Intent
from footnote.index.graph.align import EntityIndex
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.conversation import GraphTurn, parts, refers_back, standalone
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal

EARLIER = GraphTurn("Which films did Cy Moreau direct?", "Red River. Green Hill.",
                    "MATCH (p:Person)-[:DIRECTED]->(f:Film) WHERE p.name = $person RETURN f.title",
                    (("Person", "Cy Moreau"),))  # fmt: skip


def role(name: str, reply: object) -> RoleModel:
    return RoleModel(name, FakeChatModel(reply), ledger=Ledger(), external=False)  # type: ignore[arg-type]


def test_follow_ups_and_parts_by_rule() -> None:
    assert refers_back("and which of them were born after 1960?")
    assert refers_back("他们中谁出生在1960年以后？") and not refers_back("Who directed Red River?")
    assert parts("Who directed Red River and when was it made?") == [
        "Who directed Red River", "when was it made?"]  # fmt: skip
    assert parts("Who directed Red River?") == []
    assert standalone("and when was it made?", [EARLIER]).startswith(EARLIER.question)
    assert standalone("Who directed Red River?", [EARLIER]) == "Who directed Red River?"


async def test_the_understand_role_reads_the_history_and_the_user_keeps_their_words(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    rewrite = "Which of the films Cy Moreau directed came out after 2005?"
    understood = {"intent": "other", "confidence": 0.9, "question": rewrite,
                  "entities": [], "constraints": [], "sub_questions": []}  # fmt: skip
    understand = role("understand", [json.dumps(understood)])
    query = ("MATCH (p:Person)-[:DIRECTED]->(f:Film) WHERE p.name = $person AND f.year > 2005 "
             "RETURN f.title AS title")  # fmt: skip

    def cypher_reply(messages: Sequence[Message]) -> str:
        return query if "$person" in messages[1].content else "MATCH (f:Film) RETURN f.title"

    cypher = role("cypher", cypher_reply)
    cfg = GraphSettings(understand="model", answer="template")
    p = GraphQAPipeline(GraphDeps(films, films_index, cfg, understand_model=understand,
                                  cypher_model=cypher))  # fmt: skip
    follow = "and which of those came out after 2005?"
    req = GraphRequest(follow, Principal(unrestricted=True), history=(EARLIER,))
    events = [e async for e in p.run(req)]
    sent = understand.model.calls[0][-1].content  # type: ignore[attr-defined]
    assert EARLIER.question in sent and "Red River. Green Hill." in sent and follow in sent
    assert p.outcome.status == "answered" and p.outcome.rows == [{"title": "Green Hill"}]
    shown = cypher.model.calls[0][1].content  # type: ignore[attr-defined]
    assert shown.index(EARLIER.cypher) < shown.index(f"Question: {follow}")
    assert rewrite in shown  # the rewrite is evidence beside the user's words
    assert next(e for e in events if isinstance(e, Intent)).question == rewrite
    assert next(e for e in events if isinstance(e, Final)).answer.question == follow


async def test_a_follow_up_takes_a_template_with_the_carried_entity(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    cfg = GraphSettings(understand="rules", answer="template")
    p = GraphQAPipeline(GraphDeps(films, films_index, cfg))
    req = GraphRequest("and when was he born?", Principal(unrestricted=True), history=(EARLIER,))
    _ = [e async for e in p.run(req)]
    assert p.outcome.status == "answered" and p.outcome.answer == "Cy Moreau was born in 1965."
    alone = GraphQAPipeline(GraphDeps(films, films_index, cfg))
    _ = [e async for e in alone.run(GraphRequest("and when was he born?"))]
    assert alone.outcome.status != "answered"  # without the history there is no "he"
