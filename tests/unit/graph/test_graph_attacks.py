"""Every attack in tests/data/graph_attacks.json is blocked by code (guard + EXPLAIN)."""

from __future__ import annotations

from typing import Any

import graph_films  # type: ignore[import-not-found]  # registered by conftest.py
import pytest

from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import GraphGuard

CASES = graph_films.load_attacks()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_attack_is_blocked(case: dict[str, Any], films: LadybugGraph) -> None:
    blocked, detail = graph_films.run_attack(case, GraphGuard(films), films)
    assert blocked, detail


def test_graph_unchanged_after_the_suite(films: LadybugGraph) -> None:
    for case in CASES:
        graph_films.run_attack(case, GraphGuard(films), films)
    rows = films.query("MATCH (p:Person) RETURN count(p)", {}, limit=5, timeout_s=5).rows
    assert rows == ((4,),)
