"""A float in a graph answer is said as a person would write it; the rows keep every digit.

Seen with the embedded model (dev gd-033, after its alignment was fixed): "What is the average
unit price of the products in the Beverages category?" → "The answer is 37.979166666666664."."""

from __future__ import annotations

from test_graph_ladder import role, run

from footnote.index.graph.align import EntityIndex
from footnote.pipelines.graph.answer import spoken
from footnote.store.graph.ladybug import LadybugGraph


def test_a_floats_long_tail_is_rounded_and_nothing_else_changes() -> None:
    assert spoken(37.979166666666664) == "37.98"
    assert spoken(1.0049) == "1.005" and spoken(4.333333333) == "4.333"
    assert spoken(12345.6789) == "12345.68" and spoken(2003.3333333333333) == "2003.33"
    for v, said in (
        (28.73, "28.73"),
        (4.0, "4"),
        (0.5, "0.5"),
        (7, "7"),
        ("12.3456789", "12.3456789"),
    ):
        assert spoken(v) == said
    assert spoken(0.0000123456) == "1.23456e-05"  # too small to round safely: as stored


async def test_an_average_is_answered_rounded_and_the_sentence_passes_the_checks(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    m = role(["MATCH (f:Film) RETURN avg(f.year) AS average_year"])
    p, _ = await run(films, films_index, "What is the average year of the films?", m)
    assert p.outcome.status == "answered", p.outcome
    assert p.outcome.answer == "The answer is 2003.33."
    assert p.outcome.rows == [{"average_year": 2003.3333333333333}]
