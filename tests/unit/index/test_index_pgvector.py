"""pgvector: the HNSW index answers unfiltered queries, filters and the ACL are in the SQL,
and the index scan agrees with the exact search (PostgreSQL; skipped if it cannot start)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_doc

from footnote.index import SearchFilters


@pytest.fixture
def lexical_mode() -> str:
    return "postgres"


def _docs(n: int = 6) -> list:
    rng = np.random.default_rng(3)
    words = ["lattice", "quantum", "enzyme", "glacier", "protocol", "sonnet", "basalt", "orbit"]
    docs = []
    for d in range(n):
        paras = [
            (
                "S",
                " ".join(rng.choice(words, 6)),
                {"kind": "caption" if i % 5 == 0 else "paragraph"},
            )
            for i in range(25)
        ]
        docs.append(make_doc(f"d{d}", paras, acl=("g",) if d == 0 else ()))
    return docs


def test_hnsw_index_used_and_agrees_with_exact(make_env):
    env = make_env(k=10)
    for d in _docs():
        env.add(d)
    vec = env.searcher.vectors
    q = env.searcher.embedder.embed_query("quantum enzyme glacier", labels=())
    for f in (SearchFilters(), SearchFilters(user_groups=()), SearchFilters(kinds=("caption",))):
        indexed = vec._query(vec_literal(q), 10, f, indexed=True)
        exact = vec._query(vec_literal(q), 10, f, indexed=False)
        assert np.allclose([s for _, s in indexed], [s for _, s in exact], atol=1e-5), f
        # repeated texts embed alike: equal scores may come in either order, the rest may not
        cut = exact[-1][1] + 1e-5
        assert {k for k, s in indexed if s > cut} == {k for k, s in exact if s > cut}, f


def test_index_scan_plan_uses_hnsw(make_env):
    env = make_env()
    for d in _docs(2):
        env.add(d)
    vec = env.searcher.vectors
    env.store.db.run("ANALYZE block_vectors")  # autovacuum's job on a live server
    with env.store.db.tx() as conn:
        conn.execute("SET LOCAL enable_sort = off")  # a table this small would rather sort
        q = "[" + ",".join(["0.1"] * vec.dim) + "]"
        rows = conn.execute(
            f"EXPLAIN SELECT key FROM block_vectors v WHERE model = '{vec.model}' "
            f"ORDER BY (v.embedding::vector({vec.dim})) <#> '{q}'::vector({vec.dim}) LIMIT 5"
        ).fetchall()
    assert "block_vectors_hnsw_" in " ".join(r["QUERY PLAN"] for r in rows)


def test_restricted_vectors_never_take_a_slot(make_env):
    env = make_env()
    docs = _docs()
    for d in docs:
        env.add(d)
    secret = docs[0].source.id
    for q in ("quantum lattice", "sonnet orbit basalt"):
        hits = env.searcher.search(
            q, k=20, methods=("vector",), filters=SearchFilters(user_groups=("x",))
        )
        assert len(hits) == 20 and secret not in {h.block.source_id for h in hits}


def vec_literal(q: np.ndarray) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in q.reshape(-1)) + "]"


def _pg_vectors(n: int, memory_mb: int = 2048, dim: int = 384):  # type: ignore[no-untyped-def]
    """A fresh PostgreSQL store (one pooled connection) with n random vectors of one model
    put through `PgVectors.put`, each on an indexed block."""
    from footnote.config import RetrievalSettings
    from footnote.index.postgres import PgLexical, PgVectors
    from footnote.store.postgres import PgDatabase, PgStore
    from pgtest import fresh_database

    store = PgStore(PgDatabase(fresh_database(), pool_size=1))
    doc = make_doc("bulk", [("S", f"paragraph number {i}", {}) for i in range(n)])
    store.save_document(doc)
    keys, _ = PgLexical(store).add(doc.blocks)
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    settings = RetrievalSettings(ann_build_memory_mb=memory_mb)
    vectors = PgVectors(store, "bulk-model", dim, settings)
    ks = [keys[b.id] for b in doc.blocks]
    vectors.put(ks, ["h"] * n, vecs)
    return store, vectors, ks, vecs


def _hnsw_indexes(store) -> list[str]:  # type: ignore[no-untyped-def]
    return [r["indexname"] for r in store.db.all(
        "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'block_vectors_hnsw_%%'")]  # fmt: skip


def test_vectors_loaded_before_the_index_are_bulk_indexed_at_sync():
    """pgvector's advice: build the HNSW index over loaded rows, not by inserts. Writing
    creates no index; `sync` builds it over what is there, and later writes join it."""
    store, vectors, keys, vecs = _pg_vectors(300, dim=8)
    assert _hnsw_indexes(store) == []
    vectors.sync()
    assert len(_hnsw_indexes(store)) == 1
    q = vecs[7]
    indexed = vectors._query(vec_literal(q), 5, SearchFilters(), indexed=True)
    assert indexed[0][0] == keys[7]
    vectors.put([keys[0]], ["h2"], vecs[7:8])  # joins the live index
    top = {k for k, _ in vectors._query(vec_literal(q), 2, SearchFilters(), indexed=True)}
    assert top == {keys[0], keys[7]}
    store.close()


def test_build_memory_setting_decides_whether_the_graph_fits():
    """`retrieval.ann_build_memory_mb` is the build's maintenance_work_mem: 1 MB cannot hold
    3,000 384-d vectors' graph (pgvector says so and builds on disk), 64 MB can."""
    notices: dict[int, list[str]] = {}
    for mb in (1, 64):
        store, vectors, _, _ = _pg_vectors(3000, memory_mb=mb)
        with store.db.tx() as conn:  # the pool's only connection: the build runs on it
            conn.add_notice_handler(lambda d, mb=mb: notices.setdefault(mb, []).append(
                str(d.message_primary)))  # fmt: skip
        vectors.sync()
        store.close()
    assert any("maintenance_work_mem" in m for m in notices.get(1, [])), notices
    assert not any("maintenance_work_mem" in m for m in notices.get(64, [])), notices
