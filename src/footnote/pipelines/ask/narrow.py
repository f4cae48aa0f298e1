"""Narrow model calls of the ask pipeline, each small and scored on its own.

- `answerability`: does the cited passage answer the question? First-token P(yes) over a short
  prompt (one passage, the question, the proposed short answer): the score the calibrated
  refusal threshold applies to (`config/answering.py`).
- `translate_question`: the question in the paper's language, for a second search query.

Quote extraction and phrasing are the `cite` composer's fields (quote first, then the short
answer in the question's language; `compose.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from footnote.models.base import Completion, Message
from footnote.models.budget import Budget
from footnote.models.judge import yes_probability_of
from footnote.models.roles import RoleModel
from footnote.prompts import data_section, render

LANGUAGE_NAMES = {"en": "English", "zh": "Chinese (简体中文)"}


def answerability_messages(question: str, passage: str, answer: str) -> list[Message]:
    """The answerability prompt: passage, question and proposed answer, each fenced as data."""
    return [
        Message(
            "user",
            render(
                "answerable",
                passage=data_section(passage.strip()[:1800], "PASSAGE"),
                question=data_section(question.strip(), "QUESTION"),
                answer=data_section(answer.strip(), "ANSWER"),
            ),
        )
    ]


def answerability(
    model: RoleModel,
    question: str,
    passage: str,
    answer: str,
    *,
    labels: Sequence[str],
    budget: Budget | None = None,
    run_id: str | None = None,
) -> float:
    """P(the passage answers the question) in [0, 1]."""
    return yes_probability_of(
        model,
        answerability_messages(question, passage, answer),
        labels=labels,
        budget=budget,
        run_id=run_id,
    )


def translate_question(
    model: RoleModel,
    question: str,
    lang: str,
    *,
    labels: Sequence[str] = (),
    budget: Budget | None = None,
    run_id: str | None = None,
) -> tuple[str, Completion]:
    """The question translated into `lang` (one line; empty when the model gave nothing)."""
    language = LANGUAGE_NAMES.get(lang, lang)
    messages = [
        Message(
            "user",
            render(
                "translate_question",
                language=language,
                question=data_section(question.strip(), "QUESTION"),
            ),
        )
    ]
    completion = model.complete(
        messages,
        labels=labels,
        budget=budget,
        run_id=run_id,
        max_tokens=96,
        temperature=0.0,
        cache=True,
    )
    lines = [ln.strip() for ln in completion.text.strip().splitlines() if ln.strip()]
    return (lines[0][:400] if lines else ""), completion
