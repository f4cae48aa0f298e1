"""Graph QA understanding: intent, entity mentions, constraints and a standalone question
as one schema-validated object, from the `understand` role or from rules.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from footnote.index.graph_align import EntityIndex
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.models.structured import structured
from footnote.prompts import render
from footnote.store.graph_base import GraphSpec
from footnote.textnorm import normalise

OTHER = "other"
_QUOTED = re.compile(r"[\"“「『'‘]([^\"”」』'’]{2,80})[\"”」』'’]")
_CAPS = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:[A-Z][\w'’.-]*|of|the|de|von|van))*")
_STOP = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "list",
        "show",
        "give",
        "find",
        "tell",
        "name",
        "the",
        "a",
        "an",
        "in",
        "on",
        "of",
        "for",
        "and",
        "or",
        "i",
        "me",
        "my",
        "please",
        "can",
        "could",
    ]
)


class Mention(BaseModel):
    """An entity as written in the question, with the label it probably has."""

    text: str = Field(description="The entity exactly as written in the question.")
    label: str = Field("", description="Node label it belongs to, if known.")


class Constraint(BaseModel):
    """A filter the question states (year > 2000, country = 'France')."""

    property: str
    op: str = Field("=", description="One of =, <>, <, <=, >, >=, contains.")
    value: str


class GraphUnderstanding(BaseModel):
    """What the question asks, as one JSON object."""

    intent: str = Field(description="One of the listed intents, or 'other'.")
    confidence: float = Field(ge=0, le=1, description="How sure the intent is (0–1).")
    entities: list[Mention] = Field(default_factory=list)
    constraints: list[Constraint] = Field(default_factory=list)
    question: str = Field(description="The question rewritten to stand alone, in its language.")


def _labels_of(index: EntityIndex, mention: str) -> set[str]:
    alignment = index.align(mention)
    return {c.entity.label for c in alignment.candidates}


def _guess_mentions(question: str) -> list[str]:
    found = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    for m in _CAPS.finditer(question):
        words = [w for w in m.group(0).split() if w.lower() not in _STOP]
        if words:
            found.append(" ".join(words).strip(".,?!"))
    return list(dict.fromkeys(f for f in found if f))


def understand_by_rules(question: str, spec: GraphSpec, index: EntityIndex) -> GraphUnderstanding:
    """Intent from keyword cues; mentions from known names (or quoted/capitalised words)."""
    q = normalise(question)
    mentions = index.mentions(question) or _guess_mentions(question)
    labels: set[str] = set()
    for m in mentions:
        labels |= _labels_of(index, m)
    best, best_hits = OTHER, 0
    for name, intent in spec.intents.items():
        hits = sum(1 for k in intent.keywords if normalise(k) and normalise(k) in q)
        needs = set(intent.params.values())
        if hits and needs <= labels and hits > best_hits:
            best, best_hits = name, hits
    # a known intent is fairly sure; "other" goes to generation unless the text is too short
    confidence = (0.9 if best_hits > 1 else 0.75) if best != OTHER else 0.6 if len(q) >= 8 else 0.2
    ents = [Mention(text=m, label=next(iter(_labels_of(index, m)), "")) for m in mentions]
    return GraphUnderstanding(
        intent=best, confidence=confidence, entities=ents, question=" ".join(question.split())
    )


def understand_by_model(
    model: RoleModel, question: str, spec: GraphSpec, *, run_id: str | None = None
) -> GraphUnderstanding:
    """The `understand` role's reading of the question (validated; one repair round)."""
    intents = "\n".join(
        f"- {name}: {i.description} (entities: {', '.join(f'{p} as {lab}' for p, lab in i.params.items()) or 'none'})"
        for name, i in spec.intents.items()
    )
    system = render("graph_understand", schema=spec.describe(), intents=intents or "(none)")
    out = structured(
        model, [Message("system", system), Message("user", question)], GraphUnderstanding,
        run_id=run_id, max_tokens=300,
    )  # fmt: skip
    if out.intent not in spec.intents:
        out = out.model_copy(update={"intent": OTHER})
    if not out.question.strip():
        out = out.model_copy(update={"question": question})
    return out
