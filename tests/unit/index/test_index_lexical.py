"""Lexical search: stemming, Chinese words, tables, safe escaping, snippets."""

from __future__ import annotations

from conftest import TABLE, make_doc

from footnote.index.lexical_text import fts_match


def test_stemming_running_finds_runs(make_env):
    env = make_env()
    env.add(
        make_doc(
            "a",
            [("Intro", "The model runs on a single GPU."), ("Intro", "Unrelated text about cats.")],
        )
    )
    hits = env.searcher.search("running", methods=("lexical",))
    assert [h.block.text for h in hits] == ["The model runs on a single GPU."]
    assert "«runs»" in hits[0].snippet
    assert hits[0].scores["lexical"] > 0 and hits[0].ranks == {"lexical": 1}


def test_chinese_two_character_words(make_env):
    env = make_env()
    env.add(
        make_doc(
            "zh",
            [
                ("引言", "知识图谱是一种结构化的语义知识库。"),
                ("引言", "深度学习模型需要大量数据。"),
            ],
        )
    )
    for q in ("知识", "图谱", "什么是知识图谱？"):
        hits = env.searcher.search(q, methods=("lexical",))
        assert hits and hits[0].block.text.startswith("知识图谱"), q
    assert "«图谱»" in env.searcher.search("图谱", methods=("lexical",))[0].snippet


def test_table_caption_header_and_cells_searchable(make_env):
    env = make_env()
    env.add(
        make_doc(
            "t",
            [
                ("Results", "", {"kind": "table", "table": TABLE}),
                ("Results", "Some prose about other things."),
            ],
        )
    )
    for q in ("sentiment benchmark", "Accuracy", "BiLSTM", "88.9"):
        hits = env.searcher.search(q, methods=("lexical",))
        assert hits and hits[0].block.kind == "table", q


NASTY = [
    'foo"bar',
    '"',
    '""',
    "a AND OR NOT b",
    "NEAR(x y)",
    "title:foo",
    "*",
    "foo*",
    "-x",
    "^x",
    "(unbalanced",
    "x) OR (y",
    "c++ && ||",
    "'; DROP TABLE blocks; --",
    "col:*:",
    "{a b}: c",
    "",
    "   ",
    "\x00",
    "🙂",
    "AND",
    "NOT",
    "a + b - c",
    "x'y\"z",
    "？！。",
    "的",
]


def test_nasty_queries_never_raise(make_env):
    env = make_env()
    env.add(make_doc("n", [("S", "title foo bar NEAR AND x y")]))
    for query in NASTY:
        env.searcher.search(query)  # lexical + vector: no exception
        env.searcher.search(query, methods=("lexical",))
    assert env.searcher.search('foo"bar', methods=("lexical",))


def test_fts_match_quotes_every_term():
    assert fts_match('title:foo "bar" NEAR*') == '"title" OR "foo" OR "bar" OR "near"'
    assert fts_match("***") is None
    assert fts_match("the of") is None


def test_section_path_is_searchable(make_env):
    env = make_env()
    env.add(make_doc("s", [("Hyperparameter tuning", "We used a learning rate of 0.1.")]))
    assert env.searcher.search("hyperparameter", methods=("lexical",))
