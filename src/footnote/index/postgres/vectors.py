"""pgvector backend: vectors in `block_vectors`, one HNSW index per embedding model.

The index is a partial expression index (`embedding::vector(dim)` with inner-product ops,
`WHERE model = '<model>'`), so several models of different dimensions share the table. A
search is one SQL query joining blocks and sources, with every filter and the ACL in its
WHERE clause; pgvector's iterative index scan keeps walking the graph until `n` allowed rows
are found (`hnsw.iterative_scan`), so a restricted vector never takes a slot. A query
confined to named sources, or one whose index scan comes back short, is answered exactly
(the same ORDER BY on an expression the index does not cover).

Writing does not create the index: `sync()` (after a source's vectors, after a migration)
and the first search do, so a first load is bulk-built by PostgreSQL (pgvector's advice: an
HNSW index built over the loaded rows is several times faster than one grown by inserts),
with `maintenance_work_mem` raised to `retrieval.ann_build_memory_mb` for that statement.
Once the index exists, PostgreSQL keeps it up to date on every insert.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from psycopg import sql

from footnote.config import RetrievalSettings
from footnote.index.base import Matrix
from footnote.index.filters import SearchFilters
from footnote.index.postgres.filters import FROM, where
from footnote.store.postgres import PgStore

INDEX_LOCK = 0x666E6878  # "fnhx": advisory lock taken while an HNSW index is created


def _literal(v: Sequence[float] | Matrix) -> str:
    """A pgvector literal that parses back to the same float32 values (each written as the
    shortest decimal of its exact double)."""
    return (
        "["
        + ",".join(map(repr, np.asarray(v, np.float32).reshape(-1).astype(float).tolist()))
        + "]"
    )


class PgVectors:
    """`VectorBackend` for one embedding model on the PostgreSQL store's database."""

    def __init__(self, store: PgStore, model: str, dim: int, settings: RetrievalSettings) -> None:
        self.db, self.model, self.dim, self.settings = store.db, model, dim, settings
        self._typed = sql.SQL("(v.embedding::vector({}))").format(sql.Literal(dim))
        self._model = sql.Literal(model)
        self._ready = False

    def _ensure_index(self) -> None:
        """Create this model's HNSW index once, over the rows already stored (replicas take
        turns on an advisory lock)."""
        if self._ready:
            return
        name = (
            "block_vectors_hnsw_"
            + hashlib.sha256(f"{self.model}/{self.dim}".encode()).hexdigest()[:16]
        )
        with self.db.tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (INDEX_LOCK,))
            conn.execute(
                sql.SQL("SET LOCAL maintenance_work_mem = {}").format(
                    sql.Literal(f"{self.settings.ann_build_memory_mb}MB")
                )
            )
            conn.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {} ON block_vectors USING hnsw "
                    "((embedding::vector({})) vector_ip_ops) WITH (m = {}, ef_construction = {}) "
                    "WHERE model = {}"
                ).format(
                    sql.Identifier(name),
                    sql.Literal(self.dim),
                    sql.Literal(self.settings.ann_connectivity),
                    sql.Literal(self.settings.ann_expansion_add),
                    self._model,
                )
            )
        self._ready = True

    def missing(self, items: dict[int, str]) -> dict[int, str]:
        """Of key -> content hash, those without a vector for this model."""
        if not items:
            return {}
        have = {
            int(r["key"])
            for r in self.db.all(
                "SELECT key FROM block_vectors WHERE model = %s AND key = ANY(%s)",
                (self.model, list(items)),
            )
        }
        return {k: h for k, h in items.items() if k not in have}

    def reuse(self, items: dict[int, str]) -> int:
        """Copy vectors of equal content hashes onto these keys; return how many."""
        if not items:
            return 0
        return self.db.run(
            "INSERT INTO block_vectors (key, model, content_hash, embedding) "
            "SELECT i.key, %s, i.hash, e.embedding FROM unnest(%s::bigint[], %s::text[]) "
            "AS i(key, hash) CROSS JOIN LATERAL (SELECT v.embedding FROM block_vectors v "
            "WHERE v.model = %s AND v.content_hash = i.hash LIMIT 1) e "
            "ON CONFLICT (model, key) DO NOTHING",
            (self.model, list(items), list(items.values()), self.model),
        )

    def put(self, keys: Sequence[int], hashes: Sequence[str], vectors: Matrix) -> None:
        """Store vectors (a retried batch overwrites its own rows, nothing else); the index
        takes them in once it exists (see the module docstring)."""
        rows = [
            (int(k), self.model, h, _literal(v))
            for k, h, v in zip(keys, hashes, np.asarray(vectors, np.float32), strict=True)
        ]
        with self.db.tx() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO block_vectors (key, model, content_hash, embedding) "
                "VALUES (%s, %s, %s, %s::vector) ON CONFLICT (model, key) DO UPDATE SET "
                "content_hash = excluded.content_hash, embedding = excluded.embedding",
                rows,
            )

    def search(self, query: Matrix, n: int, filters: SearchFilters) -> list[tuple[int, float]]:
        """Top-n (key, inner product) among the allowed vectors (see the module docstring)."""
        if n <= 0:
            return []
        self._ensure_index()
        q = _literal(query)
        if not filters.source_ids:
            hits = self._query(q, n, filters, indexed=True)
            if len(hits) >= n:
                return hits
        return self._query(q, n, filters, indexed=False)

    def _query(
        self, q: str, n: int, filters: SearchFilters, *, indexed: bool
    ) -> list[tuple[int, float]]:
        cond, params = where(filters)
        dist = (
            sql.SQL("{} <#> %s::vector({})").format(self._typed, sql.Literal(self.dim))
            if indexed
            else sql.SQL("(v.embedding <#> %s::vector)")
        )
        query = sql.SQL(
            "SELECT v.key, -({dist}) AS score FROM block_vectors v JOIN {from_} ON ib.key = v.key "
            "WHERE v.model = {model} AND {cond} ORDER BY {dist} LIMIT %s"
        ).format(
            dist=dist,
            from_=sql.SQL(FROM),
            model=self._model,
            cond=sql.SQL(cond),
        )
        ef = max(self.settings.ann_expansion_search, n)
        with self.db.tx() as conn:
            conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef)))
            conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            rows = conn.execute(query, [q, *params, q, n]).fetchall()
        return [(int(r["key"]), float(r["score"])) for r in rows]

    def vectors(self, keys: Sequence[int]) -> dict[int, Matrix]:
        """Stored vectors by key (for MMR)."""
        if not keys:
            return {}
        rows = self.db.all(
            "SELECT key, embedding::real[] AS e FROM block_vectors "
            "WHERE model = %s AND key = ANY(%s)",
            (self.model, [int(k) for k in keys]),
        )
        return {int(r["key"]): np.asarray(r["e"], np.float32) for r in rows}

    def purge_other_models(self) -> int:
        """Delete vectors of every other embedding model; return how many."""
        return self.db.run("DELETE FROM block_vectors WHERE model != %s", (self.model,))

    def unindexed(self, source_id: str) -> int:
        """Blocks of the source without a lexical row or a vector of this model."""
        row = self.db.one(
            "SELECT count(*) AS n FROM blocks b LEFT JOIN index_blocks ib ON ib.block_id = b.id "
            "LEFT JOIN block_vectors v ON v.key = ib.key AND v.model = %s "
            "WHERE b.source_id = %s AND v.key IS NULL",
            (self.model, source_id),
        )
        return int(row["n"]) if row else 0

    def sync(self) -> None:
        """Create the HNSW index when it does not exist yet; PostgreSQL maintains it after."""
        self._ensure_index()
