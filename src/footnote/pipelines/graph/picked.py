"""The earliest/most/cheapest row picked by code when a query for a superlative question did not
pick one ("Which actor was born earliest?" answered by a query that returned every actor with
a birth year: the 1.5B model never wrote the ORDER BY in five tries).

The pick is deterministic and said: the rows whose one numeric column holds the extreme value
the superlative word names are kept, ties included, and the answer says that code picked them
from how many rows. No pick when the direction is unclear (best, worst; "oldest" of a column
that is no year or date), when the rows hold no or several numeric columns, when the server cut
the result, or when the question has several superlatives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from footnote.pipelines.graph.asked import superlative_unpicked
from footnote.pipelines.graph.understand import LIMIT_PHRASES
from footnote.store.graph.base import GraphRows
from footnote.verify.graph_answer import value_text

_LARGEST_EN = r"most|highest|largest|biggest|greatest|maximum|max|longest|priciest"
_SMALLEST_EN = r"least|lowest|smallest|fewest|minimum|min|cheapest|shortest"
_EARLY_EN = r"oldest|earliest"
_LATE_EN = r"most recent|youngest|newest|latest"
_WORDS_EN = re.compile(
    rf"\b(?:(?P<late>{_LATE_EN})|(?P<early>{_EARLY_EN})|(?P<big>{_LARGEST_EN})|"
    rf"(?P<small>{_SMALLEST_EN})|best|worst)\b",
    re.I,
)
_WORDS_ZH = re.compile(
    r"最(?:(?P<late>年轻|新|晚|近)|(?P<early>老|年长|早)|(?P<big>多|大|高|贵|长|重)|"
    r"(?P<small>少|小|低|便宜|短|轻))"
)
_TIME_COLUMN = re.compile(r"born|birth|year|date|released|founded|time|day", re.I)
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?$")


@dataclass(frozen=True)
class Picked:
    """The kept rows and what code did, in words (said before the answer)."""

    rows: GraphRows
    how: str


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    text = value_text(v).strip()
    return float(text) if _NUMBER.match(text) else None


def _direction(question: str, column: str, values: list[float]) -> tuple[str, str] | None:
    """("max" | "min", the word) the question's one superlative asks for, or None."""
    asked = LIMIT_PHRASES.sub(" ", question)  # "at most 100" picks nothing
    hits = [*_WORDS_EN.finditer(asked), *_WORDS_ZH.finditer(asked)]
    if len(hits) != 1:
        return None
    m = hits[0]
    kind = next((k for k in ("big", "small", "early", "late") if m.group(k)), "")
    if kind in ("early", "late"):  # a time asked: only a column of years or dates says when
        years = all(v.is_integer() and 1000 <= v <= 2200 for v in values)
        if not (_TIME_COLUMN.search(column) or years):
            return None
        return ("min" if kind == "early" else "max"), m.group(0)
    if kind:
        return ("max" if kind == "big" else "min"), m.group(0)
    return None  # best, worst: by what?


def pick_extreme(question: str, cypher: str, rows: GraphRows) -> Picked | None:
    """The rows a superlative question asks for, picked by code from a query that did not
    pick them (`superlative_unpicked`), or None when code cannot tell which they are."""
    if rows.truncated or not superlative_unpicked(question, cypher, rows):
        return None
    numeric = [
        j
        for j in range(len(rows.columns))
        if all(_number(r[j]) is not None for r in rows.rows if j < len(r))
    ]
    if len(numeric) != 1:
        return None
    j = numeric[0]
    values = [_number(r[j]) for r in rows.rows]
    nums = [v for v in values if v is not None]
    told = _direction(question, rows.columns[j], nums)
    if told is None:
        return None
    way, word = told
    best = max(nums) if way == "max" else min(nums)
    kept = tuple(r for r, v in zip(rows.rows, values, strict=True) if v == best)
    shown = value_text(next(r[j] for r in kept))
    how = (
        f"The query returned {len(rows.rows)} rows; code kept the {len(kept)} with the "
        f"{'largest' if way == 'max' else 'smallest'} {rows.columns[j]} ({shown}) for "
        f"“{word}”"
    )
    return Picked(GraphRows(rows.columns, kept, notes=rows.notes), how)
