"""An OpenAI-compatible chat endpoint that keeps its citations: `POST /v1/chat/completions`.

Backed by the chat pipeline: the last `user` message is the question, earlier turns only
rewrite it, retrieval is fresh. The reply text carries footnote markers `[1]` and ends
with a `References:` block (for clients that ignore extra fields); the citations travel in
the `footnote` field of the response — and of the final chunk when streaming. Each request
is a stored conversation of the caller (API key as everywhere), so it is traced and shown.
Models: `footnote` (one ask per turn) and `footnote-agent` (the tool-using agent).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from footnote.pipelines.chat.pipeline import ChatTurn
from footnote.serialize import answer_pieces
from footnote.server.auth import current_user
from footnote.server.errors import ApiError
from footnote.server.schemas import MAX_HISTORY_MESSAGES, MAX_MESSAGE_CHARS, MAX_REPLY_CHARS
from footnote.server.sessions import _visible_source
from footnote.server.state import ServerState, get_state
from footnote.server.turns import turn_events
from footnote.store.records import CLIENT_CONTEXT_ROLE, User, new_id

router = APIRouter(prefix="/v1", tags=["openai"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]
MODELS = {"footnote": "ask", "footnote-agent": "agent"}


class OpenAIMessage(BaseModel):
    """A chat message; content parts of type `text` are joined."""

    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        """The message's text."""
        if isinstance(self.content, list):
            return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""

    @model_validator(mode="after")
    def _bounded(self) -> OpenAIMessage:
        """A user turn holds at most `MAX_MESSAGE_CHARS` (as on the sessions route), any other
        turn `MAX_REPLY_CHARS`: checked before anything is stored."""
        limit = MAX_MESSAGE_CHARS if self.role == "user" else MAX_REPLY_CHARS
        if len(self.text()) > limit:
            raise ValueError(f"a {self.role} message may hold at most {limit} characters")
        return self


class FootnoteOptions(BaseModel):
    """footnote's own request options (the `footnote` field; OpenAI clients send it as
    `extra_body={"footnote": {...}}`)."""

    model_config = ConfigDict(extra="forbid")
    sources: list[str] = Field(
        default_factory=list, max_length=50, description="Search only these sources."
    )


class CompletionRequest(BaseModel):
    """The OpenAI request body; sampling fields are accepted and ignored (answers are checked,
    not sampled)."""

    model_config = ConfigDict(extra="allow")
    model: str = "footnote"
    messages: list[OpenAIMessage] = Field(..., min_length=1, max_length=MAX_HISTORY_MESSAGES)
    stream: bool = False
    footnote: FootnoteOptions = Field(default_factory=FootnoteOptions)


