"""Exports of a real reviewed brief and of a chat thread: every format opens (the PDF is
rendered by WeasyPrint and read back by pdfium), each carries the evidence appendix, Chinese
text comes out of the PDF in an embedded CJK font, and labelled or ACL-restricted evidence is
withheld — and said to be — for a user who may not read it."""

from __future__ import annotations

import ctypes
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from research_support import collect, open_ws, run_all, web_settings

from footnote.eval.fixture_web import FixtureWeb
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace
from footnote.workspace.export import export_brief, export_thread
from footnote.workspace.research import confirm_outline, research_store, start_research
from footnote.workspace.review import (
    decide,
    decide_origin,
    mark_seen,
    resolve_conflict,
    review_store,
    review_view,
    sign_off,
    tick,
)

pytestmark = pytest.mark.integration
pdfium = pytest.importorskip("pypdfium2")
pytest.importorskip("weasyprint", reason="pip install 'footnote[export]'")
FAST = {"models": {"embed": {"url": "local:wordllama"}},
        "ask": {"mode": "extractive", "use_judge": False}}  # fmt: skip


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def plain(markdown: bytes) -> str:
    """Exported Markdown as it reads once rendered (its escapes removed)."""
    return re.sub(r"\\(.)", r"\1", markdown.decode())


def pdf_text(data: bytes) -> str:
    doc = pdfium.PdfDocument(data)
    return "\n".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))


def pdf_fonts_of(data: bytes, wanted: str) -> set[str]:
    """The names of the fonts pdfium draws the characters of `wanted` with."""
    raw = pdfium.raw
    doc = pdfium.PdfDocument(data)
    names: set[str] = set()
    for i in range(len(doc)):
        tp = doc[i].get_textpage()
        for n in range(tp.count_chars()):
            if chr(raw.FPDFText_GetUnicode(tp, n)) in wanted:
                buf = ctypes.create_string_buffer(256)
                flags = ctypes.c_int()
                raw.FPDFText_GetFontInfo(tp, n, buf, 256, ctypes.byref(flags))
                names.add(buf.value.decode(errors="replace"))
    return names


def test_every_format_of_a_signed_brief(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web, writer="extractive", select="rules")
    run_id, _ = run_all(ws, template="market_size")
    view = review_view(ws, run_id)
    for c in (c for s in view["sections"] for c in s["claims"]):
        mark_seen(ws, run_id, c["id"], "ana")
        if c["key_number"]:
            tick(ws, run_id, c["id"], "ana")
    for conflict in view["conflicts"]:
        resolve_conflict(ws, run_id, conflict["id"], "annotate", "ana", note="scopes differ")
    for group in view["origins"]:
        decide_origin(ws, run_id, group["id"], "same", "ana", "one figure, one origin")
    signed = sign_off(ws, run_id, "ana")
    card = next(c for c in view["cards"] if c["snapshot_id"])
    snap = research_store(ws).get_snapshot(card["snapshot_id"])
    assert snap is not None
    md = plain(export_brief(ws, run_id, "markdown")[0])
    assert "## Evidence appendix" in md and snap.sha256 in md and snap.fetched_at in md
    assert f"**Version hash:** {signed.version_hash}" in md and "SIGNED OFF" in md
    assert "scopes differ" in md and card["locator"] in md
    html = export_brief(ws, run_id, "html")[0].decode()
    assert html.startswith("<!doctype html>") and snap.sha256 in html
    data = json.loads(export_brief(ws, run_id, "json")[0])
    assert len(data["evidence"]) == len(view["cards"])  # every card in the appendix
    assert all(e["content_hash"] and e["fetched_at"] for e in data["evidence"])
    works = data["works"]
    bib = export_brief(ws, run_id, "bibtex")[0].decode()
    assert bib.count("\n@") + bib.startswith("@") == len(works) > 0
    csl = json.loads(export_brief(ws, run_id, "csl")[0])
    assert [w["id"] for w in csl] == [w["key"] for w in works]
    pdf, doc = export_brief(ws, run_id, "pdf")
    assert pdf.startswith(b"%PDF-")
    text = " ".join(pdf_text(pdf).split())
    assert "Evidence appendix" in text and signed.version_hash in text.replace(" ", "")
    first_claim = doc.sections[1].paragraphs[0].text if doc.sections[1].paragraphs else ""
    assert " ".join(first_claim.split())[:40] in text
    # a later change makes version 2 (unsigned); version 1 still exports as signed
    first_id = next(c["id"] for s in view["sections"] for c in s["claims"])
    decide(ws, run_id, first_id, "reject", "ana")
    now = plain(export_brief(ws, run_id, "markdown")[0])
    assert "NOT SIGNED OFF (changed_after_signoff)" in now and "**Version:** 2" in now
    v1 = plain(export_brief(ws, run_id, "markdown", version=1)[0])
    assert "**Review state:** SIGNED OFF" in v1 and f"**Version hash:** {signed.version_hash}" in v1
    exports = [a for a in review_store(ws).actions(run_id) if a.action == "export"][:6]
    assert [a.target for a in exports] == ["markdown", "html", "json", "bibtex", "csl", "pdf"]


