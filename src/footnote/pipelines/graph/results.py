"""Result sets of graph queries: whether one matched nothing, each row once, and a key to
compare two results by (for choosing among candidates by agreement)."""

from __future__ import annotations

import json
import re
from typing import Any

from footnote.store.graph.base import GraphRows

_AGGREGATE = re.compile(r"\b(?:count|sum|avg|min|max|collect)\s*\(", re.I)


def matched_nothing(rows: GraphRows, cypher: str) -> bool:
    """No rows, or an aggregate over nothing: one row of zero counts, nulls or empty lists."""
    if not rows.rows:
        return True
    empty: tuple[Any, ...] = (0, None, [], "")
    only = rows.rows[0]
    return len(rows.rows) == 1 and bool(_AGGREGATE.search(cypher)) and all(v in empty for v in only)


def distinct_rows(rows: GraphRows) -> GraphRows:
    """`rows` with each repeated row shown once, in order (a needless join returns a supplier
    once per product), said in a note; `rows` itself when nothing repeats."""
    seen: set[str] = set()
    kept = []
    for r in rows.rows:
        if (key := json.dumps(r, sort_keys=True, default=str)) not in seen:
            seen.add(key)
            kept.append(r)
    if len(kept) == len(rows.rows):
        return rows
    note = f"{len(rows.rows) - len(kept)} repeated row(s) shown once"
    return GraphRows(rows.columns, tuple(kept), rows.truncated, rows.seconds, (*rows.notes, note))


def result_key(rows: GraphRows) -> str:
    """A result set as a comparable key: the multiset of rows, column names and order ignored."""
    cells = sorted(json.dumps(sorted(map(_cell, r)), ensure_ascii=False) for r in rows.rows)
    return "\n".join(cells)


def _cell(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    elif isinstance(x, float):
        x = round(x, 6)
    return json.dumps(x, sort_keys=True, ensure_ascii=False, default=str)
