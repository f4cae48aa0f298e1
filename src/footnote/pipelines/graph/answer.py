"""Answers from graph rows: sentences citing `row:<n>` ids, from the `compose` role or from
deterministic templates, each checked by the gate (`verify.graph_answer` → `verify.gate`)
against the rows it was shown; the model's sentences also by the judge when one is given
(templates are written from the row values, so their values are checked but not judged).
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from footnote.errors import ModelError
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.models.structured import structured
from footnote.prompts import load_prompt
from footnote.store.graph.base import GraphRows
from footnote.types import Sentence
from footnote.verify.checks import Judge
from footnote.verify.graph_answer import (
    GraphVerdict,
    ShownRows,
    row_id,
    row_text,
    value_text,
    verify_graph_answer,
)


class _Sent(BaseModel):
    text: str
    rows: list[str] = Field(default_factory=list, description="Row ids like row:0")


class _Composed(BaseModel):
    sentences: list[_Sent]


@dataclass(frozen=True)
class Composed:
    """Checked sentences, the verdict they came from, and which composer wrote them."""

    sentences: tuple[Sentence, ...]
    verdict: GraphVerdict
    method: str = "template"
    discarded: GraphVerdict | None = None
    """The model's verdict when none of its sentences passed and templates were used."""

    @property
    def fabricated(self) -> int:
        """Row ids the composer cited that it was never shown."""
        return self.verdict.fabricated

    @property
    def dropped(self) -> int:
        """Sentences that failed a check."""
        return self.verdict.dropped


def template_sentences(
    rows: GraphRows, answer_template: str, max_rows: int
) -> list[tuple[str, list[str]]]:
    """Deterministic sentences: the intent's template per row, or a generic rendering."""
    out: list[tuple[str, list[str]]] = []
    shown = rows.rows[:max_rows]
    fields = {f for _, f, _, _ in string.Formatter().parse(answer_template) if f}
    for i, r in enumerate(shown):
        values = {c: value_text(v) for c, v in zip(rows.columns, r, strict=False)}
        if answer_template and fields <= set(values):
            out.append((answer_template.format(**values), [row_id(i)]))
        elif len(rows.columns) == 1 and len(rows.rows) == 1:
            out.append((f"The answer is {value_text(r[0])}.", [row_id(i)]))
        else:
            out.append((row_text(rows.columns, r).replace("; ", ", ") + ".", [row_id(i)]))
    return out


def compose_answer(
    question: str,
    rows: GraphRows,
    *,
    model: RoleModel | None,
    answer_template: str = "",
    max_rows: int = 10,
    params: Mapping[str, Any] | None = None,
    labels: tuple[str, ...] = (),
    run_id: str | None = None,
    judge: Judge | None = None,
) -> Composed:
    """Sentences citing rows: from the model when given, else from templates; either way
    checked against the first `max_rows` rows (those the composer saw) and `params`; the
    model's sentences also by `judge` (entailment) when given."""
    shown = ShownRows.of(rows, max_rows, params)
    if model is not None:
        tag = "rows-" + secrets.token_hex(4)  # row text cannot forge a tag it never saw
        listing = "\n".join(f"{i}: {text.replace(tag, '')}" for i, text in shown.rows.items())
        msgs = [
            Message("system", load_prompt("graph_answer")),
            Message("user", f"Question: {question}\n\nRows:\n<{tag}>\n{listing}\n</{tag}>"),
        ]
        try:
            out = structured(model, msgs, _Composed, run_id=run_id, max_tokens=400, labels=labels)
        except ModelError:
            out = _Composed(sentences=[])
        verdict = verify_graph_answer(
            [(s.text, s.rows) for s in out.sentences], shown, judge=judge, question=question
        )
        if verdict.sentences:
            return Composed(verdict.sentences, verdict, "model")
        discarded: GraphVerdict | None = verdict
    else:
        discarded = None
    verdict = verify_graph_answer(template_sentences(rows, answer_template, max_rows), shown)
    sents = list(verdict.sentences)
    if len(rows.rows) > max_rows or rows.truncated:
        more = "more" if rows.truncated else str(len(rows.rows))
        sents.append(Sentence(f"(Showing {max_rows} of {more} rows.)", factual=False))
    return Composed(tuple(sents), verdict, "template", discarded)
