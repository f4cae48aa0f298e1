"""Rerank search hits with a chat model: P(yes) that a passage answers the query.

The `retrieval.rerank` setting's reranker (composed by the workspace from the `rerank` role when
bound, else the `judge` role). Only the first `top` hits are scored (one short call each, the
judge's yes/no log-probabilities); the rest keep their fused order behind them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from footnote.models.base import Message
from footnote.models.judge import yes_probability_of
from footnote.models.roles import RoleModel
from footnote.prompts import data_section, render
from footnote.types import Hit

RERANK_TOP = 12
"""Hits scored per search; later ones stay in fused order after them."""


def rerank_messages(query: str, passage: str) -> list[Message]:
    """The yes/no prompt for one query/passage pair (both fenced as data)."""
    return [
        Message(
            "user",
            render(
                "rerank",
                query=data_section(query.strip(), "QUERY"),
                passage=data_section(passage.strip()[:1500], "PASSAGE"),
            ),
        )
    ]


def model_reranker(
    model: RoleModel,
    labels_of: Callable[[Hit], Sequence[str]] = lambda _h: (),
    *,
    top: int = RERANK_TOP,
) -> Callable[[str, list[Hit]], list[Hit]]:
    """A `Reranker` (query, hits) → hits ordered by the model's P(yes), score in `scores["rerank"]`."""

    def rerank(query: str, hits: list[Hit]) -> list[Hit]:
        head, tail = hits[:top], hits[top:]
        scored = []
        for i, hit in enumerate(head):
            text = hit.block.table.as_text() if hit.block.table is not None else hit.block.text
            p = yes_probability_of(model, rerank_messages(query, text), labels=labels_of(hit))
            scored.append((p, i, replace(hit, scores={**hit.scores, "rerank": round(p, 4)})))
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [h for _, _, h in scored] + tail

    return rerank
