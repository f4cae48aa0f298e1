"""Issue 31, findings 3 and 4: licensed text reached an external `summarise` model through chat
memory. A real server on loopback (real SQLite, WordLlama, extractive ask) with its rewrite and
summary roles bound, under default settings, to a recording OpenAI-compatible server on
loopback (`scripted_model`); a memo labelled `no-external-model` is in the library.

3. An OpenAI client resends the conversation: footnote's earlier reply comes back as a plain
   `assistant` turn with no citation data, so no labels were found and the rewrite and summary
   prompts carried the memo's text out. Text the server cannot prove unlabelled stays in.
4. Labels were recomputed from live data: once the cited memo was deleted, the earlier reply
   had no labels and went out with the next rewrite. Each message keeps the labels it was
   produced under; a message with none recorded counts as restricted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from live import CONFIG, LiveServer
from scripted_model import ScriptedModel

from footnote.models.roles import NO_EXTERNAL
from footnote.pipelines.memory import message_labels
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.store.records import CLIENT_CONTEXT_ROLE
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration
MEMO = """# Licensed memo

## Budget

The licensed project budget of the ZEBRAQUARTZ study was 48,000 euros.
"""
SECRET = "ZEBRAQUARTZ"
SHORT = {"chat": {"history_turns": 1}}
"""One verbatim turn: every earlier turn is folded into the summary (a `summarise` call)."""


@dataclass
class Site:
    url: str
    ws: Workspace
    recorder: ScriptedModel
    memo_id: str

    def sent(self) -> str:
        """Everything the external model received."""
        return json.dumps(self.recorder.requests, ensure_ascii=False)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "config.toml").write_text(CONFIG, encoding="utf-8")
    memo = tmp_path / "memo.md"
    memo.write_text(MEMO, encoding="utf-8")
    with ScriptedModel() as recorder:
        overrides = {**SHORT, "models": {"summarise": {"url": recorder.url}}}
        ws = Workspace.open(tmp_path / "ws", overrides=overrides)
        [result] = ws.ingest([memo], labels=[NO_EXTERNAL]).results
        rewrite, summarise = ws.chat_role_model("rewrite"), ws.chat_role_model("summarise")
        assert rewrite is not None and rewrite.external and summarise is not None
        deps = ServerDeps(rewrite_model=rewrite, summarise_model=summarise, use_models=False)
        with LiveServer(create_app(ws, deps)) as srv:
            assert result.source is not None
            yield Site(srv.url, ws, recorder, result.source.id)
        ws.close()


def _sse_turn(client: httpx.Client, sid: str, content: str) -> str:
    """One turn over `/v1/sessions/{id}/messages`, followed to its end over SSE."""
    started = client.post(f"/v1/sessions/{sid}/messages", json={"content": content})
    assert started.status_code == 202, started.text
    with client.stream("GET", started.json()["stream_url"]) as r:
        body = "".join(r.iter_text())
    assert "event: done" in body, body
    return body


def test_resent_history_never_reaches_an_external_model(site: Site) -> None:
    """Finding 3: the client resends footnote's licensed reply as an `assistant` turn."""
    with httpx.Client(base_url=site.url, timeout=60) as client:
        first = client.post("/v1/chat/completions", json={"model": "footnote", "messages": [
            {"role": "user", "content": "What was the licensed project budget?"}]})  # fmt: skip
        assert first.status_code == 200, first.text
        said = first.json()["choices"][0]["message"]["content"]
        assert SECRET in said  # footnote answered from the licensed memo
        history = [
            {"role": "user", "content": "What was the licensed project budget?"},
            {"role": "assistant", "content": said},
            {"role": "user", "content": "Which study was that?"},
            {"role": "assistant", "content": "The ZEBRAQUARTZ study, as quoted above."},
            {"role": "user", "content": "And what about it?"},
        ]
        resp = client.post("/v1/chat/completions", json={"model": "footnote", "messages": history})
        assert resp.status_code == 200, resp.text
    sid = resp.json()["footnote"]["session_id"]
    stored = site.ws.chats.messages("local", sid)
    assert [m.labels for m in stored if m.role == CLIENT_CONTEXT_ROLE] == [None, None]
    assert NO_EXTERNAL in message_labels(stored)
    assert SECRET not in site.sent()


def test_a_reply_keeps_its_labels_after_its_source_is_deleted(site: Site) -> None:
    """Finding 4: the cited memo is deleted mid-conversation; the next rewrite and summary
    still see the earlier reply as licensed (SSE route; the same memory serves every route)."""
    with httpx.Client(base_url=site.url, timeout=60) as client:
        sid = client.post("/v1/sessions", json={"title": "budget"}).json()["id"]
        _sse_turn(client, sid, "What was the licensed project budget?")
        replies = [m for m in site.ws.chats.messages("local", sid) if m.role == "assistant"]
        assert SECRET in replies[0].content and replies[0].labels == (NO_EXTERNAL,)
        site.ws.delete_source(site.memo_id)
        _sse_turn(client, sid, "What recall did hybrid retrieval reach?")
        _sse_turn(client, sid, "And what about it?")
    assert site.ws.chats.messages("local", sid)[1].labels == (NO_EXTERNAL,)
    session = site.ws.chats.get_session("local", sid)
    assert session is not None and session.summary == ""  # the external summary was refused
    assert SECRET not in site.sent()


def test_a_message_without_recorded_labels_counts_as_restricted(site: Site) -> None:
    """Rows written before labels were kept (NULL) and client context: restricted; a user's
    own words and a reply that cited nothing licensed: free to go out."""
    chats = site.ws.chats
    session = chats.create_session("local", "old")
    old = chats.add_message("local", session.id, "assistant", "an old reply")
    mine = chats.add_message("local", session.id, "user", "my question", labels=())
    plain = chats.add_message("local", session.id, "assistant", "public", labels=("internal",))
    assert old.labels is None and message_labels([old]) == (NO_EXTERNAL,)
    assert message_labels([mine]) == () and message_labels([plain]) == ("internal",)
    [again] = [m for m in chats.messages("local", session.id) if m.id == plain.id]
    assert again.labels == ("internal",)
