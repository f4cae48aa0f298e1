"""Typed non-entity template slots (#33): numbers, years, dates, booleans and enumerated
values are read from the question by code, validated, and bound as query parameters (never
pasted into the Cypher); a value of the wrong type is a clear refusal. The films graph with
one more intent, on a real LadybugDB, rules and templates only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from graph_films import FILMS, NODES, RELS

from footnote.config import GraphSettings
from footnote.errors import ConfigError
from footnote.index.graph.align import entity_index
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.slots import read_slots
from footnote.store.graph.base import GraphSpec, ValueSlot
from footnote.verify.cypher.guard import Principal
from footnote.workspace import graph_catalog

AFTER: dict[str, Any] = {
    "description": "Which films came out after a year?",
    "cypher": "MATCH (f:Film) WHERE f.year > $year RETURN f.title AS title, f.year AS year "
    "ORDER BY year",
    "values": {"year": {"type": "YEAR", "cues": ["after", "since", "之后", "以后"]}},
    "keywords": ["came out after", "released after", "之后的电影", "以后的电影"],
    "answer": "{title} ({year}).",
}
SPEC = {**FILMS, "name": "films-typed", "intents": {**FILMS["intents"], "films_after": AFTER}}


@pytest.fixture(scope="module")
def typed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphQAPipeline]:
    root: Path = tmp_path_factory.mktemp("typed")
    catalog = graph_catalog(GraphSettings(dir=str(root)), root)
    catalog.create(GraphSpec.model_validate(SPEC), NODES, RELS)
    store = catalog.open("films-typed")
    cfg = GraphSettings(understand="rules", answer="template")
    pipe = GraphQAPipeline(GraphDeps(store, entity_index(store, None, cfg, None), cfg))
    yield pipe
    pipe.close()


async def ask(pipe: GraphQAPipeline, question: str) -> dict[str, Any]:
    async for _ in pipe.run(GraphRequest(question, Principal(unrestricted=True))):
        pass
    return pipe.outcome.to_dict()


@pytest.mark.parametrize(
    "question",
    [
        "Which films came out after 2000?",
        "2000年以后的电影有哪些？",
        "Which films came out after ２０００?",
    ],
)
async def test_a_year_is_read_by_code_and_bound_as_a_parameter(
    typed: GraphQAPipeline, question: str
) -> None:
    o = await ask(typed, question)
    assert o["status"] == "answered" and o["source"] == "template", o["reason"]
    assert o["params"] == {"year": 2000} and isinstance(o["params"]["year"], int)
    assert "$year" in o["cypher"] and "2000" not in o["cypher"]  # a parameter, never pasted
    assert {r["title"] for r in o["rows"]} == {"Red River", "Green Hill"}


@pytest.mark.parametrize(
    ("question", "said"),
    [("Which films came out after the war?", "'the war'"),
     ("Which films came out after 20001?", "'20001'")],
)  # fmt: skip
async def test_a_wrong_typed_value_is_a_clear_refusal(
    typed: GraphQAPipeline, question: str, said: str
) -> None:
    o = await ask(typed, question)
    assert o["status"] == "refused" and not o["rows"] and not o["cypher"]
    assert "films_after" in o["reason"] and "a year" in o["reason"] and said in o["reason"]


def slot(**kw: Any) -> ValueSlot:
    return ValueSlot.model_validate(kw)


@pytest.mark.parametrize(
    ("kind", "question", "value"),
    [
        ("INT64", "orders with more than 1,200 units", 1200),
        ("DOUBLE", "products priced over 12.5 dollars", 12.5),
        ("DATE", "orders shipped after 2021-03-04", "2021-03-04"),
        ("DATE", "orders shipped after March 4, 2021", "2021-03-04"),
        ("DATE", "2021年3月4日之后发货的订单", "2021-03-04"),
    ],
)
def test_numbers_and_dates_are_typed(kind: str, question: str, value: Any) -> None:
    cues = ["more than", "over", "after", "之后"]
    got = read_slots(question, {"v": slot(type=kind, cues=cues)}, lambda _s: ())
    assert got.error == "" and got.values == {"v": value} and type(got.values["v"]) is type(value)


@pytest.mark.parametrize(
    ("kind", "question", "why"),
    [
        ("INT64", "orders with more than 3.5 units", "a whole number"),
        ("DATE", "orders shipped after 2021-02-30", "a date"),
        ("INT64", "orders with more than many units", "a whole number"),
    ],
)
def test_wrong_numbers_and_dates_are_refused(kind: str, question: str, why: str) -> None:
    got = read_slots(question, {"v": slot(type=kind, cues=["more than", "after"])}, lambda _s: ())
    assert why in got.error and not got.values


def test_booleans_and_enumerated_values() -> None:
    flag = {"gone": slot(type="BOOL", cues=["discontinued", "停产"], false_cues=["still sold"])}
    assert read_slots("Which discontinued products?", flag, lambda _s: ()).values == {"gone": True}
    assert read_slots("Which products are still sold?", flag, lambda _s: ()).values == {
        "gone": False
    }
    assert read_slots("Which products?", flag, lambda _s: ()).missing == ["gone"]
    region = {"region": slot(type="ENUM", cues=["in"], values=["EU", "US"])}
    assert read_slots("films shot in eu", region, lambda _s: ()).values == {"region": "EU"}
    wrong = read_slots("films shot in Asia", region, lambda _s: ())
    assert "'Asia'" in wrong.error and "EU, US" in wrong.error
    stored = {"country": slot(type="ENUM", property="Shop.country")}
    assert read_slots("shops in France?", stored, lambda _s: ("France", "Spain")).values == {
        "country": "France"
    }


def test_the_spec_checks_its_slots() -> None:
    bad_enum = {**AFTER, "values": {"r": {"type": "ENUM"}}}
    hidden = {**AFTER, "values": {"r": {"type": "ENUM", "property": "Film.region"}}}
    clash = {**AFTER, "params": {"year": "Person"}}
    unused = {**AFTER, "values": {"decade": {"type": "INT64"}}}
    for intent in (bad_enum, hidden, clash, unused):
        spec = GraphSpec.model_validate({**SPEC, "intents": {"films_after": intent}})
        with pytest.raises(ConfigError):
            spec.check()
