"""Filters as FTS5 scope tokens, term pruning, migration 0003, incremental vector refresh."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from conftest import make_doc

import footnote.store.sqlite.migrations as migrations
from footnote.index import SearchFilters
from footnote.index.lexical import SqliteLexical
from footnote.index.lexical_text import fts_columns
from footnote.index.scope import prune_terms, section_token
from footnote.store.rows import block_row
from footnote.store.sqlite import SqliteStore


@pytest.fixture(params=["fts", "memory"])
def lexical_mode(request: pytest.FixtureRequest) -> str:
    """These tests are about SQLite FTS5 and its in-memory index only."""
    return str(request.param)


LAZY = pytest.mark.parametrize("lazy", [0.0, 2.0])  # broad filters: always / never SQL


def _lex_sources(env, query, **kw):
    lex = SqliteLexical(
        env.store,
        lazy_fraction=env.lazy,
        memory_threshold=env.settings.lexical_memory_threshold,
        index_dir=env.index_dir,
    )
    rows = lex.search(query, 50, SearchFilters(**kw))
    ids = lex.block_ids([k for k, _ in rows])
    return {env.store.get_block(ids[k]).source_id for k, _ in rows}


@LAZY
def test_scope_tokens_in_text_grant_nothing(make_env, lazy):
    env = make_env()
    env.lazy = lazy
    pub = env.add(make_doc("p", [("S", "quartz crystal")]))
    # a restricted block whose text spells out the public / group / label tokens
    sneaky = f"quartz pub0 rst0 old0 {section_token(['s'])} " + "g" + b"staff".hex() + "0"
    sec = env.add(make_doc("r", [("S", sneaky)], acl=("staff",)))
    assert _lex_sources(env, "quartz", user_groups=()) == {pub}
    assert _lex_sources(env, "quartz", user_groups=("staff",)) == {pub, sec}
    assert _lex_sources(env, "quartz pub0", user_groups=("other",)) == {pub}


@LAZY
def test_source_changes_update_scope(make_env, lazy):
    env = make_env()
    env.lazy = lazy
    a = env.add(make_doc("a", [("S", "basalt column")]))
    b = env.add(make_doc("b", [("S", "basalt flow")], labels=("geo",)))
    conn = env.store.conn
    conn.execute("UPDATE sources SET acl_groups = ? WHERE id = ?", (json.dumps(["x"]), a))
    assert _lex_sources(env, "basalt", user_groups=()) == {b}
    assert _lex_sources(env, "basalt", user_groups=("x",)) == {a, b}
    conn.execute("UPDATE sources SET labels = ? WHERE id = ?", (json.dumps(["geo", "y"]), a))
    assert _lex_sources(env, "basalt", labels=("geo",)) == {a, b}
    assert _lex_sources(env, "basalt", labels=("y",)) == {a}
    conn.execute("UPDATE sources SET superseded_by = ? WHERE id = ?", (b, a))
    assert _lex_sources(env, "basalt") == {b}
    assert _lex_sources(env, "basalt", source_ids=(a,)) == {a}


@LAZY
def test_section_prefix_and_pages(make_env, lazy):
    env = make_env()
    env.lazy = lazy
    doc = make_doc("s", [("X", "granite quarry")])
    path = ("Methods", "Data Sets", "Größe")
    env.add(replace(doc, blocks=tuple(replace(b, section_path=path) for b in doc.blocks)))
    for prefix, hit in [
        (("methods",), True),
        (("METHODS", "data sets"), True),
        (("Methods", "Data Sets", "Größe"), True),
        (("Methods", "Data"), False),
        (("Meth",), False),
        (("Data Sets",), False),
    ]:
        for methods in (("lexical",), ("vector",)):
            got = env.searcher.search(
                "granite", methods=methods, filters=SearchFilters(section_prefix=prefix)
            )
            assert bool(got) == hit, (prefix, methods)
        assert bool(_lex_sources(env, "granite", section_prefix=prefix, user_groups=())) == hit
    assert _lex_sources(env, "granite", pages=(1, 1), kinds=("paragraph",), user_groups=())
    assert not _lex_sources(env, "granite", pages=(2, 9), user_groups=("x",))


def test_prune_terms():
    df = {"a": 900, "b": 10, "c": 50, "d": 0}
    assert prune_terms(["a", "b", "c", "d"], df, 100) == ["b", "c", "d"]
    assert prune_terms(["a", "b", "c"], df, 10) == ["b"]
    assert prune_terms(["a"], df, 1) == ["a"]  # the rarest is always kept
    assert prune_terms(["a", "b"], df, 10_000) == ["a", "b"]


def test_pruning_drops_common_terms(make_env):
    env = make_env()
    env.add(make_doc("c", [("S", f"common filler {i}") for i in range(30)] + [("S", "rare gem")]))
    lex = SqliteLexical(env.store, max_postings=5)
    assert "common" not in lex.plan(["common", "rare"], SearchFilters())[0]
    rows = lex.search("common rare", 5, SearchFilters())
    assert len(rows) == 1  # only the rare term was matched
    full = SqliteLexical(env.store, max_postings=None).search("common rare", 50, SearchFilters())
    assert full[0] == rows[0] and len(full) == 31


def test_migration_0005_rebuilds_old_fts(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    names = [m[0] for m in migrations.MIGRATIONS]
    old = migrations.MIGRATIONS[: names.index("0005_fts_scope")]  # a workspace from before 0005
    monkeypatch.setattr(migrations, "MIGRATIONS", old)
    store = SqliteStore(path)
    pub, sec = (
        make_doc("p", [("Intro", "obsidian blade")]),
        make_doc("s", [("Intro", "obsidian mirror")], acl=("g",)),
    )
    for doc in (pub, sec):
        src = doc.source  # rows as the store of that time wrote them
        store.conn.execute(
            "INSERT INTO sources (id, kind, title, uri, sha256, pages, lang, version, "
            "source_type, labels, acl_groups, warnings, sections) "
            "VALUES (?,?,?,?,?,1,'en',1,'unknown','[]',?,'[]','[]')",
            (src.id, src.kind, src.title, src.uri, src.sha256, json.dumps(list(src.acl_groups))),
        )
        store.conn.executemany(
            "INSERT INTO blocks (id, source_id, kind, text, page, bbox, section_path, ord, "
            "lang, data) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [block_row(b) for b in doc.blocks],
        )
        for b in doc.blocks:  # what 0002's SqliteLexical.add wrote
            key = store.conn.execute(
                "INSERT INTO index_blocks(block_id) VALUES (?)", (b.id,)
            ).lastrowid
            store.conn.execute(
                "INSERT INTO blocks_fts(rowid, section, body, cjk) VALUES (?,?,?,?)",
                (key, *fts_columns(b)),
            )
    store.close()
    monkeypatch.undo()
    store = SqliteStore(path)
    try:
        lex = SqliteLexical(store)
        assert len(lex.search("obsidian", 10, SearchFilters())) == 2
        rows = lex.search("obsidian", 10, SearchFilters(user_groups=()))
        ids = lex.block_ids([k for k, _ in rows])
        assert [store.get_block(ids[k]).source_id for k, _ in rows] == [pub.source.id]
        assert lex.search("obsidian", 10, SearchFilters(section_prefix=("intro",)))
        assert lex._rows() == 2
    finally:
        store.close()


def test_vector_refresh_is_incremental(make_env):
    env = make_env()
    a = env.add(make_doc("a", [("S", f"alpha {i}") for i in range(5)]))
    vec = env.searcher.vectors
    vec.refresh()
    reads = []
    real = vec._append
    vec._append = lambda snap, new: (reads.append(new), real(snap, new))[1]
    env.add(make_doc("b", [("S", f"beta {i}") for i in range(3)]))
    vec.refresh()
    assert len(vec.keys) == 8 and len(reads) == 1 and len(reads[0]) == 3  # only new rows read
    env.store.delete_source(a)
    env.indexer.remove_source(a)
    vec.refresh()
    assert len(vec.keys) == 3
    fresh = type(vec)(env.store, vec.model, vec.dim, env.settings, env.index_dir)
    fresh.refresh()
    assert np.array_equal(fresh.keys, vec.keys) and np.allclose(fresh.matrix, vec.matrix)
    new, old = fresh.refresh(), vec.refresh()
    assert np.array_equal(new.page, old.page) and np.array_equal(new.kind, old.kind)
    assert {old.sources[s] for s in old.sources} >= set(old.src.tolist())
