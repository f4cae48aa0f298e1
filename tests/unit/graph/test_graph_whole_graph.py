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
    # a renamed column holding a name: "<column> <value>" as the template writes it (seen on
    # tugraph at 8d25497), never two known words glued into a name no row holds
    named = ShownRows({"row:0": "born: 1967; SomethingTotallyDifferent: Carrie-Anne Moss"})
    said = "1967 (SomethingTotallyDifferent Carrie-Anne Moss)."
    assert check_graph_sentence(said, ["row:0"], named).ok
    two = ShownRows({"row:0": "name: Tom Cruise", "row:1": "name: Colin Hanks"})
    assert not check_graph_sentence("Tom Hanks acted.", ["row:0", "row:1"], two).ok


def test_a_request_to_return_rows_is_answered_by_them_when_the_models_sentence_fails() -> None:
    """Seen on tugraph at 845291e: "返回数据库中的所有节点。" ran `MATCH (n) RETURN n` (171
    rows); the model wrote "The database contains 10 nodes." (it saw 10), the sentence failed,
    and the answer was refused "the rows of this query do not state what the question asks"."""
    from footnote.models.fake import FakeChatModel
    from footnote.models.ledger import Ledger
    from footnote.models.roles import RoleModel
    from footnote.pipelines.graph.answer import compose_answer, is_listing
    from footnote.store.graph.base import GraphRows

    assert is_listing("返回数据库中的所有节点。") and is_listing("List all people born after 1960.")
    assert not is_listing("How many people are there?") and not is_listing("谁导演了黑客帝国？")
    rows = GraphRows(("n",), tuple(({"name": f"P{i}", "born": 1960 + i},) for i in range(12)))
    reply = '{"sentences": [{"text": "The database contains 10 nodes.", "rows": ["row:0"]}]}'

    def compose(rows_asked: bool) -> object:
        model = RoleModel("compose", FakeChatModel([reply]), ledger=Ledger(), external=False)
        return compose_answer("返回数据库中的所有节点。", rows, model=model, rows_asked=rows_asked)

    refused, listed = compose(False), compose(True)
    assert refused.sentences == ()  # type: ignore[attr-defined]
    assert listed.method == "template" and "P0" in listed.sentences[0].text  # type: ignore[attr-defined]


def test_asking_for_a_nodes_information_asks_for_what_it_holds() -> None:
    """Seen on tugraph at 77f9ebc: "返回名字是Carrie-Anne Moss的节点的信息是什么？" was refused
    "the graph does not hold 节点的信息"."""
    from footnote.pipelines.graph.clarify import missing_property

    for q in ("返回名字是Carrie-Anne Moss的节点的信息是什么？", "Carrie-Anne Moss的详细资料是什么？",
              "What is the information of Carrie-Anne Moss?"):  # fmt: skip
        assert missing_property(q, SPEC, [], ["Carrie-Anne Moss"]) is None, q
    assert missing_property("Carrie-Anne Moss的身高是多少？", SPEC, [], ["Carrie-Anne Moss"])


def test_a_command_to_return_rows_may_follow_a_clause() -> None:
    """Seen on tugraph at 77f9ebc: "在数据库中的所有节点中，跳过第一个节点，并返回接下来最多100个
    节点。" is a command to return rows, as "返回…" is."""
    from footnote.pipelines.graph.answer import is_listing

    assert is_listing("在数据库中的所有节点中，跳过第一个节点，并返回接下来最多100个节点。")
    assert is_listing("Skip the first node and return the next 100 nodes.")
    assert not is_listing("谁导演了黑客帝国？")
    assert not is_listing("Which films did Tom Hanks act in, and when did they return?")


def test_database_and_based_on_ask_for_nothing_the_graph_lacks() -> None:
    """Seen on the neo4j text2cypher sample at 0b13c12: "Who are the 3 youngest directors in
    the database?" was refused "the graph does not hold database", and "List the top 5
    customers based on the number of orders made." "… does not hold based"."""
    from footnote.pipelines.graph.clarify import missing_property

    for q in ("Who are the 3 youngest people in the database?",
              "List the top 5 people based on the year they were born.",
              "数据库中最年轻的三个人是谁？"):  # fmt: skip
        assert missing_property(q, SPEC, []) is None, q
    assert missing_property("Who are the 3 tallest people in the database?", SPEC, [])


def test_a_count_asked_with_ji_names_what_it_counts() -> None:
    """Seen with the embedded model this pass (gd-069): "汤姆·汉克斯有几个孩子？" (the graph holds
    no children) was answered "汤姆·汉克斯有12个孩子。" — only 多少 was read as asking a count,
    so 几 ("how many") let the question through to a model that answered another one."""
    from footnote.pipelines.graph.clarify import missing_property

    gap = missing_property("汤姆·汉克斯有几个孩子？", SPEC, [], ["汤姆·汉克斯"])
    assert gap is not None and "孩子" in gap.says and "孩子" in gap.says_zh
    assert (
        missing_property("Carrie-Anne Moss一共演过几部电影？", SPEC, [], ["Carrie-Anne Moss"])
        is None
    )
