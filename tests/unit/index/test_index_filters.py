"""Filters and ACL are part of the query: restricted blocks never take a slot."""

from __future__ import annotations

import pytest
from conftest import make_doc

from footnote.index import SearchFilters

Q = "graph neural network embeddings"


@pytest.fixture
def env(make_env):
    env = make_env()
    env.public = env.add(
        make_doc(
            "pub",
            [
                ("Intro", "Graph neural network embeddings are discussed briefly."),
                ("Methods", "We train graph neural network embeddings on citation data."),
                ("Methods", "Graph neural network embeddings table", {"kind": "caption"}),
                ("Results", "Accuracy of graph embeddings improves.", {"page": 5}),
            ],
            labels=("licensed",),
        )
    )
    env.secret = env.add(
        make_doc(
            "sec",
            [
                ("Methods", "Graph neural network embeddings graph neural network embeddings."),
            ],
            acl=("staff",),
        )
    )
    return env


@pytest.mark.parametrize("methods", [("lexical",), ("vector",), ("lexical", "vector")])
def test_acl_enforced_in_query(env, methods):
    # unrestricted: the secret block is the best match
    best = env.searcher.search(Q, k=1, methods=methods)
    assert best[0].block.source_id == env.secret
    for groups in [(), ("interns",)]:
        hits = env.searcher.search(
            Q, k=1, methods=methods, filters=SearchFilters(user_groups=groups)
        )
        assert len(hits) == 1 and hits[0].block.source_id == env.public
        every = env.searcher.search(
            Q, k=50, methods=methods, filters=SearchFilters(user_groups=groups)
        )
        assert all(h.block.source_id == env.public for h in every)
        assert all(c.source_id == env.public for h in every for c in h.context)
    hits = env.searcher.search(
        Q, k=1, methods=methods, filters=SearchFilters(user_groups=("staff", "x"))
    )
    assert hits[0].block.source_id == env.secret


def test_acl_in_lexical_sql(env):
    rows = env.searcher.lexical.search(Q, 1, SearchFilters(user_groups=()))
    ids = env.searcher.lexical.block_ids([k for k, _ in rows])
    assert len(rows) == 1
    assert env.store.get_block(ids[rows[0][0]]).source_id == env.public


@pytest.mark.parametrize("methods", [("lexical",), ("vector",), ("lexical", "vector")])
def test_filters(env, methods):
    def run(**kw):
        return env.searcher.search(Q, k=20, methods=methods, filters=SearchFilters(**kw))

    assert {h.block.source_id for h in run(source_ids=(env.secret,))} == {env.secret}
    assert {h.block.section_path[0] for h in run(section_prefix=("methods",))} == {"Methods"}
    assert {h.block.kind for h in run(kinds=("caption",))} == {"caption"}
    assert {h.block.page for h in run(pages=(5, 9))} == {5}
    assert {h.block.source_id for h in run(labels=("licensed",))} == {env.public}
    assert run(labels=("licensed", "nope")) == []
    assert run(section_prefix=("Meth",)) == []


def test_superseded_versions_excluded_unless_named(make_env):
    env = make_env()
    old = env.add(make_doc("v", [("S", "quantum annealing schedule v1")], uri="file:///v"))
    new = env.add(
        make_doc("v", [("S", "quantum annealing schedule v2")], uri="file:///v", salt="2")
    )
    assert {h.block.source_id for h in env.searcher.search("quantum annealing")} == {new}
    named = env.searcher.search("quantum annealing", filters=SearchFilters(source_ids=(old,)))
    assert {h.block.source_id for h in named} == {old}
