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


@dataclass(frozen=True)
class Intent:
    """Graph QA: the understood intent, entity mentions and the standalone question."""

    intent: str
    confidence: float
    question: str
    _: KW_ONLY
    mentions: list[str] = field(default_factory=list)
    constraints: list[dict[str, Any]] = field(default_factory=list)
    method: str = "rules"
    type: Literal["intent"] = "intent"


@dataclass(frozen=True)
class Entities:
    """Graph QA: mentions aligned to node keys (`ambiguous` ones lead to a clarifying question)."""

    aligned: list[dict[str, Any]]
    _: KW_ONLY
    ambiguous: list[dict[str, Any]] = field(default_factory=list)
    type: Literal["entities"] = "entities"


@dataclass(frozen=True)
class CypherEvent:
    """Graph QA: a candidate query (`source`: template, model, retry, fallback)."""

    cypher: str
    params: dict[str, Any]
    _: KW_ONLY
    source: str = "template"
    attempt: int = 1
    type: Literal["cypher"] = "cypher"


@dataclass(frozen=True)
class Guard:
    """Graph QA: the guard's verdict on the candidate query."""

    ok: bool
    _: KW_ONLY
    reasons: list[str] = field(default_factory=list)
    cypher: str = ""
    injected: list[str] = field(default_factory=list)
    type: Literal["guard"] = "guard"


@dataclass(frozen=True)
class Rows:
    """Graph QA: the result rows, each addressable as evidence id `row:<n>`."""

    columns: list[str]
    rows: list[list[Any]]
    _: KW_ONLY
    truncated: bool = False
    seconds: float = 0.0
    type: Literal["rows"] = "rows"


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
    | Intent
    | Entities
    | CypherEvent
    | Guard
    | Rows
)


def event_data(event: Event) -> dict[str, Any]:
    """The JSON-able payload of an event (everything but its type)."""
    data = asdict(event)
    data.pop("type", None)
    return data
