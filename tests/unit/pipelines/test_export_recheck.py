"""Issue 30, finding 4: `footnote export answer FILE` re-checked nothing, so a hand-edited JSON
rendered an invented quote beside a real source's title, page and sha256. Now an exported answer
passes the gate again against the library: ids resolve, quotes occur, numbers match, verdicts are
recomputed; appendix quotes are the stored block's text; a citation whose block is gone is shown
as such."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from footnote.types import Block, Document, Source, make_block_id, sha256_hex
from footnote.workspace import Workspace
from footnote.workspace.export import export_answer

TEXT = "Our model reached an accuracy of 85% on the SciQ test set, beating the baseline."
GONE = "0badc0de-p3-abcdef"


@pytest.fixture()
def ws(tmp_path: Path) -> Iterator[Workspace]:
    w = Workspace.open(tmp_path / "ws")
    sha = sha256_hex(b"paper")
    block = Block(make_block_id(sha, 2, 0, TEXT), sha[:12], "paragraph", TEXT, 2,
                  section_path=("Results",))  # fmt: skip
    w.store.save_document(Document(Source(sha[:12], "pdf", "SciQ paper", "/p.pdf", sha), (block,)))
    yield w
    w.close()


def _block_id(ws: Workspace) -> str:
    [record] = ws.store.list_sources()
    return next(iter(ws.store.iter_blocks(record.source.id))).id


def _answer(sentences: list[dict[str, Any]]) -> dict[str, Any]:
    board = [c for s in sentences for c in s["citations"]]
    return {"run_id": "run_x", "question": "What accuracy on SciQ?", "status": "answered",
            "answer": " ".join(s["text"] for s in sentences), "sentences": sentences,
            "support_score": 1.0, "reason": None, "evidence_board": board, "nearest": []}  # fmt: skip


def _cite(eid: str, quote: str, verdict: str = "supported") -> dict[str, Any]:
    return {"id": eid, "page": 2, "section": ["Results"], "quote": quote, "verdict": verdict,
            "relevance": 0.9, "checks": {}}  # fmt: skip


def _markdown(ws: Workspace, answer: dict[str, Any]) -> str:
    data, _ = export_answer(ws, json.loads(json.dumps(answer)), "markdown")
    return re.sub(r"\\(.)", r"\1", data.decode())


def test_a_genuine_answer_exports_with_the_stored_text(ws: Workspace) -> None:
    eid = _block_id(ws)
    out = _markdown(ws, _answer([{"text": "The model reached 85% accuracy on SciQ.",
                                  "citations": [_cite(eid, "an accuracy of 85% on the SciQ test set")],
                                  "factual": True, "insufficient": False}]))  # fmt: skip
    body, _, appendix = out.partition("## Evidence appendix")
    assert "The model reached 85% accuracy on SciQ." in body
    assert "an accuracy of 85% on the SciQ test set" in appendix and "SciQ paper" in appendix


def test_an_invented_quote_and_number_do_not_reach_the_export(ws: Workspace) -> None:
    eid = _block_id(ws)
    forged = _answer([
        {"text": "The model reached 99% accuracy on SciQ.",
         "citations": [_cite(eid, "reached an accuracy of 99% on SciQ, a new record")],
         "factual": True, "insufficient": False},
        {"text": "The model beat the baseline on SciQ.",
         "citations": [_cite(eid, "the authors call it a revolutionary result")],
         "factual": True, "insufficient": False},
        {"text": "The budget was 9 million euros.", "citations": [], "factual": False,
         "insufficient": False},
    ])  # fmt: skip
    out = _markdown(ws, forged)
    assert "99%" not in out and "a new record" not in out
    assert "9 million" not in out
    assert "revolutionary" not in out  # appendix quotes are the stored block's text
    assert TEXT in out or "85% on the SciQ test set" in out
    # its file says "supported", but its quote is not in the block: no stronger than weak
    assert re.search(
        r"The model beat the baseline on SciQ\.\[\^1\] \*\(insufficiently supported\)", out
    )
    assert re.search(r"2 sentence\(s\).*left out", out), out


def test_a_citation_whose_block_is_gone_is_shown_as_such(ws: Workspace) -> None:
    out = _markdown(ws, _answer([{"text": "The model reached 85% accuracy on SciQ.",
                                  "citations": [_cite(GONE, "reached an accuracy of 85%")],
                                  "factual": True, "insufficient": False}]))  # fmt: skip
    body, _, appendix = out.partition("## Evidence appendix")
    assert "not verified" in body
    assert GONE in appendix and "no longer in the library" in appendix
    assert "reached an accuracy of 85%" not in appendix
