"""The typed events that pipelines yield and every surface only renders.

Each event has a literal `type` (the SSE `event:` name) and a JSON-able `data()`.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, asdict, dataclass, field
from typing import Any, Literal

from footnote.types import Answer, Citation


@dataclass(frozen=True)
class Status:
    """A pipeline stage started or progressed ("understanding", "searching 3 papers")."""

    stage: str
    message: str
    _: KW_ONLY
    type: Literal["status"] = "status"


@dataclass(frozen=True)
class Thinking:
    """Intermediate reasoning or a plan the user may see."""

    text: str
    _: KW_ONLY
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True)
class ToolCall:
    """The agent called a tool."""

    tool: str
    arguments: dict[str, Any]
    _: KW_ONLY
    call_id: str = ""
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True)
class ToolResult:
    """A tool returned (or failed, with `error`)."""

    tool: str
    output: str
    _: KW_ONLY
    call_id: str = ""
    error: str | None = None
    type: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True)
class Retrieval:
    """Evidence was retrieved: block ids with their fused scores."""

    query: str
    hits: list[dict[str, Any]]
    _: KW_ONLY
    type: Literal["retrieval"] = "retrieval"


@dataclass(frozen=True)
class AnswerDelta:
    """A piece of answer text as it is produced."""

    text: str
    _: KW_ONLY
    type: Literal["answer_delta"] = "answer_delta"


@dataclass(frozen=True)
class CitationEvent:
    """A citation attached to sentence `sentence` of the answer."""

    sentence: int
    citation: Citation
    _: KW_ONLY
    type: Literal["citation"] = "citation"


@dataclass(frozen=True)
class Verification:
    """The checks' result for one citation (or one sentence)."""

    sentence: int
    evidence_id: str
    verdict: str
    _: KW_ONLY
    reasons: dict[str, str] = field(default_factory=dict)
    type: Literal["verification"] = "verification"


@dataclass(frozen=True)
class Final:
    """The finished answer."""

    answer: Answer
    _: KW_ONLY
    type: Literal["final"] = "final"


@dataclass(frozen=True)
class Error:
    """The run failed; `code` is machine-readable, `message` is for people."""

    code: str
    message: str
    _: KW_ONLY
    type: Literal["error"] = "error"


@dataclass(frozen=True)
class Done:
    """The last event of every run."""

    _: KW_ONLY
    type: Literal["done"] = "done"


Event = (
    Status
    | Thinking
    | ToolCall
    | ToolResult
    | Retrieval
    | AnswerDelta
    | CitationEvent
    | Verification
    | Final
    | Error
    | Done
)


def event_data(event: Event) -> dict[str, Any]:
    """The JSON-able payload of an event (everything but its type)."""
    data = asdict(event)
    data.pop("type", None)
    return data
