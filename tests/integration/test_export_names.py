"""Exports name what a reader knows: a chat thread is titled by its first question when the
conversation was never named, every footnote leads with the paper (title, file, page, section)
and keeps the block or card id only as a secondary anchor, and a brief never prints the
server's path of a library file (its title and file name instead; web sources keep their URL).
Real bundled paper, real extractive pipeline, real server routes, WeasyPrint read back by pdfium."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from research_support import collect, web_settings
from typer.testing import CliRunner

from footnote.cli import app as cli_app
from footnote.eval.fixture_web import FixtureWeb
from footnote.examples import PAPERS_DIR
from footnote.pipelines.export.answers import UNTITLED_SESSION
from footnote.pipelines.research.markdown import brief_markdown
from footnote.serialize import from_plain
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.types import Brief
from footnote.workspace import Workspace
from footnote.workspace.export import export_brief
from footnote.workspace.research import confirm_outline, research_store, start_research

pytestmark = pytest.mark.integration
pdfium = pytest.importorskip("pypdfium2")
pytest.importorskip("weasyprint", reason="pip install 'footnote[export]'")
runner = CliRunner()
PAPER = PAPERS_DIR / "literature-graph-semantic-scholar.pdf"
PAPER_TITLE = "Construction of the Literature Graph in Semantic Scholar"
QUESTION = "How are entities linked to the knowledge base in the literature graph?"
FAST = {"models": {"embed": {"url": "local:wordllama"}},
        "ask": {"mode": "extractive", "use_judge": False}}  # fmt: skip


def plain(markdown: str) -> str:
    """Exported Markdown as it reads once rendered (its escapes removed)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def pdf_text(data: bytes) -> str:
    doc = pdfium.PdfDocument(data)
    text = "\n".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    return " ".join(text.split())


def appendix_entries(markdown: str) -> list[str]:
    return [line for line in plain(markdown).splitlines() if re.match(r"\[\^\d+\]: ", line)]


def wait_run(client: TestClient, run_id: str) -> None:
    for _ in range(1200):
        if client.get(f"/v1/runs/{run_id}").json()["status"] != "running":
            return
        time.sleep(0.05)
    raise AssertionError("run did not finish")


@pytest.fixture(scope="module")
def thread(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str, Any]]:
    """An untitled conversation with one answered question on the bundled paper."""
    ws = Workspace.open(tmp_path_factory.mktemp("names") / "ws", overrides=FAST)
    assert ws.ingest([PAPER]).results[0].outcome == "added"
    app = create_app(ws, ServerDeps(use_models=False))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        session = client.post("/v1/sessions", json={}).json()
        assert session["title"] == UNTITLED_SESSION  # what the store calls an unnamed session
        turn = client.post(f"/v1/sessions/{session['id']}/messages", json={"content": QUESTION})
        assert turn.status_code == 202, turn.text
        wait_run(client, turn.json()["run_id"])
        yield client, session["id"], ws
    ws.close()


def test_thread_export_is_titled_by_its_question_and_footnotes_name_the_paper(
    thread: tuple[TestClient, str, Any],
) -> None:
    client, sid, ws = thread
    md = client.get(f"/v1/sessions/{sid}/export", params={"format": "markdown"}).text
    assert plain(md).splitlines()[0] == f"# {QUESTION}"
    assert UNTITLED_SESSION not in md
    entries = appendix_entries(md)
    assert entries
    paper_file = PAPER.name
    for entry in entries:
        # the paper first (title, file name, page, section), the quote after, the id last
        head = re.match(r"\[\^\d+\]: \*\*(.+?)\*\* \((.+?)\), p\. (\d+), (.+?): “", entry)
        assert head, entry
        assert head.group(1) == PAPER_TITLE and head.group(2) == paper_file
        anchor = re.search(r"anchor `([^`]+)`\.$", entry)
        assert anchor, entry
        block = ws.store.get_block(anchor.group(1))
        assert block is not None and int(head.group(3)) == block.page
        assert head.group(4) == " › ".join(block.section_path)
        assert entry.index(anchor.group(1)) > entry.index("“")  # the id only after the quote
    html = client.get(f"/v1/sessions/{sid}/export", params={"format": "html"}).text
    assert f"<title>{QUESTION}</title>" in html and f"<h1>{QUESTION}</h1>" in html
    first = re.search(r'<li id="ev-1" value="1">(.*?)</li>', html)
    assert first and first.group(1).startswith(
        f"<strong>{PAPER_TITLE}</strong> ({paper_file}), p. "
    )
    # a footnote mark in the text names its paper and page on hover
    assert re.search(rf'<a href="#ev-1" title="{re.escape(PAPER_TITLE)}, p\. \d+', html)
    pdf = pdf_text(client.get(f"/v1/sessions/{sid}/export", params={"format": "pdf"}).content)
    assert pdf.startswith(QUESTION) and UNTITLED_SESSION not in pdf
    appendix = pdf[pdf.index("Evidence appendix") :]
    assert appendix.index(PAPER_TITLE) < appendix.index("“")


