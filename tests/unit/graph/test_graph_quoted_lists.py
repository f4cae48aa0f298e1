"""A list of quoted values is data the question hands the query, not names to resolve (seen on
tugraph at 05618fb: "将'Anne', 'John', 'Bill', 'Diane', 'Eve'作为临时结果集names…" — a list
to slice — was asked back "'John' could mean the person John Cusack, … John Goodman or … John
Hurt")."""

from __future__ import annotations

from footnote.index.graph.align import EntityIndex
from footnote.pipelines.graph.aligned import align_mentions, quoted_list
from footnote.pipelines.graph.understand import GraphUnderstanding, Mention
from footnote.store.graph.ladybug import LadybugGraph

LIST_Q = "将'Anne', 'Stone', 'Bill', 'Eve'作为临时结果集names，返回其中的第二到四个元素。"


def test_the_items_of_a_quoted_list() -> None:
    assert quoted_list(LIST_Q) == ["Anne", "Stone", "Bill", "Eve"]
    assert quoted_list("Did 'Ada Stone' act with 'Ben Stone'?") == []  # two names, no list
    assert quoted_list('Return ["a", "b", "c"] sorted.') == ["a", "b", "c"]


def test_a_partial_name_in_a_quoted_list_is_not_asked_back(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    u = GraphUnderstanding(
        intent="other", confidence=1.0, entities=[Mention(text="Stone")], question=LIST_Q
    )
    found = align_mentions(films_index, films.spec, u, "model", LIST_Q)
    assert not any(a.ambiguous for a in found)  # 'Stone': Ada or Ben, but it is a list item
    named = "Which films did 'Ada Stone', 'Ben Stone' and 'Dee Park' make?"
    u = GraphUnderstanding(
        intent="other", confidence=1.0, entities=[Mention(text="Ada Stone")], question=named
    )
    found = align_mentions(films_index, films.spec, u, "model", named)
    assert {a.best.entity.key for a in found if a.best} >= {"Ada Stone"}  # exact names stay
