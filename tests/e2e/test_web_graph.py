"""The graph tab in a real browser: pick the films graph, ask, read the answer with row
footnotes, the Cypher that ran and the rows table; an ambiguous name asks back."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from conftest import SHOTS, serving  # type: ignore[import-not-found]
from playwright.sync_api import Page, expect

from footnote.config import GraphSettings
from footnote.store.graph.base import GraphSpec
from footnote.workspace import graph_catalog

pytestmark = pytest.mark.integration
_path = Path(__file__).resolve().parents[1] / "data" / "graph_films.py"
_spec = importlib.util.spec_from_file_location("graph_films_e2e", _path)
assert _spec is not None and _spec.loader is not None
films = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(films)


@pytest.fixture(scope="module")
def graph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("graph-web")
    ws = root / "ws"
    graph_catalog(GraphSettings(), ws).create(
        GraphSpec.model_validate(films.FILMS), films.NODES, films.RELS
    )
    (ws / "config.toml").write_text(
        '[graph]\nunderstand = "rules"\nanswer = "template"\n'
        '[models.cypher]\nurl = ""\n[models.understand]\nurl = ""\n[models.compose]\nurl = ""\n',
        encoding="utf-8",
    )
    with serving(ws, root / "server.log") as url:
        yield url


def test_graph_tab_answers_with_row_footnotes(page: Page, graph_server: str) -> None:
    page.goto(f"{graph_server}/#/graph")
    expect(page.get_by_role("link", name="Graph")).to_have_attribute("aria-current", "page")
    expect(page.locator("#graph-select option")).to_have_count(1)
    page.get_by_label("Question about the graph").fill("Which films did Ada Stone act in?")
    page.locator("#graph-ask").click()
    answer = page.locator("#graph-answer .graph-text")
    expect(answer).to_have_text("Blue Lake (1999).[1] Red River (2001).[2]")
    expect(page.locator("#graph-cypher")).to_contain_text("MATCH")
    expect(page.locator("#graph-cypher")).to_contain_text("$person")  # the name is a parameter
    rows = page.locator(".graph-table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_have_class("cited")
    expect(rows.nth(0).locator("td").nth(1)).to_have_text("Blue Lake")
    expect(page.locator("#graph-status")).to_contain_text("1.00")
    page.get_by_label("Footnote 2").click()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "graph-tab.png"), full_page=True)


def test_graph_tab_asks_back_on_an_ambiguous_name(page: Page, graph_server: str) -> None:
    page.goto(f"{graph_server}/#/graph")
    page.get_by_label("Question about the graph").fill("Which films did Stone act in?")
    page.locator("#graph-ask").click()
    expect(page.locator(".graph-unsure")).to_contain_text("could mean")
    expect(page.locator(".graph-options li")).to_have_count(2)
