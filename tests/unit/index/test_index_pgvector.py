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
            ("S", " ".join(rng.choice(words, 6)), {"kind": "caption" if i % 5 == 0 else "paragraph"})
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
        assert [k for k, _ in indexed] == [k for k, _ in exact], f
        assert np.allclose([s for _, s in indexed], [s for _, s in exact], atol=1e-5)


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
