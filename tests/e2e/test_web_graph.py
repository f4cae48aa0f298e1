"""The graph tab in a real browser: pick the films graph, ask, read the answer with row
footnotes, the Cypher that ran and the rows table; an ambiguous name asks back.

On the bundled movies demo graph (real app on uvicorn, real pipeline, guard and LadybugDB;
only the `cypher` and `compose` models are scripted stand-ins, issue #34 item 6): the page is
styled like the others and shows nothing about a query before one ran, its stages appear while
it works, the answer reads as sentences beside the rows table, and the Cypher shows its
parameter values and the LIMIT the question asked for, never the server's row-cap probe."""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import uvicorn

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from conftest import SHOTS, serving  # type: ignore[import-not-found]
from playwright.sync_api import Page, expect

from footnote.config import GraphSettings
from footnote.errors import ModelError
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph import sources
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.store.graph.base import GraphSpec
from footnote.workspace import Workspace, graph_catalog

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
    expect(answer).to_have_text("Blue Lake (1999).1 Red River (2001).2")
    expect(page.locator("#graph-cypher")).to_contain_text("MATCH")
    expect(page.locator("#graph-cypher")).to_contain_text("$person")  # the name is a parameter
    expect(page.locator("#graph-params")).to_contain_text('"Ada Stone"')  # and its value shown
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
    expect(page.locator("#graph-progress")).to_contain_text("matches several names")
    expect(page.locator("#graph-progress")).not_to_contain_text("Writing the answer")  # none ran
    expect(page.locator("#graph-cypher")).to_have_count(0)  # no query ran: none is shown


# -- the movies demo graph, with scripted `cypher` and `compose` models ----------------------
AFTER_2000 = (
    "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE p.name = 'Tom Hanks' AND m.released > 2000 "
    "RETURN m.title AS title, m.released AS released ORDER BY released"
)
MOST_RECENT = (
    "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE p.name = 'Tom Hanks' "
    "RETURN m.title AS title, m.released AS released ORDER BY released DESC LIMIT 2"
)
ASK_AFTER = "Which movies released after 2000 did Tom Hanks act in?"


def write_cypher(msgs: Sequence[Message]) -> str:
    """The `cypher` model: a query with the name as a literal (the guard makes it a parameter)."""
    return MOST_RECENT if "most recent" in msgs[-1].content else AFTER_2000


def compose(msgs: Sequence[Message]) -> str:
    """The `compose` model: prose over the rows it was shown, two films a sentence; it fails
    on a question asking for a plain answer (the page then shows the template sentences)."""
    text = msgs[-1].content
    if "plainly" in text:
        raise ModelError("the compose model is down")
    rows = re.findall(r"^row:(\d+): title: (.*?); released: (\d+)$", text, re.M)
    out = []
    for k in range(0, len(rows), 2):
        pair = rows[k : k + 2]
        films = " and ".join(f"{t} ({y})" for _, t, y in pair)
        lead = "Tom Hanks acted in " if k == 0 else "He also acted in "
        out.append({"text": lead + films + ".", "rows": [f"row:{i}" for i, _, _ in pair]})
    return json.dumps({"sentences": out})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def movies_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    ws = Workspace.open(
        tmp_path_factory.mktemp("graph-movies") / "ws",
        overrides={"graph": {"understand": "rules", "answer": "model"}},
    )
    spec = sources.demo_spec("movies")
    nodes, rels = sources.demo_rows("movies", sources.demo_data_dir(ws.settings.graph, "movies"))
    ws.graph_catalog().create(spec, nodes, rels)
    models = {
        "cypher": RoleModel("cypher", FakeChatModel(write_cypher), ledger=Ledger(), external=False),
        "compose": RoleModel("compose", FakeChatModel(compose), ledger=Ledger(), external=False),
    }
    app = create_app(ws, ServerDeps(use_models=False, graph_models=models))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
    ws.close()


def _ask_movies(page: Page, base: str, question: str) -> None:
    page.goto(f"{base}/#/graph")
    expect(page.locator("#graph-select")).to_have_value("movies")
    page.get_by_label("Question about the graph").fill(question)
    page.locator("#graph-ask").click()


