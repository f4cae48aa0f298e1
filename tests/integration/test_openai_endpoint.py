"""`/v1/chat/completions` on a real uvicorn, driven by the official `openai` client and by a
plain SSE reader: footnote markers in the text, citations in the `footnote` field of the
response and of the final chunk, a references block, per-user scoping by API key."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from live import LiveServer, study_workspace

from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration
QUESTION = "What recall@10 did hybrid retrieval reach?"


def rewrite(messages: Sequence[Message]) -> str:
    """A scripted rewrite model: resolves "it" from the conversation (only the rewrite is
    scripted; retrieval, composition and checks are the real pipeline)."""
    prompt = messages[-1].content
    question = re.findall(r"Latest question: (.*)", prompt)[-1]
    return question.replace("it", "the corpus") if "corpus" in prompt else question


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, str], Workspace]]:
    ws = study_workspace(tmp_path_factory.mktemp("oai"), secret=True)
    keys = {"alice": ws.auth.add_key("alice", ("staff",)), "bob": ws.auth.add_key("bob", ())}
    model = RoleModel("summarise", FakeChatModel(rewrite), ledger=Ledger(), external=False)
    app = create_app(ws, ServerDeps(rewrite_model=model, use_models=False))
    with LiveServer(app) as srv:
        yield srv.url, keys, ws
    ws.close()


def client(url: str, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0)


def test_models_and_a_plain_completion_keep_their_citations(served: Any) -> None:
    url, keys, ws = served
    oai = client(url, keys["bob"])
    assert {m.id for m in oai.models.list()} == {"footnote", "footnote-agent"}
    done = oai.chat.completions.create(
        model="footnote", messages=[{"role": "user", "content": QUESTION}]
    )
    text = done.choices[0].message.content or ""
    assert "0.74" in text and "[1]" in text
    head, _, refs = text.partition("\n\nReferences:\n")
    assert head and refs.startswith("[1] Retrieval study, p. 1")
    extra = done.model_extra or {}
    field = extra["footnote"]
    assert field["status"] == "answered" and field["support_score"] > 0
    first = field["citations"][0]
    assert first["n"] == 1 and first["verdict"] == "supported" and "0.74" in first["quote"]
    block = ws.store.get_block(first["id"])
    assert block is not None and first["quote"] in block.text and first["page"] == block.page
    assert field["answer"]["evidence_board"][0]["id"] == first["id"]
    # each request is a stored conversation of its caller
    messages = ws.chats.messages("bob", field["session_id"])
    assert [m.role for m in messages] == ["user", "assistant"] and messages[1].data["answer"]


def test_streaming_with_the_openai_client(served: Any) -> None:
    url, keys, _ = served
    stream = client(url, keys["bob"]).chat.completions.create(
        model="footnote", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "0.74" in text and "References:" in text
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    field = (last.model_extra or {})["footnote"]
    assert field["citations"] and field["citations"][0]["n"] == 1
    assert all("footnote" not in (c.model_extra or {}) for c in chunks[:-1])


def test_a_plain_sse_reader_sees_progress_comments_chunks_and_done(served: Any) -> None:
    url, keys, _ = served
    body = {"model": "footnote", "stream": True,
            "messages": [{"role": "user", "content": QUESTION}]}  # fmt: skip
    headers = {"Authorization": f"Bearer {keys['bob']}"}
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, headers=headers,
                      timeout=60) as resp:  # fmt: skip
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        lines = list(resp.iter_lines())
    comments = [ln for ln in lines if ln.startswith(":")]
    data = [ln[6:] for ln in lines if ln.startswith("data: ")]
    assert comments, "status events arrive as SSE comments"
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    final = chunks[-1]
    assert final["choices"][0]["finish_reason"] == "stop"
    assert final["footnote"]["citations"][0]["verdict"] == "supported"
    assert final["usage"]["total_tokens"] >= 0


def test_history_only_rewrites_the_question(served: Any) -> None:
    url, keys, _ = served
    done = client(url, keys["bob"]).chat.completions.create(
        model="footnote",
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Tell me about the corpus."},
            {"role": "assistant", "content": "The corpus is a set of papers."},
            {"role": "user", "content": "How many annotated papers does it contain?"},
        ],
    )
    assert "1,213" in (done.choices[0].message.content or "")
    assert (done.model_extra or {})["footnote"]["answer"]["question"].startswith(
        "How many annotated papers does the corpus"
    )


def test_scoping_by_api_key(served: Any) -> None:
    url, keys, ws = served
    memo = next(r.source for r in ws.store.list_sources() if r.source.acl_groups)
    ask = [{"role": "user", "content": "What was the internal project budget?"}]
    staff = client(url, keys["alice"]).chat.completions.create(
        model="footnote", messages=ask, extra_body={"footnote": {"sources": [memo.id]}}
    )
    assert "48,000" in (staff.choices[0].message.content or "")
    outsider = client(url, keys["bob"])
    with pytest.raises(openai.NotFoundError):
        outsider.chat.completions.create(
            model="footnote", messages=ask, extra_body={"footnote": {"sources": [memo.id]}}
        )
    library = outsider.chat.completions.create(model="footnote", messages=ask)
    assert "48,000" not in (library.choices[0].message.content or "")
    cited = {c["source_id"] for c in (library.model_extra or {})["footnote"]["citations"]}
    assert memo.id not in cited
    with pytest.raises(openai.AuthenticationError):
        client(url, "not-a-key").chat.completions.create(model="footnote", messages=ask)


def test_bad_requests_get_the_error_shape(served: Any, tmp_path: Path) -> None:
    url, keys, _ = served
    oai = client(url, keys["bob"])
    with pytest.raises(openai.NotFoundError, match="model 'gpt-4' not found"):
        oai.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.BadRequestError, match="last message must be"):
        oai.chat.completions.create(
            model="footnote", messages=[{"role": "assistant", "content": "hello"}]
        )
