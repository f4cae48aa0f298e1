"""Issue 30, finding 1: every surface that shows an answer or a brief as flat text keeps the weak
mark "(insufficiently supported)" — the OpenAI reply (streamed and not), the MCP `ask` and
`research` tools, the brief JSON `sections[].text` and `footnote chat`'s `/export` — because they
all call the one renderer (`serialize.answer_text` / `serialize.claims_text`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from footnote.cli.chat import export_markdown
from footnote.mcp.server import ask_output, research_output
from footnote.serialize import answer_to_dict, brief_to_dict
from footnote.server.openai_compat import reply_text
from footnote.types import (
    INSUFFICIENT_MARK,
    Answer,
    Brief,
    BriefSection,
    Citation,
    Claim,
    EvidenceCard,
    Outline,
    OutlineItem,
    Sentence,
)
from footnote.workspace.api import Library, ResearchResult

STRONG = "Hybrid retrieval reached a recall@10 of 0.74."
WEAK = "The corpus was collected in 2019."


def _answer() -> dict[str, Any]:
    strong = Sentence(STRONG, citations=(Citation("b1", verdict="supported", page=1),))
    weak = Sentence(WEAK, citations=(Citation("b2", verdict="weak", page=2),),
                    marked_insufficient=True)  # fmt: skip
    return answer_to_dict(Answer("q?", "answered", (strong, weak),
                                 evidence_board=strong.citations + weak.citations))  # fmt: skip


def _brief() -> Brief:
    cards = (EvidenceCard("c1", "claim", "snippet one", "p. 1"),
             EvidenceCard("c2", "claim", "snippet two", "p. 2"))  # fmt: skip
    claims = (Claim("k1", STRONG, ("c1",), verdict="supported"),
              Claim("k2", WEAK, ("c2",), verdict="weak"))  # fmt: skip
    item = OutlineItem("i1", "Results", "What were the results?")
    return Brief("run-1", "q?", Outline("q?", "literature_review", (item,)),
                 (BriefSection("i1", "Results", claims, coverage="covered"),), cards)  # fmt: skip


def _marked_once(text: str) -> None:
    assert text.count(INSUFFICIENT_MARK) == 1
    weak_at, mark_at, strong_at = (
        text.index(WEAK),
        text.index(INSUFFICIENT_MARK),
        text.index(STRONG),
    )
    assert strong_at < weak_at < mark_at, text
    assert STRONG in text[: text.index(INSUFFICIENT_MARK)]


@pytest.fixture()
def lib(tmp_path: Path) -> Iterator[Library]:
    with Library.open(tmp_path / "ws") as library:
        yield library


def test_the_one_renderer_marks_weak_sentences_and_claims() -> None:
    from footnote.serialize import answer_text, claims_text

    _marked_once(answer_text(_answer()))
    _marked_once(answer_text(_answer(), marks=lambda cites: "".join(f"[{c['id']}]" for c in cites)))
    _marked_once(claims_text(_brief().sections[0].claims))
    assert (
        answer_text(_answer())
        == answer_to_dict(
            Answer("q?", "answered", (Sentence(STRONG), Sentence(WEAK, marked_insufficient=True)))
        )["answer"]
    )


def test_openai_reply_keeps_the_mark_streamed_and_not() -> None:
    answer = _answer()
    citations = [{"n": i + 1, "id": c["id"], "title": "T", "source_id": "s", "page": c["page"],
                  "section": [], "quote": "q", "verdict": c["verdict"]}
                 for i, c in enumerate(answer["evidence_board"])]  # fmt: skip
    pieces = reply_text(answer, citations)
    _marked_once("".join(pieces).partition("\n\nReferences:")[0])
    assert any(WEAK in p and INSUFFICIENT_MARK in p for p in pieces), (
        "one streamed piece per sentence"
    )


def test_mcp_ask_answer_keeps_the_mark(lib: Library) -> None:
    out = ask_output(lib, _answer())
    _marked_once(out.answer)
    assert "[1]" in out.answer and "[2]" in out.answer


def test_mcp_research_brief_keeps_the_mark() -> None:
    out = research_output(ResearchResult("run-1", _brief()))
    _marked_once(out.brief)


def test_brief_json_section_text_keeps_the_mark() -> None:
    [section] = brief_to_dict(_brief())["sections"]
    _marked_once(section["text"])


def test_chat_export_keeps_the_mark(lib: Library) -> None:
    conv = lib.chat()
    chats, user = lib.workspace.chats, lib.user.id
    chats.add_message(user, conv.id, "user", "q?", status="done")
    chats.add_message(user, conv.id, "assistant", "", status="done", data={"answer": _answer()})
    text = export_markdown(conv)
    _marked_once(text.split("**footnote:**", 1)[1])