def test_graph_page_is_styled_and_shows_no_query_before_one_ran(
    page: Page, movies_server: str
) -> None:
    page.goto(f"{movies_server}/#/graph")
    expect(page.locator("#graph-select option")).to_have_count(1)
    expect(page.locator("section.page.graph > header.page-head h1")).to_have_text("Graph")
    expect(page.locator("#graph-about")).not_to_be_empty()  # the graph's description
    form = page.locator("form.graph-form")
    expect(form).to_have_class(re.compile(r"\bcard\b"))  # the other pages' card
    expect(page.locator("#graph-question")).to_have_class(re.compile(r"\binput\b"))
    expect(page.locator("#graph-select")).to_have_class(re.compile(r"\binput\b"))
    assert form.evaluate("f => getComputedStyle(f).borderTopStyle") == "solid"
    assert form.evaluate("f => getComputedStyle(f).display") == "grid"
    # one row: graph, question and button side by side on a laptop screen
    boxes = [page.locator(sel).bounding_box() for sel in ("#graph-select", "#graph-question")]
    assert boxes[0] and boxes[1] and abs(boxes[0]["y"] - boxes[1]["y"]) < 4
    expect(page.get_by_text("Cypher that ran")).to_have_count(0)  # nothing ran yet
    expect(page.locator("#graph-cypher")).to_have_count(0)
    expect(page.get_by_text("Working…")).to_have_count(0)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "graph-empty.png"), full_page=True)


def test_graph_answer_reads_as_sentences_beside_its_rows(page: Page, movies_server: str) -> None:
    _ask_movies(page, movies_server, ASK_AFTER)
    steps = page.locator("#graph-progress li")
    expect(steps.first).to_have_text("Understanding the question")
    expect(page.locator("#graph-progress")).to_contain_text("Recognised Tom Hanks")
    expect(page.locator("#graph-progress")).to_contain_text("Writing the query (try 1)")
    expect(page.locator("#graph-progress")).to_contain_text("Query checked: read-only")
    expect(page.locator("#graph-progress")).to_contain_text("Ran the query: 4 rows")
    expect(page.locator("#graph-progress")).to_contain_text("Writing the answer from the rows")
    expect(page.locator("#graph-progress")).to_contain_text("2 of 2 sentences passed")
    answer = page.locator("#graph-answer .graph-text")
    expect(answer).to_have_text(
        "Tom Hanks acted in The Polar Express (2004) and The Da Vinci Code (2006).12 "
        "He also acted in Charlie Wilson's War (2007) and Cloud Atlas (2012).34"
    )
    expect(page.locator("#graph-status")).to_contain_text("Answered")
    rows = page.locator(".graph-table tbody tr")
    expect(rows).to_have_count(4)
    expect(rows.nth(2).locator("td").nth(1)).to_have_text("Charlie Wilson's War")
    expect(page.locator(".graph-table tbody tr.cited")).to_have_count(4)
    # the rows sit beside the sentences, not below them
    col, table = (
        page.locator(".graph-answer-col").bounding_box(),
        page.locator("#graph-rows").bounding_box(),
    )
    assert col and table and table["x"] >= col["x"] + col["width"] - 1
    assert abs(table["y"] - col["y"]) < 4
    cypher = page.locator("#graph-cypher")
    expect(cypher).to_contain_text("m.released > 2000")
    expect(cypher).not_to_contain_text("LIMIT")  # the server's 201-row probe is not the query's
    expect(cypher).to_contain_text("$__s0")
    expect(page.locator("#graph-params dt")).to_have_text(["$__s0"])
    expect(page.locator("#graph-params dd")).to_have_text(['"Tom Hanks"'])
    page.get_by_label("Footnote 3").click()
    expect(rows.nth(2)).to_have_class(re.compile(r"\bflash\b"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "graph-answer.png"), full_page=True)


def test_graph_query_shows_the_limit_the_question_asked_for(page: Page, movies_server: str) -> None:
    _ask_movies(page, movies_server, "Which two movies did Tom Hanks act in most recently?")
    expect(page.locator("#graph-answer .graph-text")).to_have_text(
        "Tom Hanks acted in Cloud Atlas (2012) and Charlie Wilson's War (2007).12"
    )
    cypher = page.locator("#graph-cypher")
    expect(cypher).to_contain_text("ORDER BY released DESC LIMIT 2")
    expect(cypher).not_to_contain_text("201")


def test_graph_template_answer_reads_as_sentences_not_a_row_dump(
    page: Page, movies_server: str
) -> None:
    _ask_movies(page, movies_server, ASK_AFTER + " Answer plainly.")
    answer = page.locator("#graph-answer .graph-text")
    expect(answer).to_contain_text("The Polar Express (released 2004).1")
    expect(answer).to_contain_text("Cloud Atlas (released 2012).4")
    expect(answer).not_to_contain_text("title:")
    expect(page.locator(".graph-table tbody tr")).to_have_count(4)
