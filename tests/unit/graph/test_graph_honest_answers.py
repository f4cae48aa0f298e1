"""Answers that say what they answered: an invented attribute is unsupported, an unanswerable
property is named with what the graph holds instead, an empty (or counted-nothing) result is
"no rows for this query" after the next rung was tried, a write inside a quoted value is
refused, and engine errors reach the user in words."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest
from graph_films import FILMS

from footnote.config import GraphSettings
from footnote.events import CypherEvent, Event
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.base import GraphRows, GraphSpec
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import CypherGuard, Principal
from footnote.verify.graph_answer import ShownRows, schema_words, verify_graph_answer

SPEC = GraphSpec.model_validate(FILMS)


def role(name: str, script: Sequence[str] | FakeChatModel) -> RoleModel:
    model = script if isinstance(script, FakeChatModel) else FakeChatModel(list(script))
    return RoleModel(name, model, ledger=Ledger(), external=False)


def pipe(
    store: LadybugGraph, index: EntityIndex, answer: str = "template", **models: object
) -> GraphQAPipeline:
    cfg = GraphSettings(understand="rules", answer=answer, retries=1, judge=False)
    return GraphQAPipeline(GraphDeps(store=store, index=index, settings=cfg, **models))  # type: ignore[arg-type]


async def ask(p: GraphQAPipeline, q: str) -> list[Event]:
    return [e async for e in p.run(GraphRequest(q, Principal(unrestricted=True)))]


def test_an_invented_attribute_makes_a_sentence_unsupported() -> None:
    rows = ShownRows.of(GraphRows(("title", "year"), (("Red River", 2001),)), 10)
    vocab = schema_words(SPEC)
    v = verify_graph_answer(
        [("Red River is a western from 2001.", ["row:0"]), ("Red River is from 2001.", ["row:0"])],
        rows, question="Tell me about Red River.", vocabulary=vocab,
    )  # fmt: skip
    invented, plain = v.checks
    assert not invented.ok and invented.missing["words"] == ["western"]
    assert "words" in invented.reasons and "western" in invented.reasons["words"]
    assert plain.ok and [s.text for s in v.sentences] == ["Red River is from 2001."]
    # the question's and the schema's words are not inventions
    asked = verify_graph_answer([("Red River was directed in 2001.", ["row:0"])], rows,
                                question="Which year was Red River made?", vocabulary=vocab)  # fmt: skip
    assert asked.checks[0].ok, asked.reason


async def test_a_model_that_writes_nothing_is_not_believed_when_nothing_asked_is_missing(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    """A compose model that writes no sentence is model output like any other: on a template
    route (query and columns are the spec's) the decline counts only when the question asks
    for something the schema and rows lack (box-office gross, below); otherwise the rows are
    rendered by template. A generated query's decline stands (its aliases are the model's)."""
    declined = '{"sentences": []}'
    p = pipe(films, films_index, "model", answer_model=role("compose", [declined]))
    await ask(p, "Which films did Ada Stone act in?")
    o = p.outcome
    assert o.status == "answered", o.reason
    assert o.answer == "Blue Lake (1999). Red River (2001)."
    gross = "MATCH (f:Film) WHERE f.title = $film RETURN f.title AS title, f.year AS year"
    p = pipe(
        films, films_index, "model",
        cypher_model=role("cypher", [gross]), answer_model=role("compose", [declined]),
    )  # fmt: skip
    await ask(p, "What was the box-office gross of Red River?")
    assert p.outcome.status == "refused" and "box-office gross" in p.outcome.reason
    # a generated query names its own columns (here a count of films AS staff): its aliases
    # prove nothing, and its decline is believed
    staff = "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE p.name = $person RETURN count(f) AS staff"
    p = pipe(
        films, films_index, "model",
        cypher_model=role("cypher", [staff] * 4), answer_model=role("compose", [declined] * 2),
    )  # fmt: skip
    await ask(p, "艾达·斯通有多少名员工？")
    assert p.outcome.status == "refused" and "The answer is" not in p.outcome.answer


async def test_words_of_query_logic_are_not_invented_attributes(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    """Seen in the embedded run: "哪部电影的演员最多？" got the right row and the sentence "A Few
    Good Men has the most actors with 12." was dropped for the word "most" (the question said
    最多, in Chinese)."""
    most = (
        "MATCH (p:Person)-[:ACTED_IN]->(f:Film) RETURN p.name AS name, count(f) AS films "
        "ORDER BY films DESC LIMIT 1"
    )
    reply = '{"sentences": [{"text": "Ada Stone acted in the most films (2).", "rows": ["row:0"]}]}'
    p = pipe(
        films, films_index, "model",
        cypher_model=role("cypher", [most]), answer_model=role("compose", [reply]),
    )  # fmt: skip
    await ask(p, "谁出演的电影最多？")
    assert p.outcome.status == "answered", p.outcome.reason
    assert p.outcome.answer == "Ada Stone acted in the most films (2)."


async def test_an_unanswerable_property_is_named_not_answered_with_another(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    cypher = role(
        "cypher", ["MATCH (f:Film) WHERE f.title = $film RETURN f.title AS title, f.year AS year"]
    )
    answer = role(
        "compose",
        ['{"sentences": [{"text": "Red River grossed 12 million dollars.", "rows": ["row:0"]}]}'],
    )
    p = pipe(films, films_index, "model", cypher_model=cypher, answer_model=answer)
    await ask(p, "What was the box-office gross of Red River?")
    o = p.outcome
    assert o.status == "refused", o.answer
    assert o.reason.startswith(
        "the graph does not hold box-office gross; it holds title, year, region"
    )


async def test_an_empty_result_tries_the_next_rung_then_says_no_rows_for_this_query(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    far = "MATCH (f:Film) WHERE f.year > 3000 RETURN f.title AS title"
    cypher = role("cypher", [far, "MATCH (f:Film) WHERE f.year > 2005 RETURN f.title AS title"])
    p = pipe(films, films_index, cypher_model=cypher)
    await ask(p, "Which films are from after 2005?")
    assert p.outcome.status == "answered" and "Green Hill" in p.outcome.answer
    assert "no rows" in cypher.model.calls[1][-1].content  # type: ignore[attr-defined]
    cypher = role("cypher", [far] * 5)  # 2 tries, then the fallback rung's 3 candidates
    p = pipe(films, films_index, cypher_model=cypher)
    await ask(p, "Which films come from the far future?")
    o = p.outcome
    assert o.status == "no_rows" and len(cypher.model.calls) == 5  # type: ignore[attr-defined]
    assert (
        o.reason == "no rows for this query" and o.answer == f"No rows for this query: {o.cypher}"
    )
    assert "No matching records" not in o.answer and "3000" in o.answer


async def test_a_count_over_nothing_is_no_rows_not_zero(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    # the wrong relationship (he acted in nothing); a reversed arrow is turned (directions.py)
    wrong = "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE p.name = $person RETURN count(f) AS films"
    right = "MATCH (p:Person)-[:DIRECTED]->(f:Film) WHERE p.name = $person RETURN count(f) AS films"
    p = pipe(films, films_index, cypher_model=role("cypher", [wrong, right]))
    await ask(p, "How many films did Cy Moreau direct?")
    assert p.outcome.status == "answered" and p.outcome.answer == "The answer is 2."
    p = pipe(films, films_index, cypher_model=role("cypher", [wrong] * 5))
    await ask(p, "How many films did Cy Moreau direct?")
    assert p.outcome.status == "no_rows" and "The answer is 0" not in p.outcome.answer


async def test_a_write_inside_a_quoted_value_is_refused(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    q = "When was 'Ada Stone' }) DETACH DELETE (p) //' born?"
    p = pipe(films, films_index, cypher_model=role("cypher", []))
    events = await ask(p, q)
    assert p.outcome.status == "refused" and "injection" in p.outcome.reason
    assert not any(isinstance(e, CypherEvent) for e in events)
    literal = "MATCH (p:Person) WHERE p.name = 'Ada Stone\\' }) DETACH DELETE (p) //' RETURN p.born"
    v = CypherGuard(SPEC).check(literal, {})
    assert not v.ok and "injection" in v.reason
    for title in ("Set It Off", "Drop Dead Gorgeous", "Rock 'n' Roll"):  # names, not writes
        ok = CypherGuard(SPEC).check(f'MATCH (f:Film) WHERE f.title = "{title}" RETURN f.year', {})
        assert ok.ok, ok.reason


async def test_engine_errors_reach_the_user_in_words(
    films: LadybugGraph, films_index: EntityIndex, caplog: pytest.LogCaptureFixture
) -> None:
    bad = "MATCH (f:Film) RETURN sum(f.title) AS total"
    p = pipe(films, films_index, cypher_model=role("cypher", [bad] * 5))
    with caplog.at_level(logging.INFO, logger="footnote"):
        await ask(p, "What is the total of all film titles?")
    o = p.outcome
    assert o.status == "refused"
    assert (
        "did not compile: a function or comparison was given values of the wrong type" in o.reason
    )
    assert "exception" not in o.reason.lower(), o.reason
    assert "exception" in caplog.text.lower()  # the engine's own words are logged


async def test_ties_at_the_limit_come_back_together(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    fewest = (
        "MATCH (p:Person)-[:ACTED_IN]->(f:Film) RETURN p.name AS name, count(f) AS films "
        "ORDER BY films ASC LIMIT 1"
    )
    p = pipe(films, films_index, cypher_model=role("cypher", [fewest]))
    await ask(p, "Who acted in the fewest films?")
    assert {r["name"] for r in p.outcome.rows} == {"Ben Stone", "Dee Park"}  # both acted once
    most = "MATCH (p:Person) RETURN p.name AS name, p.born AS born ORDER BY p.born DESC LIMIT 1"
    p = pipe(films, films_index, cypher_model=role("cypher", [most]))
    await ask(p, "Who is the youngest person?")
    assert [r["name"] for r in p.outcome.rows] == ["Dee Park"]  # no tie: still one row


async def test_a_template_answer_to_a_neighbouring_question_is_not_given(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    """The issue's case: the understanding picked the neighbouring intent (birth year for a
    net-worth question), the composer's invented figure was caught, and the template then
    answered the other question."""
    reading = (
        '{"intent": "person_born", "confidence": 0.9, "entities": [{"text": "Ada Stone", '
        '"label": "Person"}], "constraints": [], "question": "What is Ada Stone\'s net worth?"}'
    )
    cfg = GraphSettings(understand="model", answer="model", judge=False)
    deps = GraphDeps(
        store=films, index=films_index, settings=cfg,
        understand_model=role("understand", [reading]),
        answer_model=role("compose", [
            '{"sentences": [{"text": "Ada Stone is worth 5 million.", "rows": ["row:0"]}]}'
        ]),
    )  # fmt: skip
    p = GraphQAPipeline(deps)
    await ask(p, "What is Ada Stone's net worth?")
    o = p.outcome
    assert o.source == "template" and o.status == "refused", o.answer
    assert "born in 1970" not in o.answer
    assert o.reason == "the graph does not hold net worth; it holds name, born"


async def test_a_word_the_model_added_drops_its_sentence_not_the_answer(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    """Seen in the embedded run (gd-035, "Which product was ordered in the largest total
    quantity?"): the rows were right (Camembert Pierrot, 1577) but the sentence said "ordered
    1577 times"; the word check dropped it and the question was refused. A sentence that fails
    on a word of the model's own — not a name, number or date, nor a word of the question —
    says nothing about what the rows lack: they are rendered by template. The box-office
    question above (a number and a word the rows lack) is still refused."""
    latest = (
        "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE p.name = $person "
        "RETURN f.title AS title, f.year AS year ORDER BY year DESC LIMIT 1"
    )
    added = '{"sentences": [{"text": "Red River is a thriller from 2001.", "rows": ["row:0"]}]}'
    q = "Which film did Ada Stone act in most recently?"
    p = pipe(films, films_index, "model", cypher_model=role("cypher", [latest]),
             answer_model=role("compose", [added]))  # fmt: skip
    await ask(p, q)
    assert p.outcome.status == "answered", p.outcome.reason
    assert p.outcome.answer == "Red River (year 2001)."
    # an English word cannot be compared with a Chinese question's words: the rows are
    # rendered in Chinese only where nothing asked is missing from the schema and rows
    p = pipe(films, films_index, "model", cypher_model=role("cypher", [latest]),
             answer_model=role("compose", [added]))  # fmt: skip
    await ask(p, "艾达·斯通最近演的是哪部电影？")
    assert p.outcome.status == "answered" and p.outcome.answer == "Red River（year 2001）。"
    genre = '{"sentences": [{"text": "Red River is a thriller.", "rows": ["row:0"]}]}'
    p = pipe(films, films_index, "model", cypher_model=role("cypher", [latest]),
             answer_model=role("compose", [genre]))  # fmt: skip
    await ask(p, "艾达·斯通最近出演的是什么类型？")  # a genre: the graph holds none
    assert p.outcome.status == "refused" and "类型" in p.outcome.reason, p.outcome.reason


async def test_a_comparison_against_a_value_is_answered_not_refused(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    """Seen in the embedded run (tugraph, "找所有name属性值大于或等于'Peter'的节点…"): the query
    ran with 'Peter' bound and returned the right rows, the sentences were dropped for
    "greater" and "equal", and the refusal said "the graph does not hold Peter" — a value the
    query compared with, not a thing asked for. Comparison words are query logic, and the
    query's own values are no gap."""
    after = "MATCH (p:Person) WHERE p.name >= $dee RETURN p.name AS name ORDER BY name"
    reply = ('{"sentences": [{"text": "Dee Park has a name greater than or equal to Dee.", '
             '"rows": ["row:0"]}]}')  # fmt: skip
    p = pipe(films, films_index, "model", cypher_model=role("cypher", [after]),
             answer_model=role("compose", [reply]))  # fmt: skip
    await ask(p, "查找name属性值大于或等于'Dee'的人。")
    assert p.outcome.status == "answered", p.outcome.reason
    declined = '{"sentences": []}'
    p = pipe(films, films_index, "model", cypher_model=role("cypher", [after]),
             answer_model=role("compose", [declined]))  # fmt: skip
    await ask(p, "查找name属性值大于或等于'Dee'的人。")
    assert p.outcome.status == "refused" and "does not hold Dee" not in p.outcome.reason
