"""Clarification from signals that separate, and honest empty results (issue #33 items 3, 6):
the code decides when to ask back (entity ties offered by label, a property the schema lacks,
a question naming nothing the graph holds, candidates whose results differ) against
`graph.clarify_threshold`; an empty result goes down the relaxation rung (values as stored,
case-insensitive CONTAINS) before "no rows for this query", and the query without its most
restrictive filter is offered as a question, never answered. Real LadybugDB graphs; fakes
only for the models."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from graph_films import FILMS, NODES, RELS

from footnote.config import GraphSettings
from footnote.events import CypherEvent, Event
from footnote.index.graph.align import EntityIndex, entity_index
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.base import GraphSpec, GraphStore
from footnote.verify.cypher.guard import Principal
from footnote.workspace import graph_catalog

TITLES = "MATCH (f:Film) RETURN f.title AS title"
COUNT = "MATCH (f:Film) RETURN count(f) AS films"
COUNT2 = "MATCH (n:Film) RETURN count(*) AS n"


def role(name: str, script: Sequence[str]) -> RoleModel:
    return RoleModel(name, FakeChatModel(list(script)), ledger=Ledger(), external=False)


def pipe(
    store: GraphStore, index: EntityIndex, cypher: RoleModel | None = None, **cfg: Any
) -> GraphQAPipeline:
    settings = GraphSettings(understand="rules", answer="template", retries=1, **cfg)
    return GraphQAPipeline(GraphDeps(store=store, index=index, settings=settings,
                                     cypher_model=cypher))  # fmt: skip


async def ask(p: GraphQAPipeline, q: str) -> list[Event]:
    return [e async for e in p.run(GraphRequest(q, Principal(unrestricted=True)))]


def calls(m: RoleModel) -> int:
    return len(m.model.calls)  # type: ignore[attr-defined]


@pytest.fixture()
def stone_age(tmp_path: Path) -> Iterator[GraphStore]:
    """The films graph plus a film whose title shares a word with two people's names."""
    cat = graph_catalog(GraphSettings(dir=str(tmp_path)), tmp_path)
    spec = GraphSpec.model_validate({**FILMS, "name": "stoneage"})
    nodes = {**NODES, "Film": [*NODES["Film"], {"title": "Stone Age", "year": 2015,
                                                "region": "EU"}]}  # fmt: skip
    cat.create(spec, nodes, RELS)
    store = cat.open("stoneage")
    yield store
    store.close()


async def test_a_name_of_several_kinds_asks_back_offering_each_reading(
    stone_age: GraphStore,
) -> None:
    index = entity_index(stone_age, None, GraphSettings(), None)
    cypher = role("cypher", [TITLES])
    p = pipe(stone_age, index, cypher)
    events = await ask(p, "When was Stone made?")
    o = p.outcome
    assert o.status == "clarify" and not any(isinstance(e, CypherEvent) for e in events)
    assert o.reason == (
        "'Stone' could mean the film Stone Age, the person Ada Stone or the person Ben Stone: "
        "which one did you mean?"
    )
    assert set(o.options) == {"Ada Stone", "Ben Stone", "Stone Age"}
    assert o.clarify["ask"] and o.clarify["signals"][0]["kind"] == "entity"


async def test_clarify_threshold_decides_whether_the_signals_ask_back(
    films: GraphStore, films_index: EntityIndex
) -> None:
    """A keyword tie scores 0.9, and so does a question naming nothing of the graph: asked
    back at the default threshold, not at 0.95 (the tie then goes on with its best
    candidate, as a query)."""
    for q in ("Which films did Stone act in?", "Tell me something interesting."):
        low = pipe(films, films_index, role("cypher", [TITLES]))
        await ask(low, q)
        high = pipe(films, films_index, role("cypher", [TITLES]), clarify_threshold=0.95)
        events = await ask(high, q)
        assert low.outcome.status == "clarify", q
        assert 0.85 <= low.outcome.clarify["score"] < 0.95
        assert high.outcome.status != "clarify" and high.outcome.clarify["ask"] is False
        assert any(isinstance(e, CypherEvent) for e in events)
    p = pipe(films, films_index, role("cypher", [TITLES]))
    await ask(p, "Tell me something interesting.")
    assert p.outcome.reason.startswith("the question names nothing this graph holds")
    assert p.outcome.options == ["Person", "Film"]


