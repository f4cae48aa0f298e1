"""The in-memory bm25 index gives FTS5's own ranking and stays current and persistent."""

from __future__ import annotations

import json
import random

import pytest
from conftest import make_doc

import footnote.index.bm25 as bm25
import footnote.index.postings as postings
from footnote.index import SearchFilters
from footnote.index.lexical import SqliteLexical


@pytest.fixture(params=["fts", "memory"])
def lexical_mode(request: pytest.FixtureRequest) -> str:
    """These tests are about SQLite FTS5 and its in-memory index only."""
    return str(request.param)


WORDS = [
    "graph",
    "neural",
    "network",
    "attention",
    "transformer",
    "embedding",
    "retrieval",
    "corpus",
    "citation",
    "evidence",
    "claim",
    "support",
    "model",
    "data",
    "training",
    "evaluation",
    "benchmark",
    "accuracy",
    "recall",
    "知识",
    "图谱",
    "检索",
    "模型",
    "数据",
    "评估",
    "naïve",
    "café",
    "résumé",
    "Größe",
    "running",
    "runs",
    "ran",
]
FILTERS = [
    SearchFilters(),
    SearchFilters(user_groups=()),
    SearchFilters(user_groups=("g1",), kinds=("paragraph",)),
    SearchFilters(pages=(2, 3)),
    SearchFilters(section_prefix=("methods",)),
    SearchFilters(labels=("red",)),
]


def _corpus(env, n_docs=12, seed=7):
    rng = random.Random(seed)
    ids = []
    for d in range(n_docs):
        paras = []
        for _ in range(rng.randint(3, 12)):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40)))
            paras.append((rng.choice(["Methods", "Results", "Intro", ""]), text))
        doc = make_doc(
            f"d{d}",
            paras,
            acl=("g1",) if d % 3 == 1 else ("g2",) if d % 3 == 2 else (),
            labels=("red",) if d % 2 else (),
        )
        ids.append(env.add(doc))
    return ids


def _pair(env):
    fts = SqliteLexical(env.store, max_postings=None, memory_threshold=None)
    mem = SqliteLexical(env.store, memory_threshold=0, index_dir=env.index_dir)
    return fts, mem


def _same(a, b):
    """Equal rankings up to float rounding (ties may come in either order)."""
    assert len(a) == len(b)
    sa, sb = dict(a), dict(b)
    assert set(sa) == set(sb)
    for k in sa:
        assert sb[k] == pytest.approx(sa[k], rel=1e-4, abs=1e-5)
    assert [round(s, 3) for _, s in a] == [round(s, 3) for _, s in b]


QUERIES = [
    "graph attention",
    "citation evidence support",
    "running model",
    "知识图谱 检索",
    "cafe resume naive",
    "Größe",
    "the of and",
    "accuracy benchmark recall training data",
]


def test_same_ranking_as_fts5(make_env):
    env = make_env()
    _corpus(env)
    fts, mem = _pair(env)
    for f in FILTERS:
        for q in QUERIES:
            _same(fts.search(q, 30, f), mem.search(q, 30, f))
    assert mem.memory.rows == fts._rows()


def test_incremental_add_delete_and_scope_changes(make_env):
    env = make_env()
    ids = _corpus(env, n_docs=6)
    fts, mem = _pair(env)
    mem.search("graph", 5, SearchFilters())  # built now
    built = mem.memory._state
    new = env.add(make_doc("late", [("Methods", "graph retrieval zeolite")]))
    assert mem.memory._state is built  # nothing read until the next search
    hits = mem.search("zeolite", 5, SearchFilters())
    assert len(hits) == 1 and mem.memory._state.base is built.base  # tail, no rebuild
    env.store.delete_source(ids[0])
    env.indexer.remove_source(ids[0])
    env.store.conn.execute(
        "UPDATE sources SET acl_groups = ? WHERE id = ?", (json.dumps(["g9"]), new)
    )
    for f in [*FILTERS, SearchFilters(user_groups=("g9",)), SearchFilters(source_ids=(new,))]:
        for q in [*QUERIES, "zeolite"]:
            _same(fts.search(q, 30, f), mem.search(q, 30, f))
    assert not mem.search("zeolite", 5, SearchFilters(user_groups=()))


def test_saved_index_is_reopened_without_reading_rows(make_env, monkeypatch):
    env = make_env()
    _corpus(env, n_docs=5)
    fts, mem = _pair(env)
    mem.sync()
    assert (env.index_dir / "lexical" / "meta.json").exists()
    env.add(make_doc("more", [("Intro", "graph attention obsidian")]))
    mem.sync()  # tail saved beside the untouched base segment

    def no_full_read(conn, vocab, keys, first_row):
        assert keys is not None, "the whole FTS table was read again"
        return real(conn, vocab, keys, first_row)

    real = postings.read_rows
    monkeypatch.setattr(bm25, "read_rows", no_full_read)
    again = SqliteLexical(env.store, memory_threshold=0, index_dir=env.index_dir)
    for q in [*QUERIES, "obsidian"]:
        _same(fts.search(q, 30, SearchFilters()), again.search(q, 30, SearchFilters()))


