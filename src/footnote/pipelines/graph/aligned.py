"""The nodes a graph question names: its understanding's mentions aligned to the graph, with
the names in the user's own words that the understanding dropped, and a follow-up's carried
entities.

A mention's label is the model's reading when the model read the question (the rules' label
is only the index's first guess). Names the index finds in the question itself (and Latin runs
in a Chinese question) count even when the understanding dropped them. Close vector scores
say "maybe not an entity at all" (e5 squeezes cosines): those are dropped; only exact or
keyword ties are real ambiguity worth asking back about. Items of a list of quoted values
("'Anne', 'John', 'Bill'") are data for the query, not names to resolve: only one that names a
node exactly stays. A mention that is a label's own name ("products", "the movies") names the
kind asked about, not a node: it is not aligned (dev gd-033: "products" met the category
Dairy Products by keyword, and the average price of the wrong category was computed)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from footnote.index.graph.align import Alignment, EntityIndex
from footnote.pipelines.graph.conversation import GraphTurn, carried
from footnote.pipelines.graph.outcome import latin_runs
from footnote.pipelines.graph.understand import GraphUnderstanding, schema_words
from footnote.store.graph.base import GraphSpec
from footnote.textnorm import normalise

_ITEM = r"(?:'[^'\n]{1,60}'|\"[^\"\n]{1,60}\"|[‘“][^’”\n]{1,60}[’”])"
_LIST = re.compile(rf"{_ITEM}(?:\s*[,，、]\s*{_ITEM}){{2,}}")
"""Three or more quoted values in a row, separated by commas: a list the question writes."""


def quoted_list(question: str) -> list[str]:
    """The items of each list of three or more quoted values the question writes."""
    return [item[1:-1].strip() for m in _LIST.finditer(question)
            for item in re.findall(_ITEM, m.group(0))]  # fmt: skip


def names_a_kind(mention: str, spec: GraphSpec) -> bool:
    """Whether `mention` is a label's own name, singular or plural ("products", "the Movie",
    "order details", "categories"): the kind of node asked about, not one node."""
    text = re.sub(r"^(?:the|all|every|each)\s+", "", " ".join(normalise(mention).split()))
    for label in spec.nodes:
        w = schema_words(label)
        if text in (w, f"{w}s", f"{w}es") or (w.endswith("y") and text == f"{w[:-1]}ies"):
            return True
    return False


def align_mentions(
    index: EntityIndex,
    spec: GraphSpec,
    u: GraphUnderstanding,
    method: str,
    question: str,
    history: Sequence[GraphTurn] = (),
) -> list[Alignment]:
    """The aligned mentions of `question` (read as `u`, by `method`), ties kept, vector ties
    dropped, a follow-up's carried entities added."""

    def kind_only(mention: str) -> bool:  # a label's name that is no node's exact name
        if not names_a_kind(mention, spec):
            return False
        return not any(c.method == "exact" for c in index.align(mention).candidates)

    aligned: list[Alignment] = [
        index.align(m.text, [m.label] if method == "model" and m.label in spec.nodes else None)
        for m in u.entities
        if not kind_only(m.text)
    ]
    said = {normalise(a.mention) for a in aligned if a.candidates}
    known = {(a.best.entity.label, a.best.entity.key) for a in aligned if a.best}
    for m in [*index.mentions(question), *latin_runs(question)]:
        if kind_only(m):
            continue
        extra = index.align(m)
        if any(m in s or s in m for s in said) or extra.best is None:
            continue
        if (extra.best.entity.label, extra.best.entity.key) not in known:
            aligned.append(extra)
    aligned = [a if a.candidates or not a.mention else index.align(a.mention) for a in aligned]
    found = [
        a for a in aligned if a.best is not None and not (a.ambiguous and a.best.method == "vector")
    ]
    listed = {normalise(v) for v in quoted_list(question)}
    if listed:  # a list item the question writes is a value, unless it names a node exactly
        found = [a for a in found if normalise(a.mention) not in listed
                 or (a.best is not None and a.best.method == "exact")]  # fmt: skip
    found += carried(index, spec, question, history, found)
    return found
