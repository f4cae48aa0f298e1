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
) -> list[Message]:
    """System prompt with the schema of `spec` (possibly pruned) and `examples` (default: the
    first ones, `examples_text`); the question with its parameters."""
    system = render(
        "graph_cypher",
        schema=spec.describe(),
        examples=examples if examples is not None else examples_text(spec),
    )
    keys = {k: spec.nodes[k].key for k in spec.nodes}
    plist = "\n".join(f"- ${p}: {desc}" for p, (_, desc) in params.items())
    user = f"Question: {question}"
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
    leading `EXPLAIN`)."""
    m = _FENCE.search(text)
    body = m.group(1) if m else text
    body = re.sub(r"^\s*(cypher|query)\s*:\s*", "", body.strip(), flags=re.I)
    # a leading EXPLAIN is the model imitating the checks (the guard runs EXPLAIN itself)
    body = re.sub(r"^\s*EXPLAIN\s+", "", body, flags=re.I)
    return body.strip().rstrip(";").strip()
