"""Request and response bodies (they make the OpenAPI document)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field

MAX_MESSAGE_CHARS = 8000
"""Longest user message of a conversation (sessions and `/v1/chat/completions` alike)."""
MAX_REPLY_CHARS = 32_000
"""Longest assistant turn a client may resend (a reply carries its `References:` block)."""
MAX_HISTORY_MESSAGES = 200
"""Most messages one `/v1/chat/completions` request may send (memory uses the recent ones)."""
MAX_PAGE = 200
"""Most items one list request returns."""
MAX_OFFSET = 1_000_000_000
"""Furthest a list may be paged (well inside the stores' integer range)."""

PageLimit = Annotated[int, Query(ge=1, le=MAX_PAGE, description="How many items.")]
PageOffset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="How many to skip.")]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorInfo(BaseModel):
    """What went wrong."""

    code: str
    message: str
    detail: Any = None


class ErrorBody(BaseModel):
    """Every error response."""

    error: ErrorInfo


class SessionCreate(_Body):
    """A new conversation."""

    title: str = Field("", max_length=200)


class SessionPatch(_Body):
    """Rename a conversation."""

    title: str = Field(..., min_length=1, max_length=200)


class SessionOut(BaseModel):
    """A conversation."""

    id: str
    title: str
    summary: str
    messages: int
    created_at: str
    updated_at: str


class MessageCreate(_Body):
    """A user turn: the question, how to answer it, optionally which sources to search."""

    content: str = Field(..., min_length=1, max_length=MAX_MESSAGE_CHARS)
    mode: Literal["ask", "agent"] = Field(
        "ask", description="`ask`: the verified ask pipeline; `agent`: the ReAct tool loop."
    )
    sources: list[str] = Field(default_factory=list, max_length=50)


class MessageOut(BaseModel):
    """A stored message; `data` holds the standalone question and the answer JSON."""

    id: str
    session_id: str
    seq: int
    role: str
    content: str
    status: str
    run_id: str | None
    data: dict[str, Any]
    created_at: str
    feedback: dict[str, Any] | None = Field(
        None, description="The caller's latest rating of this reply: {rating: up|down, comment}."
    )


class TurnStarted(BaseModel):
    """A turn was accepted: follow `stream_url` (SSE) for its events."""

    run_id: str
    message: MessageOut
    reply: MessageOut
    stream_url: str
    status_url: str


class RunOut(BaseModel):
    """A run's status (`running`, `completed`, `cancelled`, `failed`) and answer."""

    id: str
    kind: str
    status: str
    session_id: str | None
    created_at: str
    finished_at: str | None
    events: int
    output: dict[str, Any] | None


class FeedbackCreate(_Body):
    """👍 / 👎 on a reply message or a run, with an optional comment."""

    rating: Literal["up", "down"]
    message_id: str | None = None
    run_id: str | None = None
    comment: str = Field("", max_length=4000)


class FeedbackOut(BaseModel):
    """Stored feedback, with where to find everything behind the run."""

    id: str
    run_id: str
    trace_url: str


class SourceOut(BaseModel):
    """A source, or an upload still being ingested (`status`)."""

    id: str
    status: Literal["processing", "ready", "failed"]
    title: str | None = None
    filename: str | None = None
    kind: str | None = None
    pages: int | None = None
    blocks: int | None = None
    lang: str | None = None
    labels: list[str] = Field(default_factory=list)
    acl_groups: list[str] = Field(default_factory=list)
    owner: str | None = Field(None, description="Who uploaded it (none: the operator's).")
    shared_with: list[str] = Field(
        default_factory=list, description="Groups it is shared with besides its owner."
    )
    public: bool = Field(False, description="Readable by everyone.")
    can_delete: bool = Field(False, description="Whether the caller may delete it.")
    version: int | None = Field(
        None, description="Its version among its owner's uploads (or files) of the same name."
    )
    unchanged: bool = Field(
        False, description="An upload of bytes already stored: this is that record, unchanged."
    )
    error: str | None = None
