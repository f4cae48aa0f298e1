"""Prompts for model-written Cypher, and reading the query out of the model's reply.

Aligned entities reach the model as named parameters (`$person` = the Person whose name
is "Keanu Reeves"), so a query never needs the user's text inside it.
"""

from __future__ import annotations

import re
from typing import Any

from footnote.index.graph.align import Candidate
from footnote.models.base import Message
from footnote.prompts import render
from footnote.store.graph.base import GraphSpec

DIALECTS = {
    "ladybug": (
        "embedded LadybugDB (Kuzu)",
        "`label(r)` for a relationship's type and `label(n)` for a node's label (no `type()` "
        "or `labels()`); no `shortestPath()`; `size()` for lists and `count()` for rows.",
    ),
    "falkordb": (
        "FalkorDB",
        "`type(r)` for a relationship's type and `labels(n)` for a node's labels (no "
        "`label()`); `size()` for lists and `count()` for rows.",
    ),
}
"""Backend → (engine name, dialect notes) for the Cypher prompt."""
_FENCE = re.compile(r"```(?:cypher|sql|[a-z]*)?\s*\n?(.*?)```", re.S | re.I)


def param_names(entities: dict[str, Candidate | None]) -> dict[str, tuple[Any, str]]:
    """`{param: (value, description)}` for aligned entities, named after their labels."""
    out: dict[str, tuple[Any, str]] = {}
    for cand in entities.values():
        if cand is None:
            continue
        e = cand.entity
        base = re.sub(r"\W+", "_", e.label.lower()).strip("_") or "entity"
        name, n = base, 2
        while name in out:
            name, n = f"{base}{n}", n + 1
        out[name] = (e.key, f"the {e.label} {e.name!r} (its key)")
    return out


def examples_text(spec: GraphSpec, limit: int = 8) -> str:
    """A few question → Cypher examples (intents' templates first)."""
    lines: list[str] = []
    for intent in list(spec.intents.values())[:limit]:
        lines.append(f"Question: {intent.description}\n```cypher\n{intent.cypher}\n```")
    for ex in spec.examples[: max(0, limit - len(lines))]:
        lines.append(f"Question: {ex.question}\n```cypher\n{ex.cypher}\n```")
    return "\n\n".join(lines) or "(none)"


def cypher_messages(
    spec: GraphSpec,
    question: str,
    params: dict[str, tuple[Any, str]],
    previous: str = "",
    error: str = "",
    *,
    examples: str | None = None,
    reading: str = "",
    backend: str = "ladybug",
    history: str = "",
) -> list[Message]:
    """System prompt with the schema of `spec` (possibly pruned) and `examples` (default: the
    first ones, `examples_text`); the user's question with its parameters, and `reading` (the
    understanding's rewrite) as evidence beside it, never in its place. The dialect notes
    are those of `backend` (the store's engine). `history`: the conversation's earlier turns
    (question, query, answer), for what a follow-up refers to."""
    engine, dialect = DIALECTS.get(backend, DIALECTS["ladybug"])
    system = render(
        "graph_cypher",
        schema=spec.describe(),
        examples=examples if examples is not None else examples_text(spec),
        engine=engine,
        dialect=dialect,
    )
    keys = {k: spec.nodes[k].key for k in spec.nodes}
    plist = "\n".join(f"- ${p}: {desc}" for p, (_, desc) in params.items())
    user = f"Question: {question}"
    if history:
        user = f"Earlier turns (for what the question refers to):\n{history}\n\n{user}"
    if reading and " ".join(reading.split()) != " ".join(question.split()):
        user += (
            "\nA reading of the question (a rewrite, possibly wrong; answer the question above): "
            + " ".join(reading.split())
        )
    if plist:
        user += f"\nParameters (compare them with the node's key property {keys}):\n{plist}"
    msgs = [Message("system", system), Message("user", user)]
    if previous:
        msgs += [
            Message("assistant", f"```cypher\n{previous}\n```"),
            Message(
                "user", f"That query was rejected: {error}\nFix it. Reply with the query only."
            ),
        ]
    return msgs


def extract_cypher(text: str) -> str:
    """The query in a model reply: the first fenced block, else the text itself (without a
    leading `EXPLAIN`), with the small model's habits the engine refuses repaired
    (`repaired`). The guard checks the result like any other query."""
    m = _FENCE.search(text)
    body = m.group(1) if m else text
    body = re.sub(r"^\s*(cypher|query)\s*:\s*", "", body.strip(), flags=re.I)
    # a leading EXPLAIN is the model imitating the checks (the guard runs EXPLAIN itself)
    body = re.sub(r"^\s*EXPLAIN\s+", "", body, flags=re.I)
    return repaired(body.strip().rstrip(";").strip())


STRING_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
"""A Cypher string literal, single- or double-quoted, with escapes."""


def masked_literals(cypher: str) -> str:
    """`cypher` with each string literal's content blanked (same length, quotes kept), so
    patterns over the query never read a name as code."""
    return STRING_LITERAL.sub(lambda m: m[0][0] + "x" * (len(m[0]) - 2) + m[0][-1], cypher)


_OLD_PARAM = re.compile(
    r"(?P<before>(?:[:=<>,(\[+]|\bIN)\s*)\{\s*(?P<name>[A-Za-z_]\w*)\s*\}", re.I
)
_TAIL = re.compile(r"\s+(?:ORDER\s+BY|SKIP|LIMIT)\b", re.I)
_ORDER_FIRST = re.compile(
    r"(?P<head>(?:(?!\b(?:WITH|RETURN|UNION)\b)[\s\S])*?)"
    r"(?P<order>\s+ORDER\s+BY\s+(?:(?!\b(?:RETURN|WITH|UNION|MATCH)\b)[\s\S])+?)"
    r"(?P<ret>\s+RETURN\s+(?:(?!\b(?:SKIP|LIMIT|ORDER)\b)[\s\S])+?)"
    r"(?P<tail>\s+(?:SKIP|LIMIT)\b[\s\S]*)?$",
    re.IGNORECASE,
)
_VARIABLE = re.compile(r"[(\[]\s*(?P<v>[A-Za-z_]\w*)")


def repaired(cypher: str) -> str:
    """`cypher` with Cypher 3's parameter syntax (`{name}` → `$name`), an ORDER BY written
    before the RETURN (moved after the projection) and a missing RETURN (`MATCH (n) SKIP 1
    LIMIT 100` → `… RETURN n SKIP 1 …`, the pattern's variables) put right, outside string
    literals; anything else unchanged."""
    parts = STRING_LITERAL.split(cypher)
    strings = STRING_LITERAL.findall(cypher)
    code = [_OLD_PARAM.sub(lambda m: f"{m['before']}${m['name']}", p) for p in parts]
    text = "".join(c + (strings[i] if i < len(strings) else "") for i, c in enumerate(code))
    bare = " ".join(code)
    if not strings and (m := _ORDER_FIRST.match(text)):  # ORDER BY written before RETURN
        return f"{m['head']}{m['ret']} {m['order'].strip()}{m['tail'] or ''}"
    if re.search(r"\bRETURN\b", bare, re.I) or not re.match(
        r"\s*(?:OPTIONAL\s+)?MATCH\b", bare, re.I
    ):
        return text
    names = list(dict.fromkeys(m["v"] for m in _VARIABLE.finditer(bare)))
    if not names or strings:
        return text
    tail = _TAIL.search(text)
    at = tail.start() if tail else len(text)
    return f"{text[:at]} RETURN {', '.join(names)}{text[at:]}"
