"""The graph QA pipeline on the films graph: templates, the ladder with scripted models,
clarification, no_rows, refusals, permissions and row citations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from footnote.config import GraphSettings
from footnote.events import CypherEvent, Event, Final, Guard, Intent, Rows
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal


def role(name: str, script: Sequence[str]) -> RoleModel:
    return RoleModel(name, FakeChatModel(list(script)), ledger=Ledger(), external=False)


async def ask(pipe: GraphQAPipeline, q: str, who: Principal | None = None) -> list[Event]:
    req = GraphRequest(q, who or Principal(unrestricted=True))
    return [e async for e in pipe.run(req)]


def pipe(store: LadybugGraph, index: EntityIndex, **models: Any) -> GraphQAPipeline:
    cfg = GraphSettings(understand="rules", answer="template", retries=1)
    return GraphQAPipeline(GraphDeps(store=store, index=index, settings=cfg, **models))


async def test_template_path_cites_rows(films: LadybugGraph, films_index: EntityIndex) -> None:
    p = pipe(films, films_index)
    events = await ask(p, "Which films did Ada Stone act in?")
    types = [e.type for e in events]
    assert types[:3] == ["status", "intent", "entities"]
    assert "cypher" in types and "guard" in types and "rows" in types and types[-1] == "done"
    o = p.outcome
    assert o.status == "answered" and o.source == "template" and o.params == {"person": "Ada Stone"}
    assert "Ada Stone" not in o.cypher  # user text only as a parameter
    assert o.answer == "Blue Lake (1999). Red River (2001)."
    final = next(e for e in events if isinstance(e, Final))
    assert [c.evidence_id for s in final.answer.sentences for c in s.citations] == [
        "row:0",
        "row:1",
    ]


async def test_chinese_alias_exact_match(films: LadybugGraph, films_index: EntityIndex) -> None:
    p = pipe(films, films_index)
    await ask(p, "艾达·斯通是哪年出生的？")
    assert p.outcome.status == "answered"  # the intent has no `answer_zh`: generic Chinese
    assert p.outcome.answer == "Ada Stone（born 1970）。", p.outcome.answer


async def test_ambiguous_entity_asks_back(films: LadybugGraph, films_index: EntityIndex) -> None:
    p = pipe(films, films_index)
    events = await ask(p, "Which films did Stone act in?")
    assert p.outcome.status == "clarify" and set(p.outcome.options) == {"Ada Stone", "Ben Stone"}
    assert not any(isinstance(e, CypherEvent) for e in events)


async def test_generated_path_with_retry_then_success(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    cypher = role("cypher", [
        "```cypher\nMATCH (f:Flim) RETURN count(f) AS films\n```",
        "```cypher\nMATCH (f:Film) RETURN count(f) AS films\n```",
    ])  # fmt: skip
    p = pipe(films, films_index, cypher_model=cypher)
    events = await ask(p, "How many films are there in total?")
    guards = [e for e in events if isinstance(e, Guard)]
    assert [g.ok for g in guards] == [False, True] and "unknown label Flim" in guards[0].reasons[0]
    retry_prompt = cypher.model.calls[1][-1].content  # type: ignore[attr-defined]
    assert "unknown label Flim" in retry_prompt
    assert p.outcome.status == "answered" and p.outcome.answer == "The answer is 3."


async def test_ladder_falls_back_then_refuses(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    bad = "MATCH (n) DETACH DELETE n"
    cypher = role("cypher", [bad, bad])
    fallback = role("cypher_fallback", ["MATCH (p:Person) SET p.born = 1"])
    p = pipe(films, films_index, cypher_model=cypher, fallback_model=fallback)
    events = await ask(p, "Remove everybody from the graph please")
    assert [e.source for e in events if isinstance(e, CypherEvent)] == [
        "model",
        "retry",
        "fallback",
    ]
    assert (
        p.outcome.status == "refused" and "DETACH" in p.outcome.reason
    ) or "SET" in p.outcome.reason
    assert films.query("MATCH (p:Person) RETURN count(p)", {}, limit=1, timeout_s=5).rows == ((4,),)


async def test_no_model_and_no_template_refuses(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    p = pipe(films, films_index)
    await ask(p, "How many films are there in total?")
    assert p.outcome.status == "refused" and "no `cypher` model" in p.outcome.reason


async def test_empty_result_is_no_rows(films: LadybugGraph, films_index: EntityIndex) -> None:
    cypher = role("cypher", ["MATCH (f:Film) WHERE f.year > 3000 RETURN f.title AS title"] * 5)
    p = pipe(films, films_index, cypher_model=cypher)
    events = await ask(p, "Which films come from the far future?")
    assert p.outcome.status == "no_rows"
    final = next(e for e in events if isinstance(e, Final))
    assert final.answer.status == "no_evidence"
    assert (final.answer.reason or "").startswith("no_rows")


async def test_permissions_filter_template_and_generated(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    who = Principal("u1", {"regions": ("US",)})
    p = pipe(films, films_index)
    await ask(p, "Which films did Ada Stone act in?", who)
    assert p.outcome.answer == "Blue Lake (1999)."
    cypher = role("cypher", ["MATCH (f:Film) RETURN f.title AS title, f.region AS region"])
    p2 = pipe(films, films_index, cypher_model=cypher)
    events = await ask(p2, "List every film with its region", who)
    rows = next(e for e in events if isinstance(e, Rows))
    assert rows.rows == [["Blue Lake", "US"]]
    guard = next(e for e in events if isinstance(e, Guard))
    assert guard.injected and "$__allow_Film" in guard.cypher


async def test_injection_through_entity_name_stays_a_parameter(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    payload = "Ada Stone' }) DETACH DELETE (p) //"
    cypher = role(
        "cypher", [f"MATCH (p:Person) WHERE p.name = '{payload}' RETURN p.name AS name"] * 2
    )
    p = pipe(films, films_index, cypher_model=cypher)
    events = await ask(p, f"When was {payload} born?")
    for e in events:
        if isinstance(e, Guard) and e.ok:
            assert "DETACH" not in e.cypher
    assert films.query("MATCH (p:Person) RETURN count(p)", {}, limit=1, timeout_s=5).rows == ((4,),)


async def test_model_answer_drops_fabricated_rows_and_numbers(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    answer = role(
        "compose",
        [
            '{"sentences": [{"text": "Ada Stone acted in Blue Lake (1999).", "rows": ["row:0"]},'
            ' {"text": "She won 3 awards.", "rows": ["row:0"]},'
            ' {"text": "Red River came out in 2001.", "rows": ["row:9"]}]}'
        ],
    )
    cfg = GraphSettings(understand="rules", answer="model")
    p = GraphQAPipeline(
        GraphDeps(store=films, index=films_index, settings=cfg, answer_model=answer)
    )
    await ask(p, "Which films did Ada Stone act in?")
    # the fabricated sentences are gone; the real row they claimed is rendered from the row
    assert p.outcome.answer == "Ada Stone acted in Blue Lake (1999). Red River (2001)."
    assert [s["rows"] for s in p.outcome.sentences] == [["row:0"], ["row:1"]]


async def test_intent_event_reports_rules(films: LadybugGraph, films_index: EntityIndex) -> None:
    events = await ask(pipe(films, films_index), "When was Ben Stone born?")
    intent = next(e for e in events if isinstance(e, Intent))
    assert (
        intent.intent == "person_born"
        and intent.method == "rules"
        and intent.mentions == ["ben stone"]
    )


async def test_min_confidence_decides_when_an_unsure_reading_asks_back(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    """The `understand` role reads the question with confidence 0.4: below `graph.min_confidence`
    the pipeline asks back before any query; at or above it, it goes on."""
    reading = ('{"intent": "other", "confidence": 0.4, "entities": [], "constraints": [], '
               '"question": "How many films are there in total?"}')  # fmt: skip
    outcomes = []
    for threshold in (0.5, 0.3):
        cfg = GraphSettings(understand="model", answer="template", retries=0,
                            min_confidence=threshold)  # fmt: skip
        deps = GraphDeps(store=films, index=films_index, settings=cfg,
                         understand_model=role("understand", [reading]),
                         cypher_model=role("cypher", ["MATCH (f:Film) RETURN count(f) AS films"]))  # fmt: skip
        p = GraphQAPipeline(deps)
        events = await ask(p, "How many films are there in total?")
        outcomes.append((p.outcome.status, any(isinstance(e, CypherEvent) for e in events)))
    assert outcomes == [("clarify", False), ("answered", True)]
