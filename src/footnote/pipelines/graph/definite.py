""" "The customer from Madrid" when Madrid holds three customers: a definite reference that its
value does not narrow to one node is asked back, with the nodes it could mean.

A question saying "the <label> from|in|based in|located in|of <Value>" refers to one node of
that label. The value is aligned to a stored value of one of the label's properties (exactly,
by keywords or by sound; never by vectors), and the nodes holding it are listed by a guarded,
parameterised query run as the caller (row permissions apply, so nobody learns of a node they
may not see). Two or more make the reference ambiguous. A plural ("the customers from
Madrid") asks for all of them and is left alone. English only: Chinese labels have no words in
a spec to meet ("德国那家供应商" reaches the ladder as before).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from footnote.index.graph.align import EntityIndex
from footnote.pipelines.graph.clarify import Signal
from footnote.store.graph.base import GraphSpec, GraphStore
from footnote.verify.cypher.guard import GraphGuard, Principal

DEFINITE_STRENGTH = 1.0
"""Several nodes for a reference the question makes to one: the reading is unknown."""
MAX_SHOWN = 5
_REFERENCE = re.compile(
    r"\bthe\s+(?P<noun>[A-Za-z]+)\s+(?P<prep>from|in|based in|located in|of)\s+"
    r"(?P<value>[A-Z][\w'’.&-]*(?:\s+[A-Z][\w'’.&-]*)*)"
)

Holders = Callable[[str, str, str], list[str]]
"""(label, property, value) → the names of the nodes holding it (at most MAX_SHOWN + 1)."""


def references(question: str, spec: GraphSpec) -> list[tuple[str, str, str]]:
    """(label, the phrase, the value's text) of each definite singular reference to a label."""
    labels = {lab.lower(): lab for lab in spec.nodes}
    out = []
    for m in _REFERENCE.finditer(question):
        if label := labels.get(m.group("noun").lower()):
            out.append((label, m.group(0), m.group("value").rstrip(".'’")))
    return out


def definite_signals(
    question: str, spec: GraphSpec, index: EntityIndex, holders: Holders
) -> list[Signal]:
    """One signal per definite reference whose value several nodes of its label hold."""
    out = []
    for label, phrase, text in references(question, spec):
        a = index.align_value(text, [label])
        best = a.best
        if best is None or a.ambiguous or best.method == "vector" or not best.entity.prop:
            continue
        names = holders(label, best.entity.prop, best.entity.key)
        if len(names) < 2:
            continue
        more = len(names) > MAX_SHOWN
        shown = names[:MAX_SHOWN]
        listed = ", ".join(shown[:-1]) + (", …" if more else f" or {shown[-1]}")
        says = (
            f"{phrase!r} could mean {'more than ' if more else ''}{len(shown)} "
            f"{label} nodes with {best.entity.prop} {best.entity.key}: {listed}. "
            "Which one did you mean?"
        )
        out.append(Signal("definite", DEFINITE_STRENGTH, says, tuple(shown)))
    return out


def guarded_holders(
    guard: GraphGuard, store: GraphStore, principal: Principal, timeout_s: float
) -> Holders:
    """`Holders` by a parameterised query through the guard, as `principal`."""

    def holders(label: str, prop: str, value: str) -> list[str]:
        node = store.spec.nodes[label]
        cypher = (
            f"MATCH (n:`{label}`) WHERE n.`{prop}` = $value "
            f"RETURN n.`{node.name or node.key}` AS name LIMIT {MAX_SHOWN + 1}"
        )
        v = guard.check(cypher, {"value": value}, principal)
        if not v.ok:
            return []
        rows = store.query(v.cypher, v.params, limit=MAX_SHOWN + 1, timeout_s=timeout_s)
        return _names([r[0] for r in rows.rows])

    return holders


def _names(cells: Sequence[object]) -> list[str]:
    return list(dict.fromkeys(str(c) for c in cells if c is not None))
