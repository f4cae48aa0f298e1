"""Rerank search hits with a chat model: P(yes) that a passage answers the query.

The `retrieval.rerank` setting's reranker (composed by the workspace from the `rerank` role when
bound, else the `judge` role). Only the first `top` hits are scored (one short call each, the
judge's yes/no log-probabilities); the rest keep their fused order behind them. A hit the
model may not see (`no-external-model` text and an external model with no local reroute) is
left out of the calls, keeps its fused place and is marked `scores["rerank_withheld"]`.
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
        scored, out = [], list(head)
        for i, hit in enumerate(head):
            labels = labels_of(hit)
            if not model.may_see(labels):  # never sent: keeps its fused place, marked withheld
                out[i] = replace(hit, scores={**hit.scores, "rerank_withheld": 1.0})
                continue
            text = hit.block.table.as_text() if hit.block.table is not None else hit.block.text
            p = yes_probability_of(model, rerank_messages(query, text), labels=labels)
            scored.append((p, i, replace(hit, scores={**hit.scores, "rerank": round(p, 4)})))
        slots = sorted(i for _, i, _ in scored)
        scored.sort(key=lambda s: (-s[0], s[1]))
        for slot, (_, _, hit) in zip(slots, scored, strict=True):
            out[slot] = hit
        return out + tail

    return rerank
