"""Answers from graph rows: every sentence cites `row:<n>` ids that were returned, and every
number in it occurs in the rows it cites. Deterministic templates when no model writes.
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from footnote.errors import ModelError
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.models.structured import structured
from footnote.prompts import load_prompt
from footnote.store.graph_base import GraphRows
from footnote.textnorm import unmatched_numbers
from footnote.types import Citation, Sentence


def row_id(i: int) -> str:
    """The evidence id of result row `i`."""
    return f"row:{i}"


def _fmt(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(_fmt(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return "" if v is None else str(v)


def row_text(columns: Sequence[str], row: Sequence[Any]) -> str:
    """One row as `col: value; col: value`."""
    return "; ".join(f"{c}: {_fmt(v)}" for c, v in zip(columns, row, strict=False))


class _Sent(BaseModel):
    text: str
    rows: list[str] = Field(default_factory=list, description="Row ids like row:0")


class _Composed(BaseModel):
    sentences: list[_Sent]


@dataclass(frozen=True)
class Composed:
    """Checked sentences and how many citations were dropped as fabricated."""

    sentences: tuple[Sentence, ...]
    fabricated: int = 0
    dropped: int = 0
    method: str = "template"


def check_sentence(text: str, ids: Sequence[str], rows: GraphRows) -> tuple[Sentence | None, int]:
    """A Sentence with checked citations, or None; also the number of fabricated ids."""
    known = {row_id(i): row_text(rows.columns, r) for i, r in enumerate(rows.rows)}
    good = [i for i in dict.fromkeys(ids) if i in known]
    fabricated = len(set(ids)) - len(good)
    if not good:
        return None, fabricated
    evidence = "\n".join(known[i] for i in good)
    missing = unmatched_numbers(text, evidence)
    if missing:
        return None, fabricated
    cites = tuple(
        Citation(i, quote=known[i], verdict="supported", relevance=1.0,
                 checks={"id": "returned", "numbers": "present"})
        for i in good
    )  # fmt: skip
    return Sentence(text, citations=cites), fabricated


def template_sentences(
    rows: GraphRows, answer_template: str, max_rows: int
) -> list[tuple[str, list[str]]]:
    """Deterministic sentences: the intent's template per row, or a generic rendering."""
    out: list[tuple[str, list[str]]] = []
    shown = rows.rows[:max_rows]
    fields = {f for _, f, _, _ in string.Formatter().parse(answer_template) if f}
    for i, r in enumerate(shown):
        values = {c: _fmt(v) for c, v in zip(rows.columns, r, strict=False)}
        if answer_template and fields <= set(values):
            out.append((answer_template.format(**values), [row_id(i)]))
        elif len(rows.columns) == 1 and len(rows.rows) == 1:
            out.append((f"The answer is {_fmt(r[0])}.", [row_id(i)]))
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
    run_id: str | None = None,
) -> Composed:
    """Sentences citing rows: from the model when given (checked), else from templates."""
    fabricated = dropped = 0
    if model is not None:
        listing = "\n".join(
            f"{row_id(i)}: {row_text(rows.columns, r)}" for i, r in enumerate(rows.rows[:max_rows])
        )
        msgs = [
            Message("system", load_prompt("graph_answer")),
            Message("user", f"Question: {question}\n\nRows:\n<rows>\n{listing}\n</rows>"),
        ]
        try:
            out = structured(model, msgs, _Composed, run_id=run_id, max_tokens=400)
        except ModelError:
            out = _Composed(sentences=[])
        kept: list[Sentence] = []
        for s in out.sentences:
            sent, fab = check_sentence(s.text.strip(), s.rows, rows)
            fabricated += fab
            if sent is None:
                dropped += 1
            else:
                kept.append(sent)
        if kept:
            return Composed(tuple(kept), fabricated, dropped, "model")
    sents = []
    for text, ids in template_sentences(rows, answer_template, max_rows):
        sent, _ = check_sentence(text, ids, rows)
        if sent is not None:
            sents.append(sent)
    if len(rows.rows) > max_rows or rows.truncated:
        more = "more" if rows.truncated else str(len(rows.rows))
        sents.append(Sentence(f"(Showing {max_rows} of {more} rows.)", factual=False))
    return Composed(tuple(sents), fabricated, dropped, "template")
