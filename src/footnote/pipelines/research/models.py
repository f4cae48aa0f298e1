"""The research job's model calls, each charged to the budget it is given and licence-gated by
the labels of the text it carries: planning the outline and reading what is still missing
(`planner`, the `understand` role), card selection (`understand`), chapter writing
(`compose`), support judging, whether a chapter's claims answer its item and same-story
attribution (`judge`). A call is refused before it is made
(`BudgetExceeded`) when its prompt, counted in the model's tokens, plus the reply's limit would
go over the tokens left: the prompt is known, so no call overshoots by its own size."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from footnote.errors import BudgetExceeded
from footnote.models.base import Message
from footnote.models.budget import Budget
from footnote.models.judge import judge_messages, yes_probability_of
from footnote.pipelines.research.answered import AnswersFn
from footnote.pipelines.research.cards import SelectFn
from footnote.pipelines.research.crosslang import REPLY_TOKENS
from footnote.pipelines.research.synthesise import WriteFn
from footnote.prompts import data_section, render
from footnote.types import Snapshot
from footnote.verify import Judge

if TYPE_CHECKING:
    from footnote.models import RoleModel

JudgeSupport = Callable[..., float]
"""`judge_support(model, claim, passage, *, labels, budget, run_id) -> P(supported)`."""
YES_NO_REPLY = 8
"""Tokens kept for a yes/no reply (one token asked; a little slack for the chat template)."""


def afford(model: RoleModel, budget: Budget, messages: list[Message], reply: int) -> None:
    """Refuse (`BudgetExceeded`, tokens) a call whose prompt plus `reply` tokens would go over
    what is left of `budget` or an ancestor."""
    left = budget.remaining().tokens
    if left is None:
        return
    need = sum(model.count_tokens(m.content) for m in messages) + reply
    if need > left:
        used = budget.tokens_used
        raise BudgetExceeded("tokens", used + need, used + left)


@dataclass
class ResearchModels:
    """The bound models of a research run (any may be None: code does that step instead)."""

    select: RoleModel | None = None
    writer: RoleModel | None = None
    judge: RoleModel | None = None
    judge_support: JudgeSupport | None = None
    run_id: str | None = None
    planner: RoleModel | None = None
    """Proposes the outline and reads what each sub-question still misses (`planner.py`);
    None: the template outline and the plan's fixed queries."""

    def _structured(self, model: RoleModel, budget: Budget, max_tokens: int) -> Callable[..., str]:
        def complete(
            messages: list[Message], schema: dict[str, object], labels: tuple[str, ...]
        ) -> str:
            afford(model, budget, messages, max_tokens)
            caps = model.capabilities()
            kw: dict[str, Any] = {"json_schema": schema} if caps.json_schema else {}
            out = model.complete(messages, labels=labels, budget=budget, run_id=self.run_id,
                                 max_tokens=max_tokens, temperature=0.0, cache=True, **kw)  # fmt: skip
            return out.text

        return complete

    def select_fn(self, budget: Budget) -> SelectFn | None:
        """Card selection charged to `budget`, or None without a bound model."""
        return None if self.select is None else self._structured(self.select, budget, 160)

    def plan_fn(self, budget: Budget) -> SelectFn | None:
        """The outline planning call charged to `budget`, or None without a planner model."""
        return None if self.planner is None else self._structured(self.planner, budget, 900)

    def missing_fn(self, budget: Budget) -> SelectFn | None:
        """The "what is still missing" call charged to `budget`, or None without a planner."""
        return None if self.planner is None else self._structured(self.planner, budget, 240)

    def library_query_fn(self, budget: Budget) -> SelectFn | None:
        """The call writing the question in the library's language (`crosslang`), by the
        `understand` role (the planner, else card selection's model), or None without one."""
        model = self.planner or self.select
        return None if model is None else self._structured(model, budget, REPLY_TOKENS)

    def write_fn(self, budget: Budget) -> WriteFn | None:
        """Chapter writing charged to `budget`, or None without a bound model."""
        return None if self.writer is None else self._structured(self.writer, budget, 700)

    def judge_fn(self, budget: Budget, labels: tuple[str, ...]) -> Judge | None:
        """P(supported) per (claim, card) charged to `budget`, or None without a judge."""
        model, support = self.judge, self.judge_support
        if model is None or support is None:
            return None

        def judge(claim: str, passage: str) -> float:
            afford(model, budget, judge_messages(claim, passage), YES_NO_REPLY)
            return float(support(model, claim, passage, labels=labels, budget=budget,
                                 run_id=self.run_id))  # fmt: skip

        return judge

    def answers_fn(self, budget: Budget, question: str) -> AnswersFn | None:
        """P(claims answer a part of an outline item's question), from the judge's yes/no
        probability with the research `question` beside it, charged to `budget`; None without a
        judge (`research.answered`)."""
        model = self.judge
        if model is None:
            return None

        def answers(part: str, claims: Sequence[str], labels: tuple[str, ...]) -> float:
            statements = data_section("\n".join(f"- {c}" for c in claims), "STATEMENTS")
            prompt = render("research_answers", question=data_section(question, "QUESTION"),
                            part=data_section(part, "PART"), statements=statements)  # fmt: skip
            afford(model, budget, [Message("user", prompt)], YES_NO_REPLY)
            return yes_probability_of(model, [Message("user", prompt)], labels=labels,
                                      budget=budget, run_id=self.run_id)  # fmt: skip

        return answers

    def same_story_fn(self, budget: Budget) -> Callable[[Snapshot, Snapshot], float] | None:
        """P(b copies a's story) from the judge's yes/no probability, or None without a judge."""
        model = self.judge
        if model is None:
            return None

        def same_story(a: Snapshot, b: Snapshot) -> float:
            prompt = render(
                "research_same_story", a_title=a.title[:100], a_date=a.published_at or "undated",
                b_title=b.title[:100], b_date=b.published_at or "undated",
                a_text=data_section(a.text[:1500], "TEXT"), b_text=data_section(b.text[:1500], "TEXT"),
            )  # fmt: skip
            labels = tuple(dict.fromkeys((*a.labels, *b.labels)))
            afford(model, budget, [Message("user", prompt)], YES_NO_REPLY)
            return yes_probability_of(model, [Message("user", prompt)], labels=labels,
                                      budget=budget, run_id=self.run_id)  # fmt: skip

        return same_story