async def test_a_property_the_schema_lacks_is_named_by_code_without_a_model(
    films: GraphStore, films_index: EntityIndex
) -> None:
    """No `cypher` model bound: the code still says what the graph does not hold, in English
    and in Chinese, instead of "no template matches"."""
    p = pipe(films, films_index)
    await ask(p, "What is the budget of Red River?")
    assert p.outcome.status == "refused"
    assert p.outcome.reason == "the graph does not hold budget; it holds title, year, region"
    p = pipe(films, films_index)
    await ask(p, "Red River的票房是多少？")
    assert p.outcome.reason == "the graph does not hold 票房; it holds title, year, region"
    p = pipe(films, films_index)  # a property it holds is not a gap
    await ask(p, "What is the year of Red River?")
    assert "does not hold" not in p.outcome.reason
    # a Chinese count of a thing the graph lacks (seen in the embedded run: "Tokyo Traders
    # 有多少名员工？" was answered with a count of products)
    p = pipe(films, films_index, role("cypher", [COUNT]))
    await ask(p, "Red River有多少名员工？")
    assert p.outcome.reason.startswith("the graph does not hold 员工"), p.outcome.reason
    p = pipe(films, films_index, role("cypher", [COUNT]))  # a count of what it holds
    await ask(p, "一共有多少个人？")
    assert p.outcome.status == "answered", p.outcome.reason


async def test_a_latin_name_beside_chinese_is_aligned(
    films: GraphStore, films_index: EntityIndex
) -> None:
    p = pipe(films, films_index)
    await ask(p, "Ada Stone出演过哪些电影？")
    assert p.outcome.status == "answered"  # an intent with no `answer_zh`: the generic rendering
    assert p.outcome.answer == "Blue Lake（year 1999）。Red River（year 2001）。", p.outcome.answer
    p = pipe(films, films_index)
    await ask(p, "Stone出演过哪些电影？")
    assert p.outcome.status == "clarify" and set(p.outcome.options) == {"Ada Stone", "Ben Stone"}


async def test_candidates_with_different_results_ask_back_with_the_readings(
    films: GraphStore, films_index: EntityIndex
) -> None:
    """Two candidates, two different non-empty results: the readings signal (1.0) asks back
    by default, each reading shown with its first row."""
    m = role("cypher", [TITLES, COUNT])
    p = pipe(films, films_index, m, candidates=2, choose="agreement")
    await ask(p, "How many films are there in total?")
    o = p.outcome
    assert o.status == "clarify" and "read in 2 ways" in o.reason
    assert len(o.options) == 2 and any("films: 3" in x for x in o.options)
    assert o.clarify["signals"][-1]["kind"] == "readings"


async def test_two_of_three_candidates_agreeing_answer_unless_the_threshold_is_lower(
    films: GraphStore, films_index: EntityIndex
) -> None:
    """3 candidates, 2 agree: the readings signal is half the minority's share, 1/6: under
    the default threshold (answered), over 0.15 (asked back)."""
    outcomes = []
    for t in (GraphSettings().clarify_threshold, 0.15):
        m = role("cypher", [COUNT, TITLES, COUNT2])
        p = pipe(films, films_index, m, candidates=3, choose="agreement", clarify_threshold=t)
        await ask(p, "How many films are there in total?")
        outcomes.append((p.outcome.status, p.outcome.clarify["score"]))
    assert outcomes == [("answered", 0.1667), ("clarify", 0.1667)]


async def test_a_value_as_stored_answers_an_empty_query_and_says_so(
    films: GraphStore, films_index: EntityIndex
) -> None:
    wrong_case = "MATCH (f:Film) WHERE f.title = 'red river' RETURN f.year AS year"
    m = role("cypher", [wrong_case] * 5)
    p = pipe(films, films_index, m)
    events = await ask(p, "When was the film red river made?")
    o = p.outcome
    assert o.status == "answered" and calls(m) == 1, o.reason  # no retry was needed
    assert o.rows == [{"year": 2001}] and o.relaxed == "'red river' as stored: title = 'Red River'"
    assert o.answer.startswith(
        "No rows for this query: MATCH (f:`Film`) WHERE f.title = 'red river' RETURN f.year AS "
        "year; relaxed: 'red river' as stored: title = 'Red River'."
    )
    assert o.answer.endswith("The answer is 2001.")
    assert [e.source for e in events if isinstance(e, CypherEvent)] == ["model", "relaxed"]


