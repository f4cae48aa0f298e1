"""What to tell the `cypher` model about a rejected query beyond the engine's message.

The engine says where parsing stopped ("Invalid input < MATCH>: expected rule iC_Statements"),
which the small model cannot act on: it sends the same query back. Two of its mistakes recur
on questions about several entities, and each has one Cypher form; the retry names it, with
the query's own variables, labels and parameters:

- several statements, one per entity (`MATCH … RETURN … MATCH … RETURN …`): one MATCH with
  `IN [$a, $b]`, returning what tells the rows apart;
- SQL (`SELECT`, `INTERSECT`, `GROUP BY`, `JOIN`): what two entities share is one pattern
  through both.

A hint is advice in the prompt; the retried query is guarded like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from footnote.store.graph.base import GraphSpec

_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_SQL = re.compile(r"\b(SELECT|INTERSECT|EXCEPT|GROUP\s+BY|JOIN|HAVING)\b", re.I)


def _code(cypher: str) -> str:
    """The query with its string literals blanked (keywords inside a name are not code)."""
    return _STRING.sub("''", cypher)


def several_statements(cypher: str) -> bool:
    """Whether a RETURN is followed by another MATCH at the top level without a UNION
    between them (Cypher runs one statement)."""
    code, depth, returned = _code(cypher), 0, False
    for m in re.finditer(r"[({\[]|[)}\]]|\b(?:RETURN|UNION|(?:OPTIONAL\s+)?MATCH)\b", code, re.I):
        tok = m.group(0)
        if tok in "({[":
            depth += 1
        elif tok in ")}]":
            depth = max(0, depth - 1)
        elif depth == 0:
            word = tok.split()[-1].upper()
            if word == "RETURN":
                returned = True
            elif word == "UNION":
                returned = False
            elif returned:
                return True
    return False


def _compared(cypher: str, param: str) -> tuple[str, str] | None:
    """How the query compares `$param`: (variable, property), from `v.prop = $param` or
    `(v:Label {prop: $param})`."""
    p = re.escape(param)
    m = re.search(rf"\b(\w+)\.(\w+)\s*=\s*\${p}\b", cypher) or re.search(
        rf"\((\w+)\s*:\s*`?\w+`?\s*\{{[^}}]*?\b(\w+)\s*:\s*\${p}\b", cypher
    )
    return (m.group(1), m.group(2)) if m else None


def _label_of(cypher: str, var: str) -> str:
    m = re.search(rf"\(\s*{re.escape(var)}\s*:\s*`?(\w+)`?", cypher)
    return m.group(1) if m else ""


def _relationship_to(cypher: str, var: str) -> tuple[str, str] | None:
    """The type of a relationship the query draws into `var`'s node, and its direction as
    seen from the other end (`->` or `<-`)."""
    v = re.escape(var)
    if m := re.search(rf"-\[\s*\w*\s*:\s*`?(\w+)`?[^\]]*\]->\s*\(\s*{v}\b", cypher):
        return m.group(1), "->"
    if m := re.search(rf"\(\s*{v}\b[^)]*\)\s*<-\[\s*\w*\s*:\s*`?(\w+)`?[^\]]*\]-", cypher):
        return m.group(1), "->"
    if m := re.search(rf"\(\s*{v}\b[^)]*\)\s*-\[\s*\w*\s*:\s*`?(\w+)`?[^\]]*\]-(?!>)", cypher):
        return m.group(1), "->"  # (v)-[:R]-(x): undirected, written from the other end
    if m := re.search(rf"<-\[\s*\w*\s*:\s*`?(\w+)`?[^\]]*\]-\s*\(\s*{v}\b", cypher):
        return m.group(1), "<-"
    if m := re.search(rf"\(\s*{v}\b[^)]*\)\s*-\[\s*\w*\s*:\s*`?(\w+)`?[^\]]*\]->", cypher):
        return m.group(1), "<-"
    return None


def _same_kind(params: Iterable[str]) -> list[str]:
    """The parameters named alike (`product`, `product2`, `product3`): aligned entities of
    one label, as `cypher.param_names` names them."""
    groups: dict[str, list[str]] = {}
    for name in params:
        groups.setdefault(re.sub(r"\d+$", "", name), []).append(name)
    return max(groups.values(), key=len, default=[])


def _name_of(spec: GraphSpec | None, label: str) -> str:
    """The property that names a node of `label` ("" when unknown)."""
    node = spec.nodes.get(label) if spec is not None else None
    return (node.name or node.key) if node is not None else ""


def _one_statement(cypher: str, names: list[str], spec: GraphSpec | None) -> str:
    how = _compared(cypher, names[0])
    var, prop = how if how else ("n", "<key>")
    listed = ", ".join(f"${n}" for n in names)
    named = _name_of(spec, _label_of(cypher, var))
    shown = f"`{var}.{named}`" if named else "the entity's name"
    return (
        "Cypher runs one statement: never one MATCH … RETURN per entity. For several entities "
        f"at once write one MATCH with `WHERE {var}.{prop} IN [{listed}]` and RETURN {shown} "
        "beside what was asked, so each row says which entity it is."
    )


def _shared(cypher: str, names: list[str], spec: GraphSpec | None) -> str:
    a, b = names[0], names[1]
    how = _compared(cypher, a)
    var, prop = how if how else ("n", "<key>")
    label = _label_of(cypher, var)
    rel = _relationship_to(cypher, var)
    node = f":{label}" if label else ""
    r = f"[:{rel[0]}]" if rel else "[:REL]"
    left, right = (f"-{r}->", f"<-{r}-") if not rel or rel[1] == "->" else (f"<-{r}-", f"-{r}->")
    x, shown = "x", "x"
    rel_type = spec.relationships.get(rel[0]) if spec is not None and rel else None
    if rel_type is not None:  # the shared node is the relationship's other end
        other = rel_type.source if rel_type.target == label else rel_type.target
        named = _name_of(spec, other)
        x, shown = f"x:{other}", f"x.{named} AS {named}" if named else "x"
    pattern = f"(a{node}){right}({x}){left}(b{node})"
    return (
        "SQL is not Cypher: there is no SELECT, INTERSECT, GROUP BY or JOIN. What two "
        f"entities share is one pattern through both: `MATCH {pattern} WHERE a.{prop} = ${a} "
        f"AND b.{prop} = ${b} RETURN DISTINCT {shown}`."
    )


def fix_hint(cypher: str, params: Iterable[str], spec: GraphSpec | None = None) -> str:
    """Advice for retrying `cypher` ("" when the query shows none of the known mistakes);
    `params`: the names of the parameters the model was given; `spec`: the schema, for the
    labels and naming properties the advice writes out."""
    names = _same_kind(params)
    code = _code(cypher)
    if _SQL.search(code):
        if len(names) >= 2:
            return _shared(cypher, names, spec)
        return "SQL is not Cypher: there is no SELECT, INTERSECT, GROUP BY or JOIN."
    if several_statements(cypher):
        if len(names) >= 2:
            return _one_statement(cypher, names, spec)
        return "Cypher runs one statement: one MATCH … RETURN (or parts joined by UNION)."
    return ""
