"""The graph gate's "every content word comes from the question, the schema or the cited
rows" check for Chinese answers (#33): Chinese is read as jieba words, not characters, so an
invented word made of characters found elsewhere is still an invention, and a sentence that
only re-words the question and the rows passes."""

from __future__ import annotations

from graph_films import FILMS

from footnote.store.graph.base import GraphRows, GraphSpec
from footnote.verify.graph_answer import (
    ShownRows,
    cjk_content_words,
    schema_words,
    verify_graph_answer,
)

VOCAB = schema_words(GraphSpec.model_validate(FILMS))
ROWS = ShownRows.of(GraphRows(("title", "year"), (("红河", 2001), ("蓝湖", 1999))), 10)
QUESTION = "艾达·斯通出演过哪些电影？"


def test_an_invented_chinese_word_makes_a_sentence_unsupported() -> None:
    v = verify_graph_answer(
        [("艾达·斯通出演过喜剧电影红河（2001年）。", ["row:0"]),
         ("艾达·斯通出演过电影红河（2001年）。", ["row:0"])],
        ROWS, question=QUESTION, vocabulary=VOCAB,
    )  # fmt: skip
    invented, plain = v.checks
    assert not invented.ok and invented.missing["words"] == ["喜剧"], invented
    assert plain.ok, v.reason


def test_words_not_characters() -> None:
    """湖红 is made of characters of the rows (红河, 蓝湖) but is no word of them."""
    v = verify_graph_answer(
        [("艾达·斯通出演过湖红。", ["row:0", "row:1"])], ROWS, question=QUESTION, vocabulary=VOCAB
    )
    assert not v.checks[0].ok and v.checks[0].missing["words"], v.checks[0]
    assert cjk_content_words("他出演过电影红河。") == ["出演", "电影", "红河"]


def test_a_currency_nothing_names_is_an_invention() -> None:
    """Seen with the embedded model this pass (gd-044): "Tofu 的单价是 23.25 元" over a row holding
    `unitPrice: 23.25` passed — the gate read the number, not the 元 the model added."""
    rows = ShownRows.of(GraphRows(("product", "unitPrice"), (("Tofu", 23.25),)), 10)
    vocab = frozenset({"product", "unitprice", "unit", "price"})
    v = verify_graph_answer(
        [("Tofu 的单价是 23.25 元。", ["row:0"]), ("Tofu 的单价是 23.25。", ["row:0"]),
         ("Tofu costs $23.25.", ["row:0"])],
        rows, question="Tofu 的单价是多少？", vocabulary=vocab,
    )  # fmt: skip
    yuan, bare, dollars = v.checks
    assert not yuan.ok and yuan.missing["units"] == ["23.25 元"], yuan
    assert bare.ok, v.reason
    assert not dollars.ok and dollars.missing["units"], dollars
    named = verify_graph_answer(
        [("Tofu 的单价是 23.25 元。", ["row:0"])], rows, question="Tofu 的单价是多少元？",
        vocabulary=vocab,
    )  # fmt: skip
    assert named.checks[0].ok, named.reason  # the question names the currency
