"""Support judge: P(yes) / (P(yes) + P(no)) from the first generated token's log-probabilities.

Deterministic (temperature 0, one or two tokens). When the backend gives no log-probabilities
the answer text is parsed instead (yes → 1.0, no → 0.0, anything else → 0.5) and the ledger
record says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files

from footnote.models.base import Message
from footnote.models.budget import Budget
from footnote.models.roles import RoleModel
from footnote.prompts import data_section, fill

YES = frozenset({"yes", "是", "是的", "对"})
NO = frozenset({"no", "否", "不", "不是"})
NO_LOGPROBS_NOTE = "judge: backend has no logprobs; score parsed from the answer text"


@cache
def judge_prompt() -> str:
    """The judge prompt template (package data `footnote/prompts/judge.md`)."""
    return files("footnote").joinpath("prompts/judge.md").read_text(encoding="utf-8")


def judge_messages(claim: str, passage: str) -> list[Message]:
    """The judge's chat messages for one claim/passage pair, each inside a fence with a random
    tag (a passage containing `>>>` or "CLAIM:" cannot end its section)."""
    values = {
        "passage": data_section(passage.strip(), "PASSAGE"),
        "claim": data_section(claim.strip(), "CLAIM"),
    }
    return [Message("user", fill(judge_prompt(), values))]


def _word(token: str) -> str:
    return token.strip().strip(".,!:;\"'。，！").lower()


def yes_probability(top: Mapping[str, float]) -> float | None:
    """P(yes)/(P(yes)+P(no)) from one step's top log-probabilities; None if neither appears."""
    p_yes = sum(math.exp(lp) for tok, lp in top.items() if _word(tok) in YES)
    p_no = sum(math.exp(lp) for tok, lp in top.items() if _word(tok) in NO)
    if p_yes + p_no <= 0.0:
        return None
    return p_yes / (p_yes + p_no)


def parse_yes_no(text: str) -> float:
    """1.0 for a yes answer, 0.0 for no, 0.5 when it is neither."""
    words = text.strip().split()
    first = _word(words[0]) if words else _word(text)
    if first in YES or text.strip().startswith("是"):
        return 1.0
    if first in NO or text.strip().startswith(("否", "不")):
        return 0.0
    return 0.5


def judge_support(
    model: RoleModel,
    claim: str,
    passage: str,
    *,
    labels: Sequence[str],
    budget: Budget | None = None,
    run_id: str | None = None,
) -> float:
    """Probability in [0, 1] that `passage` supports `claim`."""
    return yes_probability_of(
        model, judge_messages(claim, passage), labels=labels, budget=budget, run_id=run_id
    )


def yes_probability_of(
    model: RoleModel,
    messages: Sequence[Message],
    *,
    labels: Sequence[str] = (),
    budget: Budget | None = None,
    run_id: str | None = None,
) -> float:
    """P(yes) in [0, 1] for a yes/no question put as `messages` (log-probabilities when the
    backend has them, else the answer text parsed)."""
    if model.capabilities().logprobs:
        out = model.complete(
            messages,
            labels=labels,
            budget=budget,
            run_id=run_id,
            max_tokens=1,
            temperature=0.0,
            logprobs=10,
            cache=True,
        )
        if out.top_logprobs:
            p = yes_probability(out.top_logprobs[0])
            if p is not None:
                return p
        return parse_yes_no(out.text)
    out = model.complete(
        messages,
        labels=labels,
        budget=budget,
        run_id=run_id,
        max_tokens=2,
        temperature=0.0,
        cache=True,
        note=NO_LOGPROBS_NOTE,
    )
    return parse_yes_no(out.text)
