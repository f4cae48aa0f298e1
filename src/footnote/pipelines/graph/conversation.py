"""Graph questions in a conversation: the turns kept, and what a follow-up takes from them.

A turn keeps the user's words, the answer, the query that answered and the entities it was
about. A follow-up ("and which of them were born after 1960?") is understood from the
history and the question: the `understand` role sees the last turns and writes a standalone
rewrite and sub-questions; without it, rules do both (the previous question joined to this
one; parts split at "and which/who/…", "；", a second "?"). The entities of the previous turn
are carried when the question refers back or names none of its own, and the Cypher model is
shown the previous turn (question, answer, query) as evidence beside the user's words —
never in their place: answers and displays use the user's own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from footnote.index.graph.align import Alignment, EntityIndex
from footnote.store.graph.base import GraphSpec

MAX_TURNS = 4
"""Turns of history shown to the models (the oldest are dropped)."""
_BACK_EN = re.compile(
    r"^\s*(?:and|but|also|so|what about|how about)\b|\b(?:them|they|those|these|their|theirs|"
    r"he|she|him|her|his|hers|it|its|that one|the same)\b",
    re.I,
)
_BACK_ZH = re.compile(
    r"^(?:那|那么|还有|而且)|他们|她们|它们|其中|这些|那些|他|她|它|该片|此片|同一"
)
_PARTS = re.compile(
    r"(?:\?|？|;|；)\s*(?=\S)|,?\s+and\s+(?=(?:which|who|what|when|where|how|whose)\b)", re.I
)


@dataclass(frozen=True)
class GraphTurn:
    """One answered (or not) question of a conversation."""

    question: str
    answer: str = ""
    cypher: str = ""
    entities: tuple[tuple[str, str], ...] = ()
    """(label, key) of the nodes the turn was about (its aligned entities)."""


def refers_back(question: str) -> bool:
    """True when the question leans on an earlier turn ("and which of them …", "他们")."""
    return bool(_BACK_EN.search(question) or _BACK_ZH.search(question))


def parts(question: str) -> list[str]:
    """The question's parts when it asks several things ("Who directed X and when was it
    released?" → two); one part otherwise."""
    pieces = [p.strip(" ,") for p in _PARTS.split(question) if p.strip(" ,?？")]
    return pieces if len(pieces) > 1 else []


def standalone(question: str, history: Sequence[GraphTurn]) -> str:
    """The rules' standalone reading: a follow-up prefixed with the question it follows."""
    if not history or not refers_back(question):
        return question
    return f"{history[-1].question} — then: {question}"


def history_text(history: Sequence[GraphTurn], with_cypher: bool = False) -> str:
    """The last turns as text for a prompt (oldest first)."""
    lines = []
    for t in history[-MAX_TURNS:]:
        lines.append(f"User: {t.question}")
        if with_cypher and t.cypher:
            lines.append(f"Query: {t.cypher}")
        lines.append(f"Answer: {t.answer or '(none)'}")
    return "\n".join(lines)


def turn_data(turn: GraphTurn) -> dict[str, Any]:
    """A turn as the data of its run's `turn` span (how a session's history is kept)."""
    return {
        "question": turn.question,
        "answer": turn.answer,
        "cypher": turn.cypher,
        "entities": [list(e) for e in turn.entities],
    }


def turn_from_data(data: Mapping[str, Any]) -> GraphTurn:
    """The turn recorded by `turn_data`."""
    about = tuple((str(e[0]), str(e[1])) for e in data.get("entities", []) if len(e) == 2)
    return GraphTurn(
        str(data.get("question", "")), str(data.get("answer", "")), str(data.get("cypher", "")),
        about,
    )  # fmt: skip


def turn_from_events(question: str, events: Iterable[tuple[str, Mapping[str, Any]]]) -> GraphTurn:
    """A turn rebuilt from a recorded run's events (`entities`, `answer`): how a server keeps
    a conversation in its run store, across requests and replicas."""
    answer = cypher = ""
    about: tuple[tuple[str, str], ...] = ()
    for kind, data in events:
        if kind == "entities":
            best = [a["candidates"][0] for a in data.get("aligned", []) if a.get("candidates")]
            about = tuple((str(c["label"]), str(c["key"])) for c in best)
        elif kind == "answer":
            answer, cypher = str(data.get("text", "")), str(data.get("cypher", ""))
    return GraphTurn(question, answer, cypher, about)


def carried(
    index: EntityIndex,
    spec: GraphSpec,
    question: str,
    history: Sequence[GraphTurn],
    found: Sequence[Alignment],
) -> list[Alignment]:
    """The previous turn's entities, for a follow-up that refers back or names none of its
    own (an entity of a label named now replaces the earlier one)."""
    if not history or (found and not refers_back(question)):
        return []
    have = {a.best.entity.label for a in found if a.best}
    out = []
    for label, key in history[-1].entities:
        if label in have or label not in spec.nodes:
            continue
        a = index.align(key, [label])
        if a.best is not None and a.best.method == "exact":
            out.append(Alignment(key, a.candidates[:1]))
    return out


def prior_names(index: EntityIndex, history: Sequence[GraphTurn]) -> list[str]:
    """The names of the previous turn's entities: what a follow-up's "other ones" are other
    than (`others.without_prior`)."""
    out = []
    for label, key in history[-1].entities if history else ():
        a = index.align(key, [label])
        if a.best is not None and a.best.method == "exact":
            out.append(a.best.entity.name)
    return out