def test_client_confidential_and_acl_restricted_evidence_is_withheld(
    tmp_path: Path, web: FixtureWeb
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "public.md").write_text(
        "# Public\n\nThe public report says the recycling market grew by 11% in 2023.\n"
    )
    (docs / "client.md").write_text(
        "# Client memo\n\nThe client memo says the recycling market grew by 19% in 2023.\n"
    )
    (docs / "board.md").write_text(
        "# Board paper\n\nThe board paper says the recycling market grew by 23% in 2023.\n"
    )
    overrides = web_settings(web, search_url="")
    overrides["models"]["embed"] = {"url": "local:wordllama"}
    overrides["export"] = {"label_readers": {"client-confidential": ["client-team"]}}
    ws = Workspace.open(tmp_path / "ws", overrides=overrides)
    ws.ingest([docs / "public.md"])
    ws.ingest([docs / "client.md"], labels=("client-confidential",))
    ws.ingest([docs / "board.md"], acl_groups=("board",))
    run_id, _ = start_research(ws, "How fast did the recycling market grow?",
                               template="market_size")  # fmt: skip
    outline = research_store(ws).get_artifact(run_id, "outline")
    assert outline is not None
    confirm_outline(ws, run_id, {"items": [i for i in outline["items"] if i["id"] == "growth"]})
    brief = collect(ws, run_id)[-1].brief
    assert {"11%", "19%", "23%"} <= {
        p for c in brief.cards for p in ("11%", "19%", "23%") if p in c.snippet
    }
    everything = plain(export_brief(ws, run_id, "markdown")[0])  # the unrestricted caller
    assert "19%" in everything and "23%" in everything and "Withheld" not in everything
    staff = plain(export_brief(ws, run_id, "markdown", user_groups=("staff",))[0])
    assert "11%" in staff and "19%" not in staff and "23%" not in staff
    assert "Client memo" not in staff and "Board paper" not in staff
    assert "Withheld from this export: 2 evidence card(s)" in staff
    assert "client-confidential" in staff
    pdf = pdf_text(export_brief(ws, run_id, "pdf", user_groups=("staff",))[0])
    assert "19%" not in pdf and "Withheld from this export" in " ".join(pdf.split())
    # `export.label_readers` admits the client team to client-confidential text (not the board's)
    team = export_brief(ws, run_id, "json", user_groups=("client-team",))[0].decode()
    assert "19%" in team and "23%" not in team
    log = [a.action for a in review_store(ws).actions(run_id)]
    assert log.count("export") == 4
    ws.close()


ZH_DOC = """# 电池回收报告

## 市场规模

2023年维尔德马克电池回收市场规模约为十二亿美元，锂离子电池占比百分之四十。

## 增长

预计到2030年该市场年均增长百分之十四。
"""


def wait_run(client: TestClient, run_id: str) -> dict[str, Any]:
    for _ in range(600):
        run: dict[str, Any] = client.get(f"/v1/runs/{run_id}").json()
        if run["status"] != "running":
            return run
        time.sleep(0.05)
    raise AssertionError("run did not finish")


def test_chat_thread_and_answer_export_with_cjk(tmp_path: Path) -> None:
    doc = tmp_path / "zh.md"
    doc.write_text(ZH_DOC, encoding="utf-8")
    ws = Workspace.open(tmp_path / "ws", overrides=FAST)
    assert ws.ingest([doc]).results[0].outcome == "added"
    with TestClient(create_app(ws, ServerDeps(use_models=False)), base_url="http://127.0.0.1",
                    raise_server_exceptions=False) as client:  # fmt: skip
        sid = client.post("/v1/sessions", json={"title": "电池回收"}).json()["id"]
        turn = client.post(
            f"/v1/sessions/{sid}/messages", json={"content": "2023年电池回收市场规模是多少？"}
        )
        assert turn.status_code == 202, turn.text
        wait_run(client, turn.json()["run_id"])
        messages = client.get(f"/v1/sessions/{sid}/messages").json()
        answer = messages[-1]["data"]["answer"]
        assert answer["sentences"] and answer["sentences"][0]["citations"], answer
        resp = client.get(f"/v1/sessions/{sid}/export", params={"format": "pdf"})
        assert resp.status_code == 200 and resp.headers["content-type"] == "application/pdf"
        assert "attachment" in resp.headers["content-disposition"]
        text = pdf_text(resp.content)
        assert "十二亿美元" in text.replace("\n", "") and "Evidence appendix" in text
        fonts = pdf_fonts_of(resp.content, "十二亿美元")
        assert fonts and all("CJK" in f for f in fonts), fonts
        one = client.get(f"/v1/sessions/{sid}/export",
                         params={"format": "markdown", "message_id": messages[-1]["id"]})  # fmt: skip
        assert one.status_code == 200 and "## Answer" in one.text and "[^1]:" in one.text
        assert (
            client.get(f"/v1/sessions/{sid}/export", params={"format": "docx"}).status_code == 422
        )
    ws.close()
    # the same through the workspace: the source's hash is the appendix's content hash
    ws = Workspace.open(tmp_path / "ws", overrides=FAST)
    out, exported = export_thread(ws, "local", sid, "json")
    assert json.loads(out)["kind"] == "chat"
    assert exported.evidence[0].content_hash == ws.store.list_sources()[0].source.sha256
    ws.close()
