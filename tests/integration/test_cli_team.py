"""The CLI for a team and its paper cuts, end to end on a real workspace (SQLite, FTS5, the
wordllama embedder): API keys listed without secrets, revoked and rotated; a source shown by
its file name; search hits with their paper's title; one list of accepted formats in help and
errors; a re-ingest that still counts tables and headings; "1 footnote"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from footnote.cli import app
from footnote.cli.chat import print_answer
from footnote.ingest import formats_text
from footnote.workspace import Workspace

MD = """# Retrieval study

## Method

We index every paragraph with BM25 and dense vectors, then fuse the rankings with reciprocal rank fusion.

## Results

| System | Recall@10 |
|---|---|
| BM25 | 0.61 |
| Hybrid | 0.74 |
"""

runner = CliRunner()


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FOOTNOTE_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("FOOTNOTE_MODELS__EMBED__URL", "local:wordllama")
    monkeypatch.setenv("COLUMNS", "200")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "study.md").write_text(MD, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the file name alone does not exist here
    return docs


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


def test_keys_are_listed_without_secrets_revoked_and_rotated(env: Path, tmp_path: Path) -> None:
    code, first = invoke("keys", "add", "ann", "--group", "lab", "--label", "laptop")
    assert code == 0
    first = first.strip().splitlines()[-1]
    invoke("keys", "add", "bob", "--label", "ci")
    code, listing = invoke("keys", "ls")
    assert code == 0 and "ann" in listing and "lab" in listing and "laptop" in listing
    assert first not in listing and first[3:12] not in listing
    code, raw = invoke("keys", "ls", "--json")
    keys = json.loads(raw)
    assert [(k["user_id"], k["groups"], k["label"]) for k in keys] == [
        ("ann", ["lab"], "laptop"), ("bob", [], "ci")]  # fmt: skip
    assert set(keys[0]) >= {"id", "user_id", "groups", "created_at", "last_used_at"}
    code, out = invoke("keys", "rotate", keys[0]["id"])
    assert code == 0
    new = re.findall(r"fn_\S+", out)[-1]
    ws = Workspace.open(tmp_path / "ws")
    try:
        assert ws.auth.user_for_key(first) is None  # the old secret no longer works
        user = ws.auth.user_for_key(new)
        assert user is not None and user.id == "ann"
    finally:
        ws.close()
    code, out = invoke("keys", "revoke", keys[1]["id"])
    assert code == 0 and "bob" in out
    after = json.loads(invoke("keys", "ls", "--json")[1])
    assert [k["user_id"] for k in after] == ["ann"] and after[0]["last_used_at"]
    code, out = invoke("keys", "revoke", keys[1]["id"])
    assert code == 1 and "no API key" in out


def test_show_by_file_name_and_search_hits_name_their_paper(env: Path) -> None:
    code, _ = invoke("ingest", str(env / "study.md"))
    assert code == 0
    code, out = invoke("show", "study.md", "--json")
    assert code == 0, out
    assert json.loads(out)["source"]["title"] == "Retrieval study"
    code, out = invoke("search", "reciprocal rank fusion", "--k", "2")
    assert code == 0 and "Retrieval study" in out
    hits = json.loads(invoke("search", "reciprocal rank fusion", "--json")[1])
    assert hits[0]["source_title"] == "Retrieval study"


def test_one_list_of_formats_and_a_reingest_counts_its_blocks(env: Path) -> None:
    code, out = invoke("ingest", "--help")
    words = " ".join(out.split())
    for name in ("PDF", "Word (.docx)", "PowerPoint (.pptx)", "Excel (.xlsx)", "EPUB", "LaTeX"):
        assert name in words, name
    (env / "figure.png").write_bytes(b"\x89PNG\r\n")
    code, out = invoke("ingest", str(env / "figure.png"), "--json")
    assert code == 1 and formats_text() in json.loads(out)["files"][0]["error"]
    first = json.loads(invoke("ingest", str(env / "study.md"), "--json")[1])["files"][0]
    again = json.loads(invoke("ingest", str(env / "study.md"), "--json")[1])["files"][0]
    assert again["outcome"] == "unchanged"
    assert again["kinds"] == first["kinds"] and again["kinds"]["table"] == 1
    assert again["kinds"]["heading"] >= 2


def test_one_footnote_is_singular(capsys: pytest.CaptureFixture[str]) -> None:
    citation = {"id": "doc-p1-aaaaaa", "verdict": "supported"}
    answer = {"evidence_board": [citation], "reason": "", "status": "answered",
              "support_score": 0.9, "sentences": [
                  {"text": "Hybrid wins.", "citations": [citation], "insufficient": False}]}  # fmt: skip
    print_answer(answer)
    printed = capsys.readouterr().out
    assert "1 footnote " in printed and "1 footnotes" not in printed