async def test_string_equality_is_relaxed_to_case_insensitive_contains(
    films: GraphStore, films_index: EntityIndex
) -> None:
    """'stone' ties two people (no stored value to take): CONTAINS finds both, and the
    answer says the query was relaxed."""
    q = "MATCH (p:Person) WHERE p.name = 'stone' RETURN p.name AS name, p.born AS born"
    p = pipe(films, films_index, role("cypher", [q] * 5))
    await ask(p, "When were the people called stone born?")
    o = p.outcome
    assert o.status == "answered" and {r["name"] for r in o.rows} == {"Ada Stone", "Ben Stone"}
    assert "toLower(p.name) CONTAINS toLower(" in o.cypher
    assert o.relaxed == "'stone' matched case-insensitively (CONTAINS)"
    assert o.sentences[0]["factual"] is False and "relaxed" in o.sentences[0]["text"]


async def test_the_most_restrictive_filter_is_offered_as_a_question_not_answered(
    films: GraphStore, films_index: EntityIndex
) -> None:
    q = "MATCH (f:Film) WHERE f.year > 2000 AND f.title = 'Mars Base' RETURN f.title AS title"
    p = pipe(films, films_index, role("cypher", [q] * 5))
    await ask(p, "Which films after 2000 are called Mars Base?")
    o = p.outcome
    assert o.status == "clarify" and o.rows == []
    assert o.reason.startswith(
        "No rows for this query: MATCH (f:`Film`) WHERE f.year > 2000 AND f.title = 'Mars Base' "
        "RETURN f.title AS title. Without the filter f.title = 'Mars Base' it matches 2 row(s) "
        "(title: Red River (+1 more)): is that what you meant?"
    )
    assert o.options == ["MATCH (f:`Film`) WHERE f.year > 2000 RETURN f.title AS title"]
    # off: the empty result is said as it is
    p = pipe(films, films_index, role("cypher", [q] * 5), relax=False)
    await ask(p, "Which films after 2000 are called Mars Base?")
    assert p.outcome.status == "no_rows" and p.outcome.answer.startswith("No rows for this query")


def _bench() -> Any:
    path = Path(__file__).resolve().parents[3] / "bench" / "graph_clarify_calibrate.py"
    spec = importlib.util.spec_from_file_location("graph_clarify_calibrate", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["graph_clarify_calibrate"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_dev_set_and_the_code_only_calibration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The labelled set: ≥ 40 questions over both demo graphs, a quarter Chinese, each labelled
    with its reason; the code-only reading (no model) scores an entity tie and a missing
    property above the clear questions, and the fit keeps false clarification in the bound."""
    bench = _bench()
    cases = bench.load()
    assert len(cases) >= 40 and {c["graph"] for c in cases} == {"movies", "northwind"}
    assert sum(c["lang"] == "zh" for c in cases) >= len(cases) / 4
    assert {c["label"] for c in cases} == {"ambiguous", "clear"} and all(c["reason"] for c in cases)
    monkeypatch.setattr(bench, "OUT", tmp_path)
    pick = [c for c in cases if c["id"] in ("gc-001", "gc-004", "gc-016", "gc-043", "gc-053")]
    recs = {r["id"]: r for r in bench.read("code", pick)}
    assert recs["gc-001"]["score"] >= 0.85 and recs["gc-004"]["score"] == 1.0
    assert all(recs[i]["score"] < 0.35 for i in ("gc-016", "gc-043", "gc-053"))
    t, curve = bench.fit(list(recs.values()), 0.1)
    assert bench.rates(list(recs.values()), t)["false_clarification"]["value"] <= 0.1
    assert json.dumps(curve)  # the record is JSON
