"""Template or generation: a whitelisted template answers a question only when its slots capture
every constraint of the question (conservative on purpose: a wrong template answer looks
authoritative, while the generated path can still be right)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from footnote.index.graph.align import Alignment, EntityIndex
from footnote.pipelines.graph.slots import AllowedFn, SlotReading, read_slots, without_spans
from footnote.pipelines.graph.understand import OTHER, GraphUnderstanding, template_misfit
from footnote.store.graph.base import GraphSpec


@dataclass(frozen=True)
class TemplateFit:
    """Whether the understanding's intent template captures the question."""

    why: str
    """Why it does not ("" when it does); a wrong-typed slot value is `slots.error`."""
    slots: SlotReading = field(default_factory=SlotReading)


def template_fit(
    question: str,
    u: GraphUnderstanding,
    found: Sequence[Alignment],
    spec: GraphSpec,
    allowed: AllowedFn,
) -> TemplateFit:
    """The intent's typed slots read from `question`, and why its template would not capture
    the question with these aligned entities."""
    if u.intent == OTHER or u.intent not in spec.intents:
        return TemplateFit("no template intent")
    intent = spec.intents[u.intent]
    slots = read_slots(question, intent.values, allowed, u.intent)
    if slots.error:
        return TemplateFit(slots.error, slots)
    mentions = [m.text for m in u.entities] + [a.mention for a in found]
    mentions += [n for a in found if a.best for n in (a.best.entity.name, a.best.entity.key)]
    distinct = {(a.best.entity.label, a.best.entity.key) for a in found if a.best}
    rest = without_spans(question, slots.spans)  # the slots' cues and values are captured
    why = template_misfit(rest, u.intent, spec, mentions, len(distinct), u.constraints)
    labels = {a.best.entity.label for a in found if a.best}
    missing = [p for p, lab in intent.params.items() if lab not in labels]
    if not why and missing:
        why = f"no entity for the slot(s) {', '.join(missing)}"
    if not why and slots.missing:
        why = f"no value for the slot(s) {', '.join(slots.missing)}"
    return TemplateFit(why, slots)


def model_needed(
    question: str,
    rules: GraphUnderstanding,
    index: EntityIndex,
    spec: GraphSpec,
    allowed: AllowedFn,
) -> str:
    """Why the rules' reading is not enough and the `understand` model must read the question
    ("" when it is): the rules found a template intent, each name they found aligns to one
    node, and the template captures the whole question. (Earlier turns always need the
    model: a standalone rewrite is its work.)"""
    if rules.intent == OTHER:
        return "no template intent by the rules"
    found = [index.align(m.text) for m in rules.entities]
    if any(a.best is None or a.ambiguous for a in found):
        return "a name the rules found does not align to one node"
    fit = template_fit(question, rules, found, spec, allowed)
    return fit.why
