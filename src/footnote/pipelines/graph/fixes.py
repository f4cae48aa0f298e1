"""What to tell the `cypher` model about a rejected query beyond the engine's message, and
the one recurring mistake that has a single mechanical reading, repaired (`one_statement`).

The engine says where parsing stopped ("Invalid input < MATCH>: expected rule iC_Statements"),
which the small model cannot act on: it sends the same query back (dev gd-010, gd-054: five
times each). Its recurring mistakes each have one Cypher form; the retry names it, with the
query's own variables, labels and parameters:

- several statements, one per entity (`MATCH … RETURN … MATCH … RETURN …`): one MATCH with
  `IN [$a, $b]`, returning what tells the rows apart. The model did not follow this advice
  (gd-054), and when the statements differ only in that parameter the repair is mechanical:
  `one_statement` writes it before the guard sees the query;
- SQL (`SELECT`, `INTERSECT`, `GROUP BY`, `JOIN`): what two entities share is one pattern
  through both;
- a variable no pattern binds (`MATCH (c:Category {…}) RETURN count(p)`, dev gd-038: the
  engine's "Variable p is not in scope", five times): bind it through a relationship the
  schema has for the labels the query does bind.

A hint is advice in the prompt; the retried query is guarded like any other.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from footnote.pipelines.graph.cypher import masked_literals
from footnote.pipelines.graph.understand import schema_words
from footnote.store.graph.base import GraphSpec

_UNBOUND = re.compile(r"Variable (\w+) is not in scope|'(\w+)' not defined", re.I)
_LIMIT_TAIL = re.compile(r"\s+LIMIT\s+\d+\s*$", re.I)
_BOUND = re.compile(r"\(\s*(\w+)\s*:\s*`?(\w+)`?")
_SQL = re.compile(r"\b(SELECT|INTERSECT|EXCEPT|GROUP\s+BY|JOIN|HAVING)\b", re.I)


def _statement_starts(cypher: str) -> list[int]:
    """Where each statement after the first begins: a MATCH at the top level after a RETURN
    with no UNION between them (Cypher runs one statement)."""
    code, depth, returned, starts = masked_literals(cypher), 0, False, []
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
                starts.append(m.start())
                returned = False
    return starts


def several_statements(cypher: str) -> bool:
    """Whether the query is several statements written one after another."""
    return bool(_statement_starts(cypher))


def one_statement(cypher: str, spec: GraphSpec) -> str | None:
    """The small model's one statement per entity — the same `MATCH … RETURN` for `$product`,
    `$product2`, `$product3` — as the one statement it means: `WHERE p.productID IN [$product,
    $product2, $product3]`, returning the entity's name first so each row says which it is.
    None when the statements differ in anything but that parameter, or the parameter is not
    compared in one of the two plain forms (`{prop: $p}` on a labelled node, `v.prop = $p`)."""
    cuts = [0, *_statement_starts(cypher), len(cypher)]
    parts = [_LIMIT_TAIL.sub("", cypher[a:b]).strip() for a, b in itertools.pairwise(cuts)]
    if len(parts) < 2:
        return None
    names = [re.findall(r"\$([A-Za-z_]\w*)", p) for p in parts]
    if any(len(n) != 1 for n in names):
        return None
    base = re.sub(r"\d+$", "", names[0][0])
    listed = list(dict.fromkeys(n[0] for n in names))
    if len(listed) != len(parts) or any(re.sub(r"\d+$", "", n) != base for n in listed):
        return None
    one = {
        re.sub(rf"\${re.escape(n)}\b", f"${base}", p) for p, (n,) in zip(parts, names, strict=True)
    }
    if len(one) != 1:
        return None
    text = one.pop()
    if len(re.findall(r"\bRETURN\b", masked_literals(text), re.I)) != 1 or re.search(
        r"\bWITH\b", masked_literals(text), re.I
    ):
        return None
    inside = ", ".join(f"${n}" for n in listed)
    node = re.search(rf"\((\w+)\s*:\s*`?(\w+)`?\s*\{{\s*(\w+)\s*:\s*\${base}\s*\}}\s*\)", text)
    if node:
        var, label, prop = node.groups()
        text = f"{text[: node.start()]}({var}:{label}){text[node.end() :]}"
        ret = re.search(r"\bRETURN\b", text, re.I)
        assert ret is not None
        where = re.search(r"\bWHERE\b", text[: ret.start()], re.I)
        cond = f"{var}.{prop} IN [{inside}]"
        text = (f"{text[: where.end()]} {cond} AND{text[where.end():]}" if where
                else f"{text[: ret.start()]}WHERE {cond} {text[ret.start():]}")  # fmt: skip
    elif cmp := re.search(rf"\b(\w+)\.(\w+)\s*=\s*\${base}\b", text):
        var, prop = cmp.group(1), cmp.group(2)
        text = f"{text[: cmp.start()]}{var}.{prop} IN [{inside}]{text[cmp.end() :]}"
        label = _label_of(text, var)
    else:
        return None
    named = _name_of(spec, label)
    ret = re.search(r"\bRETURN\s+(DISTINCT\s+)?", text, re.I)
    if named and ret and not re.search(rf"\b{var}\.{named}\b", text[ret.end() :]):
        alias = schema_words(label).replace(" ", "_") if label else var
        text = f"{text[: ret.end()]}{var}.{named} AS {alias}, {text[ret.end() :]}"
    return " ".join(text.split())


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


def _unbound(var: str, cypher: str, spec: GraphSpec | None) -> str:
    ways = []
    for bound, label in dict(_BOUND.findall(cypher)).items():
        for name, rel in spec.relationships.items() if spec is not None else ():
            if rel.source == label:
                ways.append(f"({bound})-[:{name}]->({var}:{rel.target})")
            elif rel.target == label:
                ways.append(f"({bound})<-[:{name}]-({var}:{rel.source})")
    how = f", e.g. `{'` or `'.join(ways[:3])}`" if ways else ""
    return f"`{var}` is used but no pattern binds it: bind it in the MATCH{how}."


def fix_hint(
    cypher: str, params: Iterable[str], spec: GraphSpec | None = None, error: str = ""
) -> str:
    """Advice for retrying `cypher` ("" when the query shows none of the known mistakes);
    `params`: the names of the parameters the model was given; `spec`: the schema, for the
    labels and naming properties the advice writes out; `error`: why it was rejected."""
    if m := _UNBOUND.search(error):
        return _unbound(m.group(1) or m.group(2), cypher, spec)
    names = _same_kind(params)
    code = masked_literals(cypher)
    if _SQL.search(code):
        if len(names) >= 2:
            return _shared(cypher, names, spec)
        return "SQL is not Cypher: there is no SELECT, INTERSECT, GROUP BY or JOIN."
    if several_statements(cypher):
        if len(names) >= 2:
            return _one_statement(cypher, names, spec)
        return "Cypher runs one statement: one MATCH … RETURN (or parts joined by UNION)."
    return ""
