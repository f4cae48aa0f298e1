"""Graph rows as citable evidence of the agent's final answer.

The agent's `graph_query` tool gives each result row it shows an id, `graph:<call>:<row>` (row
`<row>` of the `<call>`-th graph question answered in this agent run, recorded as the graph run
`<agent run>.graph<call>`), and records the row here. The final answer may cite those ids beside block and computation
ids; `verify_agent_answer` checks a sentence that cites rows with the graph answer gate's rule
(`verify.graph_answer`): every name, number and date it states is in a cited row (or the
query's parameters), and every other content word comes from the question, the graph's schema
vocabulary or the cited rows — an invented genre is unsupported although title and year are
right. Ids of rows shown in another run, or never shown, are fabricated and dropped.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from footnote.events import Event, Status
from footnote.textnorm import text_lang
from footnote.types import EVIDENCE_ID_PATTERN, Block
from footnote.verify.answer import AnswerBuilder
from footnote.verify.checks import CitationCheck, Judge, Thresholds
from footnote.verify.draft import Draft, draft_from_cited_text
from footnote.verify.evidence import Evidence, EvidenceSet
from footnote.verify.gate import (
    MAX_CITES_CHECKED,
    SpanFn,
    check_draft,
    checked_answer_events,
)
from footnote.verify.graph_answer import row_text, unsupported_words, value_text
from footnote.verify.scoring import relevance

GRAPH_ROW_ID_PATTERN = r"graph:\d+:\d+"
"""A row shown by the agent's `graph_query` in this run: `graph:<call>:<row>`."""
_CITE = re.compile(rf"\[((?:{EVIDENCE_ID_PATTERN}|{GRAPH_ROW_ID_PATTERN})(?:\s*[,;]\s*[^\]]+)*)\]")
_ROW_ID = re.compile(rf"^{GRAPH_ROW_ID_PATTERN}$")


def graph_row_id(call: int, row: int) -> str:
    """The citable id of row `row` of the `call`-th graph question of a run."""
    return f"graph:{call}:{row}"


def is_graph_row_id(evidence_id: str) -> bool:
    """Whether `evidence_id` names a graph row (shown or not)."""
    return _ROW_ID.match(evidence_id) is not None


@dataclass(frozen=True)
class GraphRow:
    """One shown result row: its text (`col: value; …`), the query's parameter values (the
    aligned entities it was selected by) and the graph's schema words."""

    id: str
    graph: str
    text: str
    context: tuple[str, ...]
    vocabulary: frozenset[str]


class GraphRowsShown:
    """The graph rows `graph_query` showed in one agent run, by id (thread-safe: tools run in
    worker threads)."""

    def __init__(self) -> None:
        self._rows: dict[str, GraphRow] = {}
        self._calls = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, row_id: str) -> GraphRow | None:
        """The shown row with this id."""
        return self._rows.get(row_id)

    def add(
        self,
        graph: str,
        rows: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any],
        vocabulary: Collection[str],
    ) -> list[str]:
        """Record the rows one graph question showed (none: the question still counts);
        their ids, in order."""
        context = tuple(
            value_text(v)
            for k, v in params.items()
            if not k.startswith("__allow_") and isinstance(v, str | int | float | list)
        )
        vocab = frozenset(vocabulary)
        with self._lock:
            self._calls += 1
            ids = [graph_row_id(self._calls, i) for i in range(len(rows))]
            for rid, row in zip(ids, rows, strict=True):
                text = row_text(list(row), list(row.values()))
                self._rows[rid] = GraphRow(rid, graph, text, context, vocab)
        return ids

    def evidence(self) -> list[Evidence]:
        """The shown rows as the gate's row evidence."""
        with self._lock:
            rows = list(self._rows.values())
        return [
            Evidence(r.id, r.text, Block(r.id, f"graph:{r.graph}", "table", r.text, 0, order=n),
                     context="\n".join(r.context), kind="row")
            for n, r in enumerate(rows)
        ]  # fmt: skip


def cited_draft(text: str, evidence: EvidenceSet, *, question: str = "") -> Draft:
    """Sentences with the `[id]` citations they carry (block, cell, computation or graph row
    ids); text without any gets citations attached by overlap."""
    return draft_from_cited_text(text, evidence, question=question, cite=_CITE)


def _with_words(
    sentence: str, checks: list[CitationCheck], rows: GraphRowsShown, question: str
) -> list[CitationCheck]:
    """The checks of a sentence citing shown rows, made unsupported when it states a content
    word that neither the question, the cited graphs' schemas nor the cited evidence holds."""
    shown = [c for c in checks if not c.fabricated and c.evidence is not None]
    cited = [r for c in shown if (r := rows.get(c.evidence_id)) is not None]
    if not cited:
        return checks
    known = "\n".join(
        [question, *(x for r in cited for x in r.context), *(c.evidence.text for c in shown)]  # type: ignore[union-attr]
    )
    vocabulary = frozenset().union(*(r.vocabulary for r in cited))
    words = unsupported_words(sentence, known, vocabulary)
    reason = "missing: " + ", ".join(words) if words else "present"
    out = []
    for c in checks:
        if c.fabricated:
            out.append(c)
            continue
        values = {**c.values_missing, "words": words}
        out.append(replace(c, verdict="unsupported" if words else c.verdict,
                           values_missing=values, reasons={**c.reasons, "words": reason}))  # fmt: skip
    return out


def check_agent_draft(
    draft: Draft,
    evidence: EvidenceSet,
    rows: GraphRowsShown,
    *,
    judge: Judge | None,
    thresholds: Thresholds,
    span: SpanFn | None,
    question: str,
) -> list[list[CitationCheck]]:
    """The gate's checks, sentence by sentence: one citing graph rows has every citation
    checked (a list may cite a row per value) and its content words held to the rows."""
    out: list[list[CitationCheck]] = []
    for s in draft.sentences:
        graphy = any(is_graph_row_id(c) for c in s.cites)
        got = check_draft(
            Draft([s]), evidence, judge=judge, thresholds=thresholds, span=span,
            question=question, max_cites=None if graphy else MAX_CITES_CHECKED,
        )[0]  # fmt: skip
        out.append(_with_words(s.text, got, rows, question) if graphy else got)
    return out


async def verify_agent_answer(
    question: str,
    text: str,
    blocks: Sequence[Block],
    rows: GraphRowsShown,
    *,
    thresholds: Thresholds = Thresholds(),
    judge: Judge | None,
    span: SpanFn | None = None,
) -> AsyncIterator[Event]:
    """The agent's final answer through the gate, as `verify.gate.verify_text_answer` checks
    free text, with the rows shown in this run citable beside the blocks (a row id of another
    run, or never shown, is fabricated)."""
    items = [
        Evidence(b.id, b.table.as_text() if b.table is not None else b.text, b,
                 relevance=relevance(question, b.text, None))
        for b in blocks
    ] + rows.evidence()  # fmt: skip
    yield Status("verify", "checking the agent's answer")
    evidence = EvidenceSet(items)
    draft = cited_draft(text, evidence, question=question)
    builder = AnswerBuilder(
        question, evidence, text_lang(question), judge=judge, thresholds=thresholds
    )
    checks = await asyncio.to_thread(
        check_agent_draft, draft, evidence, rows, judge=judge, thresholds=thresholds, span=span,
        question=question,
    )  # fmt: skip
    for event in checked_answer_events(builder, draft, checks):
        yield event
