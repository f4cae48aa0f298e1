"""Questions about the graph's own nodes and what a query renamed (seen on tugraph at 05618fb,
embedded model): "返回数据库中的所有节点。" ran `MATCH (n) RETURN n` and was asked back "the
question names nothing this graph holds"; "找所有name属性值大于或等于'Peter'的节点…" ran the
right query and every sentence ("The nodes with name 'Rain' have born year 1982.") was dropped
for the word "nodes"; "…将该值重命名为SomethingTotallyDifferent" returned the right value and
the template's own rendering "1967 (SomethingTotallyDifferent 1967)." failed the name check."""

from __future__ import annotations

from footnote.pipelines.graph.clarify import schema_match
from footnote.store.graph.base import GraphSpec
from footnote.verify.graph_answer import ShownRows, check_graph_sentence, unsupported_words

SPEC = GraphSpec.model_validate({"name": "movies", "nodes": {
    "Person": {"properties": {"name": "STRING", "born": "INT64"}, "key": "name", "name": "name"},
    "Movie": {"properties": {"title": "STRING"}, "key": "title", "name": "title"}},
    "relationships": {}})  # fmt: skip


def test_a_question_about_all_nodes_names_the_graph() -> None:
    for q in ("返回数据库中的所有节点。", "Return all nodes.", "How many relationships are there?",
              "在数据库中的所有节点中，跳过第一个节点，并返回接下来最多100个节点。"):  # fmt: skip
        assert schema_match(q, SPEC, []) is None, q
    assert schema_match("What is the weather like?", SPEC, []) is not None


def test_graph_words_frame_a_sentence() -> None:
    known = "找所有name属性值大于或等于'Peter'的节点\nname: Rain; born: 1982"
    said = "The nodes with name 'Rain' have born year 1982."
    assert "nodes" not in unsupported_words(said, known, {"person", "name", "born"})
    assert "node" not in unsupported_words("Rain is a node.", known, {"name"})
    assert unsupported_words("Rain is a comedian.", known, {"name"}) == ["comedian"]


def test_a_renamed_column_and_its_value_are_no_invented_name() -> None:
    shown = ShownRows({"row:0": "originalBorn: 1967; SomethingTotallyDifferent: 1967"})
    ok = check_graph_sentence("1967 (SomethingTotallyDifferent 1967).", ["row:0"], shown)
    assert ok.ok, ok.reasons
    bad = check_graph_sentence("1967 (SomethingElse 1967).", ["row:0"], shown)
    assert not bad.ok