def test_a_named_conversation_keeps_its_name(thread: tuple[TestClient, str, Any]) -> None:
    client, sid, _ = thread
    client.patch(f"/v1/sessions/{sid}", json={"title": "Entity linking notes"})
    try:
        md = client.get(f"/v1/sessions/{sid}/export", params={"format": "markdown"}).text
        assert md.splitlines()[0] == "# Entity linking notes"
    finally:
        client.patch(f"/v1/sessions/{sid}", json={"title": UNTITLED_SESSION})


@pytest.fixture(scope="module")
def brief_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, str, Path]]:
    """A brief citing a library file (by its server path) and web pages."""
    root = tmp_path_factory.mktemp("brief-paths")
    docs = root / "server-side" / "uploads"
    docs.mkdir(parents=True)
    (docs / "public-report.md").write_text(
        "# Public report\n\nThe public report says the recycling market grew by 11% in 2023.\n"
    )
    with FixtureWeb() as web:
        overrides = web_settings(web)
        overrides["models"]["embed"] = {"url": "local:wordllama"}
        ws = Workspace.open(root / "ws", overrides=overrides)
        ws.ingest([docs / "public-report.md"])
        run_id, _ = start_research(ws, "How fast did the recycling market grow?",
                                   template="market_size")  # fmt: skip
        outline = research_store(ws).get_artifact(run_id, "outline")
        assert outline is not None
        confirm_outline(ws, run_id, {"items": [i for i in outline["items"] if i["id"] == "growth"]})
        collect(ws, run_id)
        yield ws, run_id, docs
    ws.close()


def test_brief_exports_show_file_names_and_urls_never_server_paths(
    brief_ws: tuple[Workspace, str, Path],
) -> None:
    ws, run_id, docs = brief_ws
    data = research_store(ws).get_artifact(run_id, "brief")
    assert data is not None
    stored = from_plain(Brief, data)
    library = [c for c in stored.cards if c.block_id]
    web = [c for c in stored.cards if c.snapshot_id]
    assert library and web and library[0].url.startswith(str(docs))  # the card keeps the path
    outputs = {
        "brief markdown": brief_markdown(stored),
        "markdown": plain(export_brief(ws, run_id, "markdown")[0].decode()),
        "html": export_brief(ws, run_id, "html")[0].decode(),
        "json": export_brief(ws, run_id, "json")[0].decode(),
        "pdf": pdf_text(export_brief(ws, run_id, "pdf")[0]),
    }
    for name, text in outputs.items():
        assert str(docs) not in text and "server-side" not in text, name
    for name, text in outputs.items():
        assert "public-report.md" in text, name  # the file is named by its file name
        assert web[0].url in text, name  # a web source keeps its address
    entries = json.loads(outputs["json"])["evidence"]
    lib = next(e for e in entries if e["id"] == library[0].id)
    assert lib["url"] == "" and lib["file_name"] == "public-report.md"
    md_entry = next(e for e in appendix_entries(outputs["markdown"]) if library[0].id in e)
    assert md_entry.split(": ", 1)[1].startswith("**Public report** (public-report.md), p. 1")


def test_cli_exports_name_the_question_and_the_file(
    thread: tuple[TestClient, str, Any], brief_ws: tuple[Workspace, str, Path]
) -> None:
    _, sid, chat_ws = thread
    ws, run_id, docs = brief_ws
    session = runner.invoke(cli_app, ["export", "session", sid, "-w", str(chat_ws.dir)])
    assert session.exit_code == 0, session.output
    assert plain(session.stdout).startswith(f"# {QUESTION}\n")
    assert f"**{PAPER_TITLE}** ({PAPER.name}), p. " in plain(session.stdout)
    brief = runner.invoke(cli_app, ["research", "export", run_id, "-w", str(ws.dir)])
    assert brief.exit_code == 0, brief.output
    assert "public-report.md" in brief.stdout and str(docs) not in brief.stdout
