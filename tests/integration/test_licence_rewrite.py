"""Issue 31, the hole found after findings 3 and 4: a follow-up question rewritten from
restricted context carried that context into ask unlabelled. The rewrite model here is a local
one (a loopback server marked `external = false`), so it may read the `no-external-model`
memo quoted in the conversation; its standalone question then names the memo's secret, and
ask handed that question to the external reranker (a recording server on loopback). The
rewritten question carries the labels of what the rewrite read: it never reaches an external
model; the turn searches with the user's own words instead and says so. Real SQLite,
WordLlama, extractive ask, the Python `Library` chat (the server's turns use the same
composition, `workspace/chat.py`)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from footnote.models.roles import NO_EXTERNAL
from footnote.workspace import Workspace
from footnote.workspace.api import Library

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/openai_loopback.py
from openai_loopback import LoopbackServer, chat_completion, last_prompt

pytestmark = pytest.mark.integration
SECRET = "ZEBRAQUARTZ"
MEMO = f"# Licensed memo\n\n## Budget\n\nThe licensed project budget of the {SECRET} study was 48,000 euros.\n"
PUBLIC = "# Public digest\n\n## Budget\n\nThe public project budget of the harbour study was 12,000 euros.\n"
STANDALONE = f"What was the licensed project budget of the {SECRET} study?"


class OpenAIServer:
    """An OpenAI-compatible server on loopback that records every request and answers each
    chat request with `answer(prompt)`."""

    def __init__(self, answer: Any) -> None:
        self.server = LoopbackServer(
            lambda _path, body: chat_completion(answer(last_prompt(body)), usage=(10, 5))
        )
        self.url = self.server.url

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.server.bodies

    def stop(self) -> None:
        self.server.stop()


def _rewrite(prompt: str) -> str:
    """The local model: a rewrite prompt gets the standalone question naming the memo."""
    return STANDALONE if SECRET in prompt else "Yes"


@dataclass
class Site:
    ws: Workspace
    local: OpenAIServer
    external: OpenAIServer

    def sent_out(self) -> str:
        return json.dumps(self.external.requests, ensure_ascii=False)


@contextmanager
def _site(tmp_path: Path, *, rerank_external: bool) -> Iterator[Site]:
    local, external = OpenAIServer(_rewrite), OpenAIServer(lambda _p: "Yes")
    ws = Workspace.open(tmp_path / "ws", overrides={
        "models": {"embed": {"url": "local:wordllama"},
                   "summarise": {"url": local.url, "external": False},
                   "rerank": {"url": external.url, "external": rerank_external}},
        "ask": {"mode": "extractive", "use_judge": False},
        "retrieval": {"rerank": True},
        "chat": {"rewrite": "always"},
    })  # fmt: skip
    (tmp_path / "memo.md").write_text(MEMO, encoding="utf-8")
    (tmp_path / "digest.md").write_text(PUBLIC, encoding="utf-8")
    assert not ws.ingest([tmp_path / "memo.md"], labels=[NO_EXTERNAL]).failed
    assert not ws.ingest([tmp_path / "digest.md"]).failed
    yield Site(ws, local, external)
    ws.close()
    local.stop()
    external.stop()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    with _site(tmp_path, rerank_external=True) as s:
        yield s


async def _follow_up(chat: Any, text: str) -> list[str]:
    return [f"{e.type}: {getattr(e, 'message', '')}" async for e in chat.send_events(text)]


def test_a_question_rewritten_from_licensed_context_never_reaches_an_external_model(
    site: Site,
) -> None:
    lib = Library(site.ws, owns=False)
    chat = lib.chat(title="budgets")
    first = chat.send("What was the licensed project budget?")
    assert SECRET in first.text  # answered from the memo: it is in the conversation now
    assert SECRET not in site.sent_out()  # the external reranker never saw the memo itself
    before = len(site.external.requests)
    events = asyncio.run(_follow_up(chat, "And the public one?"))
    rewrites = [r for r in site.local.requests if SECRET in json.dumps(r)]
    assert rewrites, "the local rewrite model read the licensed turn"
    assert SECRET not in site.sent_out(), "the rewritten question reached the external reranker"
    assert len(site.external.requests) > before  # the turn still searched, with the user's words
    assert any("restricted" in e for e in events), events


def test_a_rewrite_from_licensed_context_is_used_when_every_model_is_local(
    tmp_path: Path,
) -> None:
    """The same conversation with the reranker local too: nothing forbids the rewritten
    question, so the turn searches for it (the rule costs nothing where no model is external)."""
    with _site(tmp_path, rerank_external=False) as site:
        chat = Library(site.ws, owns=False).chat(title="budgets")
        assert SECRET in chat.send("What was the licensed project budget?").text
        events = asyncio.run(_follow_up(chat, "And the public one?"))
        assert f"status: searching for: {STANDALONE}" in events, events
        assert SECRET in site.sent_out()  # the local reranker read the rewritten question
