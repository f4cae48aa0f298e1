"""SQLite FTS5 lexical backend (`blocks_fts`, keys in `index_blocks`; migration 0002)."""

from __future__ import annotations

from collections.abc import Sequence

from footnote.index.filters import SearchFilters, all_where
from footnote.index.tokens import fts_columns, fts_match, mark_cjk, query_terms
from footnote.store import SqliteStore
from footnote.types import Block

BM25_WEIGHTS = (0.5, 1.0, 1.0)
"""bm25() column weights: section path, body (text + table), jieba CJK words."""
HL = ("«", "»")


class SqliteLexical:
    """`LexicalBackend` on the store's own SQLite connection."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store

    def add(self, blocks: Sequence[Block]) -> tuple[dict[str, int], int]:
        """Register keys and FTS rows for blocks not yet indexed (one transaction);
        return block id -> key for all of them and how many were new."""
        conn = self.store.conn
        ids = [b.id for b in blocks]
        with self.store.lock:
            known = self._keys(ids)
            todo = [b for b in blocks if b.id not in known]
            if todo:
                rows = [(b, fts_columns(b)) for b in todo]
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for block, (section, body, cjk) in rows:
                        cur = conn.execute(
                            "INSERT INTO index_blocks(block_id) VALUES (?)", (block.id,)
                        )
                        conn.execute(
                            "INSERT INTO blocks_fts(rowid, section, body, cjk) VALUES (?,?,?,?)",
                            (cur.lastrowid, section, body, cjk),
                        )
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                known = self._keys(ids)
        return known, len(todo)

    def rebuild(self) -> None:
        """Rewrite every FTS row from the stored blocks (after a tokenizer change)."""
        conn = self.store.conn
        with self.store.lock:
            rows = conn.execute("SELECT key, block_id FROM index_blocks").fetchall()
            blocks = self.store.get_blocks([r[1] for r in rows])
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("DELETE FROM blocks_fts")
                conn.executemany(
                    "INSERT INTO blocks_fts(rowid, section, body, cjk) VALUES (?,?,?,?)",
                    [(k, *fts_columns(blocks[b])) for k, b in rows if b in blocks],
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _keys(self, block_ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for i in range(0, len(block_ids), 500):
            chunk = list(block_ids[i : i + 500])
            marks = ",".join("?" * len(chunk))
            for key, bid in self.store.conn.execute(
                f"SELECT key, block_id FROM index_blocks WHERE block_id IN ({marks})", chunk
            ):
                out[bid] = key
        return out

    def block_ids(self, keys: Sequence[int]) -> dict[int, str]:
        """Key -> block id."""
        out: dict[int, str] = {}
        with self.store.lock:
            for i in range(0, len(keys), 500):
                chunk = list(keys[i : i + 500])
                marks = ",".join("?" * len(chunk))
                for key, bid in self.store.conn.execute(
                    f"SELECT key, block_id FROM index_blocks WHERE key IN ({marks})", chunk
                ):
                    out[key] = bid
        return out

    def search(self, query: str, n: int, filters: SearchFilters) -> list[tuple[int, float]]:
        """BM25 top-n with every filter in the WHERE clause; score = -bm25 (higher is better)."""
        match = fts_match(query)
        if match is None:
            return []
        where, params = all_where(filters)
        w = ",".join(str(x) for x in BM25_WEIGHTS)
        sql = (
            f"SELECT f.rowid, bm25(blocks_fts, {w}) AS r FROM blocks_fts f "
            "JOIN index_blocks ib ON ib.key = f.rowid JOIN blocks b ON b.id = ib.block_id "
            f"JOIN sources s ON s.id = b.source_id WHERE blocks_fts MATCH ? AND {where} "
            "ORDER BY r LIMIT ?"
        )
        with self.store.lock:
            rows = self.store.conn.execute(sql, [match, *params, n]).fetchall()
        return [(int(k), -float(r)) for k, r in rows]

    def highlight(self, query: str, keys: Sequence[int]) -> dict[int, str]:
        """Body text with matched terms (stemmed Latin words, jieba CJK words) in « ».

        The hits' bodies are copied into a TEMP FTS5 table with the same tokenizer and
        highlighted there, so the cost does not grow with the corpus (a MATCH on the main
        table would walk every posting list of the query's terms).
        """
        if not keys:
            return {}
        match = fts_match(query)
        _, cjk = query_terms(query)
        marks = ",".join("?" * len(keys))
        conn = self.store.conn
        with self.store.lock:
            bodies = dict(
                conn.execute(
                    f"SELECT rowid, body FROM blocks_fts WHERE rowid IN ({marks})", list(keys)
                ).fetchall()
            )
            marked: dict[int, str] = {}
            if match is not None and bodies:
                conn.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.hl_fts USING fts5(body, "
                    "tokenize = 'porter unicode61 remove_diacritics 2')"
                )
                conn.execute("DELETE FROM temp.hl_fts")
                conn.executemany(
                    "INSERT INTO temp.hl_fts(rowid, body) VALUES (?,?)", list(bodies.items())
                )
                marked = dict(
                    conn.execute(
                        "SELECT rowid, highlight(hl_fts, 0, ?, ?) FROM temp.hl_fts "
                        "WHERE hl_fts MATCH ?",
                        [*HL, match],
                    ).fetchall()
                )
                conn.execute("DELETE FROM temp.hl_fts")
        return {
            int(k): mark_cjk(marked.get(k) or str(body), cjk, *HL) for k, body in bodies.items()
        }

    def remove_source(self, source_id: str) -> int:
        """Delete the source's keys; FTS rows (trigger) and vectors (cascade) go with them."""
        with self.store.lock:
            cur = self.store.conn.execute(
                "DELETE FROM index_blocks WHERE block_id IN "
                "(SELECT id FROM blocks WHERE source_id = ?)",
                (source_id,),
            )
            orphans = self.store.conn.execute(
                "DELETE FROM index_blocks WHERE block_id NOT IN (SELECT id FROM blocks)"
            )
            return max(cur.rowcount, 0) + max(orphans.rowcount, 0)
