"""Property values read by code for graph QA: the value the graph stores for the user's text
(the relaxation rung's `as_stored`) and the hints the Cypher model is shown ("france" is stored
as Shop.country = 'France'). Aligned exactly, by keywords or by sound, never by vectors."""

from __future__ import annotations

from typing import Any

from footnote.index.graph.align import EntityIndex
from footnote.pipelines.graph.understand import GraphUnderstanding
from footnote.store.graph.base import GraphSpec


def stored_value(index: EntityIndex, spec: GraphSpec, prop: str, text: str) -> str | None:
    """The value the graph stores for `text` as property `prop` (a name or a string value
    without a tie; never by vectors), or None."""
    for a in (index.align_value(text), index.align(text)):
        best = a.best
        if best is None or a.ambiguous or best.method == "vector":  # no guessed values
            continue
        e, node = best.entity, spec.nodes.get(best.entity.label)
        if e.prop == prop:
            return e.key
        if not e.prop and node is not None and prop in (node.name, node.key):
            return e.name if prop == node.name else e.key
    return None


def value_hints(index: EntityIndex, u: GraphUnderstanding, entities: dict[str, Any]) -> list[str]:
    """Constraint values and unaligned mentions that align to a stored property value, as
    lines for the Cypher model."""
    asked = [c.value for c in u.constraints] + [
        m.text for m in u.entities if m.text not in entities
    ]
    out = []
    for text in dict.fromkeys(t for t in asked if t.strip()):
        a = index.align_value(text)
        if a.best is not None and not a.ambiguous:
            e = a.best.entity
            out.append(f"{text!r} is stored as {e.label}.{e.prop} = {e.key!r}")
    return out
