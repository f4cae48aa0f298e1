"""A tiny graph of our own (films) on a real LadybugDB, for the graph QA unit tests."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.config import GraphSettings
from footnote.index.graph.align import EntityIndex, entity_index
from footnote.models.fake import HashEmbedder
from footnote.store.graph.base import GraphSpec
from footnote.store.graph.ladybug import LadybugGraph
from footnote.workspace import graph_catalog

_spec = importlib.util.spec_from_file_location(
    "graph_films", Path(__file__).resolve().parents[2] / "data" / "graph_films.py"
)
assert _spec is not None and _spec.loader is not None
graph_films = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(graph_films)
sys.modules.setdefault("graph_films", graph_films)  # tests and bench import it by this name
FILMS, NODES, RELS = graph_films.FILMS, graph_films.NODES, graph_films.RELS


@pytest.fixture(scope="session")
def films_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("graphs")
    graph_catalog(GraphSettings(dir=str(root)), root).create(
        GraphSpec.model_validate(FILMS), NODES, RELS
    )
    return root


@pytest.fixture()
def films(films_dir: Path) -> Iterator[LadybugGraph]:
    g = graph_catalog(GraphSettings(dir=str(films_dir)), films_dir).open("films")
    assert isinstance(g, LadybugGraph)
    yield g
    g.close()


@pytest.fixture()
def films_index(films: LadybugGraph) -> EntityIndex:
    return entity_index(films, HashEmbedder(), GraphSettings(min_cosine=0.3), None)
