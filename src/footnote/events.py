"""The typed events that pipelines yield and every surface only renders.

Each event has a literal `type` (the SSE `event:` name) and a JSON-able `data()`.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, asdict, dataclass, field
from typing import Any, Literal

from footnote.types import (
    Answer,
    Brief,
    ChecklistItem,
    Citation,
    Claim,
    Conflict,
    EvidenceCard,
    Outline,
    Sentence,
    SubQuestion,
)


@dataclass(frozen=True)
class Status:
    """A pipeline stage started or progressed ("understanding", "searching 3 papers")."""

    stage: str
    message: str
    _: KW_ONLY
    type: Literal["status"] = "status"


@dataclass(frozen=True)
class Thinking:
    """Intermediate model text (an attach-mode draft, an agent's thought) the user may watch:
    *unchecked*, never part of the answer, the stored message, memory or the flat answer."""

    text: str
    _: KW_ONLY
    unchecked: bool = True
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
class EvidenceShown:
    """The passages the composer is shown, sent before any answer is written: the evidence
    board as found, *unchecked* (each passage: id, source_id, title, page, section, kind,
    relevance, text). The answer's own board (`final`) replaces it."""

    passages: list[dict[str, Any]]
    _: KW_ONLY
    type: Literal["evidence"] = "evidence"


@dataclass(frozen=True)
class CheckedSentence:
    """Sentence `index` of the answer, sent as soon as it is final: it passed the checks of the
    round that becomes the answer, and no later step can drop it (the `final` answer holds the
    same sentence at the same index). Its `answer_delta` and `citation` events follow it."""

    index: int
    sentence: Sentence
    _: KW_ONLY
    type: Literal["sentence"] = "sentence"


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


@dataclass(frozen=True)
class GraphAnswer:
    """Graph QA: the outcome (answered, clarify, no_rows, refused), the answer's sentences
    with the row ids each cites (its footnotes), the query that ran and, for `clarify`, the
    readings to choose from. `cypher` is the query as shown (the server's row-cap probe left
    out), `params` the values its `$parameters` ran with."""

    status: str
    text: str
    _: KW_ONLY
    sentences: list[dict[str, Any]] = field(default_factory=list)
    cypher: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    options: list[str] = field(default_factory=list)
    support: float = 0.0
    type: Literal["answer"] = "answer"


@dataclass(frozen=True)
class OutlineEvent:
    """Research: the outline proposed (or as confirmed/edited by the analyst)."""

    outline: Outline
    _: KW_ONLY
    type: Literal["outline"] = "outline"


@dataclass(frozen=True)
class PlanEvent:
    """Research: the sub-questions with their budgets."""

    sub_questions: tuple[SubQuestion, ...]
    _: KW_ONLY
    type: Literal["plan"] = "plan"


@dataclass(frozen=True)
class SubQuestionStart:
    """Research: a worker started a sub-question."""

    sub_question: SubQuestion
    _: KW_ONLY
    type: Literal["subquestion_start"] = "subquestion_start"


@dataclass(frozen=True)
class SubQuestionStop:
    """Research: a sub-question stopped, and why (`done` or the budget that ran out)."""

    sub_question_id: str
    stop_reason: str
    cards: int
    _: KW_ONLY
    used: dict[str, float] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    type: Literal["subquestion_stop"] = "subquestion_stop"


@dataclass(frozen=True)
class CardEvent:
    """Research: an evidence card was made."""

    card: EvidenceCard
    _: KW_ONLY
    type: Literal["card"] = "card"


@dataclass(frozen=True)
class ConflictEvent:
    """Research: sources disagree on a figure (shown side by side)."""

    conflict: Conflict
    _: KW_ONLY
    type: Literal["conflict"] = "conflict"


@dataclass(frozen=True)
class DraftEvent:
    """Research: a chapter's draft claims, before the checks (unchecked text)."""

    item_id: str
    claims: tuple[Claim, ...]
    _: KW_ONLY
    writer: str = ""
    type: Literal["draft"] = "draft"


@dataclass(frozen=True)
class CheckEvent:
    """Research: what the checks made of one claim."""

    item_id: str
    claim_id: str
    verdict: str
    _: KW_ONLY
    reasons: dict[str, str] = field(default_factory=dict)
    kept: bool = True
    type: Literal["check"] = "check"


@dataclass(frozen=True)
class ChecklistEvent:
    """Research: covered / uncovered / conflicting per outline item."""

    items: tuple[ChecklistItem, ...]
    _: KW_ONLY
    sample_rate: float = 0.0
    wrapped_up: bool = False
    type: Literal["checklist"] = "checklist"


@dataclass(frozen=True)
class BudgetTick:
    """Research: a budget's use (`scope`: run or a sub-question id); `warning` at the
    warn fraction, `exhausted` names the resource that ran out."""

    scope: str
    used: dict[str, float]
    limits: dict[str, float | None]
    fraction: float
    _: KW_ONLY
    warning: bool = False
    exhausted: str | None = None
    type: Literal["budget"] = "budget"


@dataclass(frozen=True)
class BriefEvent:
    """Research: the finished brief."""

    brief: Brief
    _: KW_ONLY
    type: Literal["brief"] = "brief"


@dataclass(frozen=True)
class SettingEvent:
    """One row of an experiment-settings table: verified values with citations, or not stated."""

    field: str
    row: dict[str, Any]
    _: KW_ONLY
    type: Literal["setting"] = "setting"


@dataclass(frozen=True)
class CrossCheckEvent:
    """One recomputed aggregate of a paper: the stated value and the inputs, each cited."""

    check: dict[str, Any]
    _: KW_ONLY
    type: Literal["crosscheck"] = "crosscheck"


@dataclass(frozen=True)
class InjectionEvent:
    """Research: untrusted text (a fetched page, a document, a worker's output) tried to
    instruct the system; `kind` says how, `excerpt` quotes it (at most 160 characters), `action`
    says what the executor did (the text stayed data and was quarantined, or was dropped)."""

    source_id: str
    kind: str
    excerpt: str
    _: KW_ONLY
    stage: str = "investigate"
    action: str = "quarantined"
    type: Literal["injection"] = "injection"


Event = (
    Status
    | Thinking
    | ToolCall
    | ToolResult
    | Retrieval
    | EvidenceShown
    | CheckedSentence
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
    | GraphAnswer
    | OutlineEvent
    | PlanEvent
    | SubQuestionStart
    | SubQuestionStop
    | CardEvent
    | ConflictEvent
    | DraftEvent
    | CheckEvent
    | ChecklistEvent
    | BudgetTick
    | BriefEvent
    | SettingEvent
    | CrossCheckEvent
    | InjectionEvent
)


def event_data(event: Event) -> dict[str, Any]:
    """The JSON-able payload of an event (everything but its type)."""
    data = asdict(event)
    data.pop("type", None)
    return data
