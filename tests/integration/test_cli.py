"""The CLI end to end on a real workspace (SQLite, FTS5, a real embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from footnote.cli import app

MD = """# Retrieval study

## Method

We index every paragraph with BM25 and dense vectors, then fuse the rankings with reciprocal rank fusion.

## Results

| System | Recall@10 |
|---|---|
| BM25 | 0.61 |
| Hybrid | 0.74 |

Hybrid retrieval reached a recall@10 of 0.74, ahead of BM25 at 0.61.
"""


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("FOOTNOTE_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("FOOTNOTE_MODELS__EMBED__URL", "local:wordllama")
    monkeypatch.setenv("FOOTNOTE_ASK__USE_JUDGE", "false")
    monkeypatch.setenv("FOOTNOTE_ASK__MODE", "extractive")
    monkeypatch.setenv("COLUMNS", "200")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "study.md").write_text(MD, encoding="utf-8")
    (docs / "notes.txt").write_text("Plain notes.\n\nThe second paragraph talks about fusion.\n")
    (docs / "broken.pdf").write_text("this is not a PDF at all")
    return {"docs": str(docs)}


runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout


def test_ingest_reports_every_failure_and_keeps_the_rest(env: dict[str, str]) -> None:
    code, out = invoke("ingest", env["docs"], "--json")
    assert code == 1
    report = json.loads(out)
    outcomes = {Path(f["path"]).name: f["outcome"] for f in report["files"]}
    assert outcomes == {"study.md": "added", "notes.txt": "added", "broken.pdf": "failed"}
    broken = next(f for f in report["files"] if f["outcome"] == "failed")
    assert "PDF" in broken["error"]
    code, out = invoke("ls", "--json")
    assert code == 0 and len(json.loads(out)) == 2
    code, out = invoke("ingest", f"{env['docs']}/study.md", "--json")
    assert code == 0 and json.loads(out)["files"][0]["outcome"] == "unchanged"


def test_show_json_contract_and_block_lookup(env: dict[str, str]) -> None:
    invoke("ingest", f"{env['docs']}/study.md")
    code, out = invoke("show", f"{env['docs']}/study.md", "--json")
    assert code == 0
    doc = json.loads(out)
    for block in doc["blocks"]:
        assert {"id", "kind", "page", "section_path", "text"} <= set(block)
    table = next(b for b in doc["blocks"] if b["kind"] == "table")
    assert {"id": f"{table['id']}#r2c1", "row": 2, "col": 1, "text": "0.74"} in table["cells"]
    para = next(b for b in doc["blocks"] if "reciprocal rank fusion" in b["text"])
    assert para["section_path"][-1] == "Method"
    code, out = invoke("show", para["id"], "--json")
    assert code == 0 and json.loads(out)["text"] == para["text"]
    code, out = invoke("show", "--tree", doc["source"]["id"])
    assert code == 0 and "Results" in out


def test_search_and_ask_json_contract(env: dict[str, str]) -> None:
    invoke("ingest", env["docs"])
    code, out = invoke("search", "reciprocal rank fusion", "--k", "3", "--json")
    assert code == 0
    hits = json.loads(out)
    assert hits and "reciprocal rank fusion" in hits[0]["text"]
    assert {"lexical", "vector"} <= set(hits[0]["scores"])
    code, out = invoke("ask", "What recall@10 did hybrid retrieval reach?", "--json")
    assert code == 0, out
    answer = json.loads(out)
    assert answer["status"] == "answered"
    assert "0.74" in answer["answer"]
    assert set(answer) >= {"status", "answer", "sentences", "support_score", "reason", "usage"}
    citation = answer["sentences"][0]["citations"][0]
    assert set(citation) >= {"id", "page", "section", "quote", "verdict"}
    assert citation["verdict"] == "supported"
    assert set(answer["usage"]) == {"tokens_in", "tokens_out", "model_calls", "seconds"}


def test_bad_references_are_clear_errors(env: dict[str, str]) -> None:
    code, out = invoke("ask", "What is fusion?", "--source", "nope", "--json")
    assert code == 1
    code, out = invoke("ask", "What is fusion?", "--json")
    assert code == 0 and json.loads(out)["status"] == "no_evidence"
    code, out = invoke("show", "deadbeef-p1-abcdef")
    assert code == 1
    code, out = invoke("ingest", "/no/such/file.pdf")
    assert code == 1


def test_config_show_lists_documented_settings(env: dict[str, str]) -> None:
    code, out = invoke("config", "show", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["models"]["embed"]["url"] == "local:wordllama"
    code, out = invoke("config", "show")
    assert code == 0 and "ingest.max_file_mb" in out


def test_show_prints_bibliographic_metadata(env: dict[str, str], tmp_path: Path) -> None:
    page = tmp_path / "paper.md"
    page.write_text(
        "---\ntitle: Checked Citations\nauthors:\n  - Ada Lovelace\n  - Alan Turing\n"
        "date: 2021-03-04\ndoi: 10.1234/cite.42\n---\n# Checked Citations\n\n"
        "A paragraph long enough to stay a block of its own in the document.\n",
        encoding="utf-8",
    )
    invoke("ingest", str(page))
    code, out = invoke("show", str(page))
    assert code == 0
    assert "Ada Lovelace, Alan Turing" in out and "2021-03-04" in out and "10.1234/cite.42" in out
    code, out = invoke("show", str(page), "--json")
    source = json.loads(out)["source"]
    assert (
        source["authors"] == ["Ada Lovelace", "Alan Turing"] and source["doi"] == "10.1234/cite.42"
    )
    assert source["published_at"] == "2021-03-04"
