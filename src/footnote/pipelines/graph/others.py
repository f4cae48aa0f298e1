""" "Which other movies did that producer produce?": a follow-up asking for *other* ones than the
previous turn was about.

Seen with the embedded model (dev gd-049): the standalone rewrite kept "other" ("Which other
movies did Joel Silver produce?"), but the query it wrote did not leave out The Matrix, and the
answer listed it among the "other" movies. When the question asks for other ones and the rows
name an entity of the previous turn, code leaves those rows out and says so beside the answer
(as it does for a superlative it picks); when every row names it, nothing is left out (the rows
are then about it, not a list it belongs to).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from footnote.store.graph.base import GraphRows
from footnote.textnorm import normalise, text_lang

_OTHER_EN = re.compile(r"\b(?:other|others|else|besides|apart from|except)\b", re.I)
_OTHER_ZH = re.compile(r"其他|其它|别的|另外|除了|以外|之外")


@dataclass(frozen=True)
class LeftOut:
    """The rows without the previous turn's entities, and what was left out, in words (in
    the question's language)."""

    rows: GraphRows
    how: str


def asks_for_others(question: str) -> bool:
    """Whether the question asks for other ones ("which other…", "what else…", "其他")."""
    return bool(_OTHER_EN.search(question) or _OTHER_ZH.search(question))


def without_prior(question: str, rows: GraphRows, prior: Sequence[str]) -> LeftOut | None:
    """`rows` without those naming one of `prior` (the names of the previous turn's
    entities) when the question asks for other ones; None when that leaves nothing out, or
    nothing in."""
    names = {normalise(p) for p in prior if p.strip()}
    if not names or not asks_for_others(question):
        return None

    def named(value: object) -> bool:
        return isinstance(value, str) and normalise(value) in names

    kept = tuple(r for r in rows.rows if not any(named(v) for v in r))
    if not kept or len(kept) == len(rows.rows):
        return None
    out = list(dict.fromkeys(str(v) for r in rows.rows for v in r if named(v)))
    how = (
        f"未列出{'、'.join(out)}：问题问的是其他的"
        if text_lang(question) == "zh"
        else f"{', '.join(out)} left out: the question asks for other ones"
    )
    return LeftOut(
        GraphRows(rows.columns, kept, rows.truncated, rows.seconds, (*rows.notes, how)), how
    )
