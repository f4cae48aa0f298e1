"""The nodes a graph question names: its understanding's mentions aligned to the graph, with
the names in the user's own words that the understanding dropped, and a follow-up's carried
entities.

A mention's label is the model's reading when the model read the question (the rules' label
is only the index's first guess). Names the index finds in the question itself (and Latin runs
in a Chinese question) count even when the understanding dropped them. Close vector scores
say "maybe not an entity at all" (e5 squeezes cosines): those are dropped; only exact or
keyword ties are real ambiguity worth asking back about."""

from __future__ import annotations

from collections.abc import Sequence

from footnote.index.graph.align import Alignment, EntityIndex
from footnote.pipelines.graph.conversation import GraphTurn, carried
from footnote.pipelines.graph.outcome import latin_runs
from footnote.pipelines.graph.understand import GraphUnderstanding
from footnote.store.graph.base import GraphSpec
from footnote.textnorm import normalise


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
    aligned: list[Alignment] = [
        index.align(m.text, [m.label] if method == "model" and m.label in spec.nodes else None)
        for m in u.entities
    ]
    said = {normalise(a.mention) for a in aligned if a.candidates}
    known = {(a.best.entity.label, a.best.entity.key) for a in aligned if a.best}
    for m in [*index.mentions(question), *latin_runs(question)]:
        extra = index.align(m)
        if any(m in s or s in m for s in said) or extra.best is None:
            continue
        if (extra.best.entity.label, extra.best.entity.key) not in known:
            aligned.append(extra)
    aligned = [a if a.candidates or not a.mention else index.align(a.mention) for a in aligned]
    found = [
        a for a in aligned if a.best is not None and not (a.ambiguous and a.best.method == "vector")
    ]
    found += carried(index, spec, question, history, found)
    return found
