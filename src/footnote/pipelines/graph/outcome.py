"""What a graph question is and what its run came to: the request, the outcome in the shape
of `graph ask --json`, and the small renderings the pipeline streams (aligned candidates,
result rows), plus the Latin-script runs of a mixed-script question."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from footnote.events import Rows
from footnote.index.graph.align import Alignment
from footnote.pipelines.graph.conversation import GraphTurn
from footnote.store.graph.base import GraphRows
from footnote.textnorm import CJK_RE
from footnote.types import AnswerStatus
from footnote.verify.cypher.guard import Principal

GraphStatus = Literal["answered", "clarify", "no_rows", "refused"]
ANSWER_STATUS: dict[str, AnswerStatus] = {
    "answered": "answered",
    "clarify": "refused",
    "no_rows": "no_evidence",
    "refused": "refused",
}


@dataclass(frozen=True)
class GraphRequest:
    """One question, asked by a principal whose attributes the server set."""

    question: str
    principal: Principal = field(default_factory=Principal)
    run_id: str | None = None
    history: tuple[GraphTurn, ...] = ()
    """Earlier turns of the conversation, oldest first (`GraphQAPipeline.turn()` of each)."""
    session: str | None = None
    """The conversation's id in the run store (the run is recorded under it when the
    pipeline owns the run); each run ends with a `turn` span, what the next turn's history
    is rebuilt from (`workspace.graph.session_history`)."""


@dataclass
class GraphOutcome:
    """The run's result in the shape of `graph ask --json`."""

    status: GraphStatus = "refused"
    answer: str = ""
    cypher: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    intent: str = ""
    source: str = ""
    attempts: int = 0
    options: list[str] = field(default_factory=list)
    route: str = ""
    route_reason: str = ""
    run_id: str = ""
    sentences: list[dict[str, Any]] = field(default_factory=list)
    """The answer's sentences with the row ids each cites (`{"text", "rows"}`)."""
    support: float = 0.0
    """Share of the composer's sentences that passed the row checks."""
    clarify: dict[str, Any] = field(default_factory=dict)
    """The last clarification decision: its score, whether it asked, its signals."""
    relaxed: str = ""
    """What the relaxation rung relaxed when the answer's query is a relaxed one."""
    picked: str = ""
    """What code picked from the query's rows for a superlative the query did not pick."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict."""
        return dict(self.__dict__)


_LATIN_RUN = re.compile(r"[A-Za-z][\w'’.&-]*(?:[ \t]+[A-Za-z0-9][\w'’.&-]*)*", re.ASCII)


def latin_runs(question: str) -> list[str]:
    """In a question with Chinese in it, the runs of Latin-script words ("Tom Hanks" in
    "Tom Hanks演过哪些电影？"): a name written in Latin letters beside Chinese characters
    has no word boundary for the index's verbatim lookup."""
    if not CJK_RE.search(question):
        return []
    return [m.group(0).strip(".'’-") for m in _LATIN_RUN.finditer(question)]


def cand(a: Alignment) -> dict[str, Any]:
    return {
        "mention": a.mention,
        "candidates": [
            {
                "label": c.entity.label,
                "key": c.entity.key,
                "name": c.entity.name,
                "score": round(c.score, 4),
                "method": c.method,
            }
            for c in a.candidates[:5]
        ],
    }


def from_rows(rows: GraphRows) -> Rows:
    """The Rows event of a result."""
    return Rows(
        list(rows.columns),
        [list(r) for r in rows.rows],
        truncated=rows.truncated,
        seconds=round(rows.seconds, 4),
    )
