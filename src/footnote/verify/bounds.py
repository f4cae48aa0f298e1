"""The comparisons a query makes, and a sentence that states them the other way round.

A query that ran `WHERE a.name >= $peter` returned the names from Peter on; a sentence saying
"the names before Peter are …" cites the right rows and states every value they hold, so the
value checks pass it — yet it says the opposite of what the rows are. `query_bounds` reads the
query's bounds on its values (`>` for >= and >, `<` for <= and <; a value bounded both ways has
no direction); `reversed_bounds` finds, in a sentence, each such value said with a comparison
word of the other direction next to it ("before 'Peter'", "小于Peter", "1990年以后"). Only the
nearest comparison word counts: "less than or equal to" is `<`, "greater than or equal to" `>`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_OP = r"(?P<op>>=|<=|>|<)"
_TERM = r"[A-Za-z_`][\w`]*(?:\.[\w`]+)?"
_LEFT = re.compile(rf"(?P<term>{_TERM})\s*{_OP}\s*(?:\$(?P<param>\w+)|(?P<num>-?\d+(?:\.\d+)?))")
_RIGHT = re.compile(rf"(?:\$(?P<param>\w+)|(?P<num>-?\d+(?:\.\d+)?))\s*{_OP}\s*(?P<term>{_TERM})")
_FLIP = {">": "<", "<": ">"}

_BEFORE_EN = re.compile(
    r"(?P<w>greater than|more than|higher than|larger than|later than|bigger than|above|over|"
    r"after|since|at least|less than|fewer than|lower than|smaller than|earlier than|below|"
    r"under|before|until|till|at most|≥|>=|>|≤|<=|<)"
    r"(?:\s+or\s+equal(?:\s+to)?)?\s+$",
    re.IGNORECASE,
)
_AFTER_EN = re.compile(
    r"^\W{0,2}\s*(?P<w>or more|or later|or above|and above|and later|onwards|or higher|or less|"
    r"or fewer|or earlier|or below|and below|or lower)\b",
    re.IGNORECASE,
)
_BEFORE_ZH = re.compile(
    r"(?P<w>不少于|不低于|不早于|大于|超过|高于|多于|晚于|至少|不超过|不多于|不高于|不晚于|小于|低于|少于|早于|至多)"
    r"(?:或等于|等于)?\s*$"
)
_AFTER_ZH = re.compile(r"^\W{0,2}\s*年?\s*(?P<w>之后|以后|以上|之前|以前|以下)")
_GREATER = {
    "greater than", "more than", "higher than", "larger than", "later than", "bigger than",
    "above", "over", "after", "since", "at least", "≥", ">=", ">", "or more", "or later",
    "or above", "and above", "and later", "onwards", "or higher", "不少于", "不低于", "不早于",
    "大于", "超过", "高于", "多于", "晚于", "至少", "之后", "以后", "以上",
}  # fmt: skip
_OPENING = "'\"‘“「"
_CLOSING = "'\"’”」"
_WINDOW = 40
"""Characters read on each side of a value for its comparison word."""


def query_bounds(cypher: str, params: Mapping[str, Any]) -> dict[str, str]:
    """Value as written → `>` or `<`: the direction the query bounds it in (a parameter's
    value, or a number written in the query). A value bounded both ways is left out."""
    seen: dict[str, set[str]] = {}
    for pattern, flip in ((_LEFT, False), (_RIGHT, True)):
        for m in pattern.finditer(cypher):
            param, num = m.group("param"), m.group("num")
            if param is not None and param not in params:
                continue
            value = str(params[param]) if param is not None else str(num)
            op = m.group("op")[0]
            seen.setdefault(value, set()).add(_FLIP[op] if flip else op)
    return {v: next(iter(ops)) for v, ops in seen.items() if len(ops) == 1 and v.strip()}


def _direction(word: str) -> str:
    return ">" if word.lower() in _GREATER else "<"


def reversed_bounds(sentence: str, bounds: Mapping[str, str]) -> list[str]:
    """The spans of `sentence` that state a bounded value with the opposite comparison."""
    out: list[str] = []
    for value, want in bounds.items():
        for m in re.finditer(
            rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])", sentence, re.IGNORECASE
        ):
            start = m.start() - (m.start() > 0 and sentence[m.start() - 1] in _OPENING)
            end = m.end() + (m.end() < len(sentence) and sentence[m.end()] in _CLOSING)
            left = sentence[max(0, start - _WINDOW) : start]
            right = sentence[end : end + _WINDOW]
            span: tuple[str, int, int] | None = None
            if (b := _BEFORE_EN.search(left) or _BEFORE_ZH.search(left)) is not None:
                span = (b.group("w"), start - len(left) + b.start(), end)
            elif (a := _AFTER_EN.search(right) or _AFTER_ZH.search(right)) is not None:
                span = (a.group("w"), start, end + a.end())
            if span is not None and _direction(span[0]) != want:
                out.append(sentence[span[1] : span[2]].strip())
    return out
