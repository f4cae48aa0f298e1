"""Relationship arrows turned to the schema's direction before a query runs.

A pattern `(a:Movie)-[:REVIEWED]->(b:Person)` over a schema where Person REVIEWED Movie can
match nothing; the model meant the relationship, not an empty answer. An arrow is turned
only when the schema defines its (single) type the other way and not the way written, from
the labels the pattern's ends carry or their variables got elsewhere in the query. String
literals are masked first, so text inside a value is never read as a pattern.
"""

from __future__ import annotations

import re

from footnote.pipelines.graph.cypher import masked_literals
from footnote.store.graph.base import GraphSpec

_NODE = r"\(\s*(?P<{v}>[A-Za-z_]\w*)?\s*(?::\s*`?(?P<{l}>[A-Za-z_]\w*)`?)?[^()]*\)"
_LABELLED = re.compile(r"\(\s*([A-Za-z_]\w*)\s*:\s*`?([A-Za-z_]\w*)`?")
_STEP = re.compile(
    _NODE.format(v="lv", l="ll")
    + r"\s*(?P<arrow>(?P<into><)?-\s*\[(?P<body>[^\]]*)\]\s*-(?P<out>>)?)\s*(?="
    + _NODE.format(v="rv", l="rl")
    + ")"
)
_TYPES = re.compile(r":\s*`?([A-Za-z_]\w*)`?")


def along_schema(cypher: str, spec: GraphSpec) -> tuple[str, list[str]]:
    """`cypher` with every arrow that runs against the schema turned, and the relationship
    types turned (empty: the query as given)."""
    masked = masked_literals(cypher)
    labels = {v: lab for v, lab in _LABELLED.findall(masked) if lab in spec.nodes}
    edits: list[tuple[int, int, str]] = []
    turned: list[str] = []
    for m in _STEP.finditer(masked):
        if bool(m.group("into")) == bool(m.group("out")):
            continue  # undirected, or both ways
        types = _TYPES.findall(m.group("body").split("*", 1)[0].split("{", 1)[0])
        if len(types) != 1 or "|" in m.group("body") or types[0] not in spec.relationships:
            continue
        rel = spec.relationships[types[0]]
        left = m.group("ll") or labels.get(m.group("lv") or "")
        right = m.group("rl") or labels.get(m.group("rv") or "")
        start, end = (right, left) if m.group("into") else (left, right)
        if _fits(rel.source, rel.target, start, end) or not _fits(
            rel.source, rel.target, end, start
        ):
            continue
        body = cypher[m.start("body") : m.end("body")]
        edits.append((m.start("arrow"), m.end("arrow"), _arrow(body, into=not m.group("into"))))
        turned.append(types[0])
    for a, b, text in sorted(edits, reverse=True):
        cypher = cypher[:a] + text + cypher[b:]
    return cypher, turned


def _fits(source: str, target: str, start: str | None, end: str | None) -> bool:
    """Whether a relationship from `source` to `target` can run from `start` to `end` (an end
    with no known label fits anything; two unknown ends tell nothing and count as fitting)."""
    if start is None and end is None:
        return True
    return (start is None or start == source) and (end is None or end == target)


def _arrow(body: str, *, into: bool) -> str:
    return f"<-[{body}]-" if into else f"-[{body}]->"
