""" "The customer from Madrid" when Madrid holds three customers: a definite reference that its
value does not narrow to one node is asked back, with the nodes it could mean.

A question saying "the <label> from|in|based in|located in|of <Value>" refers to one node of
that label. The value is aligned to a stored value of one of the label's properties (exactly,
by keywords or by sound; never by vectors), and the nodes holding it are listed by a guarded,
parameterised query run as the caller (row permissions apply, so nobody learns of a node they
may not see). Two or more make the reference ambiguous. A plural ("the customers from
Madrid") asks for all of them and is left alone. In Chinese, "德国那家供应商" (a classifier
after 那 makes it one node; "那些" or no 那 asks for all): the label is met through the
Chinese words of `clarify.ZH_SCHEMA`, the value by its translation (`index.graph.places`)
or as stored.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from footnote.index.graph.align import EntityIndex
from footnote.pipelines.graph import wording
from footnote.pipelines.graph.clarify import ZH_SCHEMA, Signal
from footnote.store.graph.base import GraphSpec, GraphStore
from footnote.verify.cypher.guard import GraphGuard, Principal

DEFINITE_STRENGTH = 1.0
"""Several nodes for a reference the question makes to one: the reading is unknown."""
MAX_SHOWN = 5
_REFERENCE = re.compile(
    r"\bthe\s+(?P<noun>[A-Za-z]+)\s+(?P<prep>from|in|based in|located in|of)\s+"
    r"(?P<value>[A-Z][\w'’.&-]*(?:\s+[A-Z][\w'’.&-]*)*)"
)

_REFERENCE_ZH = re.compile(
    r"(?P<value>[\u4e00-\u9fffA-Za-z][\u4e00-\u9fffA-Za-z'’.&\s-]*?)\s*的?那一?"
    r"(?:家|个|位|名|款|部|本|件|条|间|座)(?P<noun>[\u4e00-\u9fff]{1,4})"
)
"""A Chinese reference to one node: "德国那家供应商", "来自柏林的那家供应商"."""
_ZH_FROM = re.compile(r"^.*?(?P<from>来自|位于|总部在|在)")
_ZH_MIN_VALUE = 2
"""The fewest characters a Chinese value is tried with (one character names no place)."""

Holders = Callable[[str, str, str], list[str]]
"""(label, property, value) → the names of the nodes holding it (at most MAX_SHOWN + 1)."""


def references(question: str, spec: GraphSpec) -> list[tuple[str, str, str]]:
    """(label, the phrase, the value's text) of each definite singular reference to a label.
    In Chinese the value is the text before "(的)那家…" (after 来自/位于/在 when said), and
    the label the longest head of the noun that `ZH_SCHEMA` names it by."""
    labels = {lab.lower(): lab for lab in spec.nodes}
    out = []
    for m in _REFERENCE.finditer(question):
        if label := labels.get(m.group("noun").lower()):
            out.append((label, m.group(0), m.group("value").rstrip(".'’")))
    for m in _REFERENCE_ZH.finditer(question):
        noun = m.group("noun")
        heads = (noun[:n] for n in range(len(noun), 0, -1))
        label = next((lab for h in heads if (lab := labels.get(ZH_SCHEMA.get(h, "")))), None)
        raw = m.group("value")
        said_from = _ZH_FROM.match(raw)
        value = (raw[said_from.end() :] if said_from else raw).strip()
        if label is not None and value:
            at = said_from.start("from") if said_from else raw.find(value)
            phrase = question[m.start("value") + at : m.end("noun")]
            phrase = phrase[: phrase.rfind(noun)] + _zh_label_word(noun, label)
            out.append((label, phrase, value))
    return out


def _zh_label_word(noun: str, label: str) -> str:
    """The head of `noun` that names `label` ("供应商供" → "供应商")."""
    for n in range(len(noun), 0, -1):
        if ZH_SCHEMA.get(noun[:n], "") == label.lower():
            return noun[:n]
    return noun


def _values_to_try(text: str) -> list[str]:
    """The value as written, then (Chinese) its shorter tails: "请问德国" → 请问德国, 问德国, 德国."""
    if not any("\u4e00" <= ch <= "\u9fff" for ch in text):
        return [text]
    return [text[i:] for i in range(0, max(1, len(text) - _ZH_MIN_VALUE + 1))]


def definite_signals(
    question: str, spec: GraphSpec, index: EntityIndex, holders: Holders
) -> list[Signal]:
    """One signal per definite reference whose value several nodes of its label hold."""
    out = []
    for label, phrase, written in references(question, spec):
        for text in _values_to_try(written):
            a = index.align_value(text, [label])
            best = a.best
            if best is not None and not a.ambiguous and best.method != "vector":
                break
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
        zh = wording.definite(phrase, more, label, best.entity.prop, str(best.entity.key), shown)
        out.append(Signal("definite", DEFINITE_STRENGTH, says, tuple(shown), zh))
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