def _citation_list(state: ServerState, answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The evidence board numbered as the markers are, with each source's id and title."""
    out = []
    for n, c in enumerate(answer["evidence_board"], 1):
        block = state.ws.store.get_block(str(c["id"]).split("#", 1)[0])
        record = state.ws.store.get_source(block.source_id) if block else None
        out.append(
            {
                "n": n,
                "id": c["id"],
                "source_id": record.source.id if record else None,
                "title": record.source.title if record else None,
                "page": c["page"],
                "section": c["section"],
                "quote": c["quote"],
                "verdict": c["verdict"],
                "relevance": c["relevance"],
            }
        )
    return out


def reply_text(answer: dict[str, Any], citations: list[dict[str, Any]]) -> list[str]:
    """The reply as pieces (joined, the message content): each checked sentence with its
    markers (a weak one marked: `serialize.answer_pieces`), the reason when it is not a plain
    answer, then the `References:` block."""
    number = {c["id"]: c["n"] for c in citations}
    sentences = answer_pieces(
        answer, lambda cites: "".join(f"[{number[c['id']]}]" for c in cites if c["id"] in number)
    )
    pieces = [("" if i == 0 else " ") + text for i, text in enumerate(sentences)]
    if answer.get("reason"):
        pieces.append(("\n\n" if pieces else "") + str(answer["reason"]))
    if citations:
        refs = "\n".join(
            f"[{c['n']}] {c['title'] or c['source_id']}, p. {c['page']}"
            + (f", {' › '.join(c['section'])}" if c["section"] else "")
            + f' — "{c["quote"]}" ({c["verdict"]}; {c["id"]})'
            for c in citations
        )
        pieces.append("\n\nReferences:\n" + refs)
    return pieces


def _footnote_field(
    state: ServerState, run_id: str, session_id: str, answer: dict[str, Any] | None
) -> dict[str, Any]:
    if answer is None:
        return {"run_id": run_id, "session_id": session_id, "status": "error", "citations": []}
    return {
        "run_id": run_id,
        "session_id": session_id,
        "status": answer["status"],
        "support_score": answer["support_score"],
        "reason": answer["reason"],
        "citations": _citation_list(state, answer),
        "answer": answer,
    }


async def _start(state: ServerState, user: User, body: CompletionRequest) -> tuple[str, str]:
    """Store the conversation so far and start the turn that answers the last message."""
    mode = MODELS.get(body.model)
    if mode is None:
        raise ApiError(404, f"model {body.model!r} not found; use one of {', '.join(MODELS)}")
    turns = [m for m in body.messages if m.role in ("user", "assistant")]
    if not turns or turns[-1].role != "user" or not turns[-1].text().strip():
        raise ApiError(400, "the last message must be a non-empty user message")
    sources = tuple(_visible_source(state, user, ref) for ref in body.footnote.sources)
    question = turns[-1].text()
    state.quotas.start_run(user.id)
    session = state.chats.create_session(user.id, f"openai: {question[:80]}")
    for m in turns[:-1]:  # the client's history is context, never stored as footnote's reply
        role = "user" if m.role == "user" else CLIENT_CONTEXT_ROLE
        await state.memory.add(user.id, session.id, role, m.text())
    run_id = new_id("run")
    message = await state.memory.add(user.id, session.id, "user", question, run_id=run_id)
    reply = await state.memory.add(
        user.id, session.id, "assistant", "", status="pending", run_id=run_id
    )
    turn = ChatTurn(user.id, session.id, message, reply)
    state.hub.start(
        run_id,
        "chat" if mode == "ask" else "agent",
        user.id,
        session.id,
        {"question": question, "mode": mode, "sources": list(sources), "api": "openai"},
        lambda: turn_events(state, user=user, turn=turn, run_id=run_id, mode=mode, sources=sources),
    )
    return run_id, session.id


async def _outcome(state: ServerState, run_id: str) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(type, data) of the run's events as they happen."""
    async for stored in state.hub.follow(run_id):
        yield stored.type, json.loads(stored.data)


def _usage(answer: dict[str, Any] | None) -> dict[str, int]:
    u = (answer or {}).get("usage") or {}
    tin, tout = int(u.get("tokens_in", 0)), int(u.get("tokens_out", 0))
    return {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}


@router.get("/models")
async def list_models(user: Caller) -> dict[str, Any]:
    """The models this endpoint offers (OpenAI `GET /v1/models`)."""
    now = int(time.time())
    return {
        "object": "list",
        "data": [{"id": m, "object": "model", "created": now, "owned_by": "footnote"}
                 for m in MODELS],
    }  # fmt: skip


@router.post("/chat/completions", response_model=None)
async def chat_completions(
    body: CompletionRequest, state: State, user: Caller
) -> JSONResponse | StreamingResponse:
    """OpenAI chat completions backed by footnote's chat; citations in the `footnote` field."""
    run_id, session_id = await _start(state, user, body)
    created, cid = int(time.time()), f"chatcmpl-{run_id}"
    if not body.stream:
        answer, error = None, None
        async for kind, data in _outcome(state, run_id):
            if kind == "final":
                answer = data["answer"]
            elif kind == "error":
                error = data
        if answer is None:
            message = (error or {}).get("message", "the run ended without an answer")
            raise ApiError(500, message, detail={"run_id": run_id})
        field = _footnote_field(state, run_id, session_id, answer)
        return JSONResponse(
            {
                "id": cid,
                "object": "chat.completion",
                "created": created,
                "model": body.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": "".join(reply_text(answer, field["citations"])),
                        },
                        "finish_reason": "stop",
                    }
                ],
                "usage": _usage(answer),
                "footnote": field,
            }
        )

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        data = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": body.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    async def frames() -> AsyncIterator[str]:
        yield chunk({"role": "assistant", "content": ""})
        answer = None
        async for kind, data in _outcome(state, run_id):
            if kind == "status":
                yield f": {data.get('message', '')}\n\n"  # a comment: progress, ignored by clients
            elif kind == "error":
                err = {"message": data.get("message", ""), "code": data.get("code", "error")}
                yield f"data: {json.dumps({'error': err})}\n\n"
            elif kind == "final":
                answer = data["answer"]
        if answer is not None:
            field = _footnote_field(state, run_id, session_id, answer)
            for piece in reply_text(answer, field["citations"]):
                yield chunk({"content": piece})
            yield chunk({}, "stop", usage=_usage(answer), footnote=field)
        yield "data: [DONE]\n\n"

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(frames(), media_type="text/event-stream", headers=headers)