def test_corrupt_or_stale_files_are_rebuilt(make_env):
    env = make_env()
    _corpus(env, n_docs=4)
    fts, mem = _pair(env)
    mem.sync()
    (env.index_dir / "lexical" / "meta.json").write_text("{not json")
    again = SqliteLexical(env.store, memory_threshold=0, index_dir=env.index_dir)
    _same(
        fts.search("graph model", 20, SearchFilters()),
        again.search("graph model", 20, SearchFilters()),
    )
    env.indexer.lexical.rebuild()  # tokenizer change: every row rewritten
    _same(
        fts.search("graph model", 20, SearchFilters()),
        again.search("graph model", 20, SearchFilters()),
    )
    assert again.memory._state.tail.rows.size == 0


def test_phrase_terms_fall_back_to_fts5(make_env):
    env = make_env()
    word = "x\u19b0y"  # one word to Python's regex, two tokens to SQLite's unicode61
    env.add(make_doc("p", [("S", f"{word} appears here"), ("S", "x and y apart")]))
    fts, mem = _pair(env)
    assert mem.memory.search([word], 5, [], None) is None  # a phrase: FTS5 answers
    _same(fts.search(word, 5, SearchFilters()), mem.search(word, 5, SearchFilters()))
    assert len(mem.search(word, 5, SearchFilters())) == 1


def test_words_split_as_sqlite_splits_them(make_env):
    env = make_env()
    text = "naïve cafe\u0301 x²y Größe 知识图谱 a_b e-mail x\u19b0y \U000e0001tag"
    env.add(make_doc("w", [("S", text)]))
    fts, mem = _pair(env)
    for q in ["cafe", "café", "naive", "grosse", "größe", "mail", "xy", "x", "y", "tag", "b"]:
        _same(fts.search(q, 5, SearchFilters()), mem.search(q, 5, SearchFilters()))


def test_floor_terms_only_when_needed(make_env, monkeypatch):
    env = make_env()
    env.add(make_doc("f", [("S", f"common words {i}") for i in range(9)] + [("S", "rare common")]))
    fts, mem = _pair(env)
    monkeypatch.setattr(bm25, "FLOOR_DF", 0)
    got = mem.search("common rare", 1, SearchFilters())
    assert got[0][0] == fts.search("common rare", 1, SearchFilters())[0][0]
    assert len(mem.search("common rare", 10, SearchFilters())) == 10  # floor term added back


def test_selective_filters_probe_sorted_postings(make_env):
    env = make_env()
    big = env.add(make_doc("big", [("S", f"common filler {i} graph") for i in range(60)]))
    small = env.add(make_doc("small", [("S", "common graph rare"), ("S", "nothing else")]))
    late = env.add(make_doc("late", [("S", "common late graph")] * 3, salt="x"))
    fts, mem = _pair(env)
    for f in [SearchFilters(source_ids=(small,)), SearchFilters(source_ids=(late, small))]:
        for q in ["common", "graph rare", "common late filler"]:
            _same(fts.search(q, 10, f), mem.search(q, 10, f))
    env.add(make_doc("later", [("S", "common graph")] * 2, salt="y"))
    assert mem.search("common", 100, SearchFilters(source_ids=(big,)))
    st = mem.memory._state
    for seg in (st.base, st.tail):  # each token's rows ascend (the probe relies on it)
        for t in range(len(seg.indptr) - 1):
            rows = seg.postings(t)[0]
            assert (rows[1:] > rows[:-1]).all()


def test_scope_changes_reread_only_changed_sources(make_env, monkeypatch):
    env = make_env()
    ids = _corpus(env, n_docs=6)
    fts, mem = _pair(env)
    mem.search("graph", 5, SearchFilters())
    conn = env.store.conn
    conn.execute("UPDATE sources SET acl_groups = ? WHERE id = ?", (json.dumps(["g7"]), ids[0]))
    conn.execute("UPDATE sources SET labels = ? WHERE id = ?", (json.dumps(["blue"]), ids[1]))

    def whole_table(*_a, **_k):
        raise AssertionError("every row was re-read for two changed sources")

    with monkeypatch.context() as m:
        m.setattr(mem.memory, "_read_scope", whole_table)
        for f in [*FILTERS, SearchFilters(user_groups=("g7",)), SearchFilters(labels=("blue",))]:
            for q in QUERIES:
                _same(fts.search(q, 30, f), mem.search(q, 30, f))
    # a log that cannot say what changed (emptied here) means every row is re-read
    conn.execute("UPDATE sources SET acl_groups = '[]' WHERE id = ?", (ids[0],))
    conn.execute("DELETE FROM index_scope_changes")
    for f in [SearchFilters(user_groups=()), SearchFilters(user_groups=("g7",))]:
        for q in QUERIES:
            _same(fts.search(q, 30, f), mem.search(q, 30, f))
