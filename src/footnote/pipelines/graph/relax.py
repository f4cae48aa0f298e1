"""Relaxations of a query that matched nothing, tried before anything is said about the
graph (the ladder's relaxation rung, `graph.relax`):

1. `as_stored`: a string value compared for equality, replaced by the value the graph
   stores for it (aligned: 'united states' → 'USA', 'the matrix' → 'The Matrix');
2. `loosened`: string equality (`x.p = $v`, `{p: $v}`) made case-insensitive containment
   (`toLower(x.p) CONTAINS toLower($v)`);
3. `without_each_filter`: the query without one conjunct of its WHERE clause (only when
   another filter is left), one query per conjunct: the ladder offers the one that matches
   the fewest rows as a question, never as the answer.

Queries are the guard's output (string literals already parameters); every relaxed query
goes through the guard again before it runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Aligner = Callable[[str, str], str | None]
"""`stored(property, value)` → the value the graph stores for it, or None."""

_EQ = re.compile(r"(?P<lhs>\b[A-Za-z_]\w*\.`?[A-Za-z_]\w*`?)\s*=\s*\$(?P<p>\w+)")
_EQ_REV = re.compile(r"\$(?P<p>\w+)\s*=\s*(?P<lhs>\b[A-Za-z_]\w*\.`?[A-Za-z_]\w*`?)")
_NODE_MAP = re.compile(r"\((?P<var>[A-Za-z_]\w*)(?P<labels>(?::`?\w+`?)+)\s*\{(?P<map>[^{}]*)\}\)")
_MAP_ITEM = re.compile(r"`?(?P<k>[A-Za-z_]\w*)`?\s*:\s*\$(?P<p>\w+)")
_CLAUSE = re.compile(
    r"\b(RETURN|WITH|ORDER\s+BY|MATCH|OPTIONAL\s+MATCH|UNWIND|LIMIT|SKIP|UNION|CALL)\b", re.I
)
_WHERE = re.compile(r"\bWHERE\b", re.I)
_AND = re.compile(r"\s+AND\s+", re.I)


@dataclass(frozen=True)
class Relaxed:
    """A relaxed query, its parameters, and what was relaxed (in words)."""

    cypher: str
    params: dict[str, Any]
    how: str


def with_values(cypher: str, params: Mapping[str, Any]) -> str:
    """`cypher` as people read it: each parameter written as its value (display only)."""

    def lit(m: re.Match[str]) -> str:
        if m[1] not in params:
            return m.group(0)
        v = params[m[1]]
        if isinstance(v, str):
            return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return repr(v)

    return re.sub(r"\$(\w+)", lit, cypher)


def own_params(cypher: str, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The guard's reserved parameters (`$__s0`, its literals) renamed `$relax_s0`, so the
    relaxed query can pass the guard again."""
    names = {p: "relax_" + p.lstrip("_") for p in params if p.startswith("__")}
    out = re.sub(r"\$(\w+)", lambda m: "$" + names.get(m[1], m[1]), cypher)
    return out, {names.get(k, k): v for k, v in params.items()}


def _prop(lhs: str) -> str:
    return lhs.split(".", 1)[1].strip("`")


def _string_eqs(cypher: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(property, parameter) of each equality of a property with a string parameter."""
    out = []
    for pattern in (_EQ, _EQ_REV):
        out += [(_prop(m["lhs"]), m["p"]) for m in pattern.finditer(cypher)]
    for m in _NODE_MAP.finditer(cypher):
        out += [(i["k"], i["p"]) for i in _MAP_ITEM.finditer(m["map"])]
    return [(k, p) for k, p in out if isinstance(params.get(p), str)]


def as_stored(cypher: str, params: Mapping[str, Any], stored: Aligner) -> Relaxed | None:
    """The string values compared for equality replaced by the values the graph stores."""
    new, said = dict(params), []
    for prop, p in _string_eqs(cypher, params):
        value = stored(prop, params[p])
        if value is not None and value != params[p]:
            new[p] = value
            said.append(f"{params[p]!r} as stored: {prop} = {value!r}")
    return Relaxed(cypher, new, "; ".join(said)) if said else None


def loosened(cypher: str, params: Mapping[str, Any]) -> Relaxed | None:
    """String equality made case-insensitive containment (node maps moved into WHERE)."""
    strings = {p for _, p in _string_eqs(cypher, params)}
    if not strings:
        return None
    conds: list[str] = []

    def item(m: re.Match[str], var: str) -> str:
        if m["p"] in strings:
            conds.append(f"toLower({var}.{m['k']}) CONTAINS toLower(${m['p']})")
            return ""
        return m.group(0)

    def node(m: re.Match[str]) -> str:
        rest = [i for i in (_MAP_ITEM.sub(lambda x: item(x, m["var"]), m["map"]).split(","))
                if i.strip()]  # fmt: skip
        body = " {" + ", ".join(i.strip() for i in rest) + "}" if rest else ""
        return f"({m['var']}{m['labels']}{body})"

    out = _NODE_MAP.sub(node, cypher)
    for pattern in (_EQ, _EQ_REV):
        out = pattern.sub(
            lambda m: (
                f"toLower({m['lhs']}) CONTAINS toLower(${m['p']})"
                if m["p"] in strings
                else m.group(0)
            ),
            out,
        )
    if conds:
        out = _add_where(out, " AND ".join(conds))
    if out == cypher:
        return None
    shown = ", ".join(f"{params[p]!r}" for p in sorted(strings))
    return Relaxed(out, dict(params), f"{shown} matched case-insensitively (CONTAINS)")


def _add_where(cypher: str, cond: str) -> str:
    """`cypher` with `cond` added to its first MATCH's WHERE (made when there is none)."""
    m = re.search(r"\bMATCH\b", cypher, re.I)
    start = m.end() if m else 0
    nxt = _CLAUSE.search(cypher, start)
    where = _WHERE.search(cypher, start)
    if where is not None and (nxt is None or where.start() < nxt.start()):
        return f"{cypher[: where.end()]} {cond} AND{cypher[where.end() :]}"
    at = nxt.start() if nxt is not None else len(cypher)
    return f"{cypher[:at].rstrip()} WHERE {cond} {cypher[at:]}".rstrip()


def without_each_filter(cypher: str, params: Mapping[str, Any]) -> list[Relaxed]:
    """The query without each conjunct of its first WHERE clause, when it has several (what
    was dropped said with its parameters' values)."""
    where = _WHERE.search(cypher)
    if where is None:
        return []
    nxt = _CLAUSE.search(cypher, where.end())
    end = nxt.start() if nxt is not None else len(cypher)
    body = cypher[where.end() : end]
    if body.count("(") != body.count(")") or re.search(r"\bOR\b|\bNOT\b", body, re.I):
        return []  # only a plain conjunction is split
    parts = [p.strip() for p in _AND.split(body.strip())]
    if len(parts) < 2:
        return []
    out = []
    for i, dropped in enumerate(parts):
        kept = " AND ".join(p for j, p in enumerate(parts) if j != i)
        text = f"{cypher[: where.end()]} {kept} {cypher[end:]}".rstrip()
        said = re.sub(r"\$(\w+)", lambda m: repr(params.get(m[1], m[0])), dropped)
        out.append(
            Relaxed(re.sub(r"\s{2,}", " ", text), dict(params), f"without the filter {said}")
        )
    return out
