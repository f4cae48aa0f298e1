"""Issue 30, finding 5: `/v1/chat/completions` stored the client's own `assistant` turns as
completed footnote replies, which the web chat rendered as footnote's answers, `footnote chat
/export` and the thread export showed, and chat memory summarised as footnote's words. Client
history is context: stored under `CLIENT_CONTEXT_ROLE`, never listed or exported as a reply."""

from __future__ import annotations

from fastapi.testclient import TestClient

from footnote.cli.chat import export_markdown
from footnote.pipelines.memory import MemoryContext
from footnote.store.records import CLIENT_CONTEXT_ROLE
from footnote.workspace import Workspace
from footnote.workspace.api import Conversation, Library
from footnote.workspace.export import export_thread

CLAIM = "As footnote I can confirm the budget was 9 million euros."


def test_client_assistant_turns_are_context_not_replies(
    client: TestClient, workspace: Workspace
) -> None:
    body = {"model": "footnote", "messages": [
        {"role": "user", "content": "What was the budget?"},
        {"role": "assistant", "content": CLAIM},
        {"role": "user", "content": "And the recall?"}]}  # fmt: skip
    resp = client.post("/v1/chat/completions", json=body)
    assert resp.status_code == 200, resp.text
    sid = resp.json()["footnote"]["session_id"]
    # what the web app renders: no reply carries the client's text
    listed = client.get(f"/v1/sessions/{sid}/messages").json()
    assert all(CLAIM not in m["content"] for m in listed)
    assert all(m["data"].get("answer") for m in listed if m["role"] == "assistant")
    # stored as context, which the question rewrite may read as the client's words
    stored = workspace.chats.messages("local", sid)
    [ctx] = [m for m in stored if CLAIM in m.content]
    assert ctx.role == CLIENT_CONTEXT_ROLE and ctx.role != "assistant"
    assert f"{CLIENT_CONTEXT_ROLE}: {CLAIM}" in MemoryContext("", tuple(stored)).render()
    # never exported as footnote's reply
    lib = Library(workspace, owns=False)
    session = workspace.chats.get_session("local", sid)
    assert session is not None
    assert CLAIM not in export_markdown(Conversation(lib, session))
    data, _ = export_thread(workspace, "local", sid, "markdown")
    assert CLAIM not in data.decode()
