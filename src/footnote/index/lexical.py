"""SQLite FTS5 lexical backend (`blocks_fts`, keys in `index_blocks`; migrations 0002, 0003).

A search is one FTS5 query: `MATCH` holds the (pruned) query terms and every filter as scope
tokens (see `scope`), the page range is a condition on the UNINDEXED `page` column, and FTS5
itself ranks (`rank MATCH 'bm25(…)' ORDER BY rank LIMIT n`), so nothing is joined or
filtered after ranking and only the `n` returned rows are ever looked at again. SQL applies
the page condition to rows in rank order before counting them against LIMIT, so it too
removes rows before the top n is taken, never after.

Cost is dominated by the posting lists FTS5 walks (bm25() counts every phrase's rows for its
idf, then scores every matching row), so query terms are pruned rarest-first to a budget of
summed document frequencies (`scope.prune_terms`). A term's frequency is counted with a
MATCH capped at the budget (cached); only when every term is over it are exact counts read
from an `fts5vocab` table (a whole posting-list walk, cached), keyed by the porter stems the
index holds (found by tokenizing the terms in a TEMP FTS5 table with the same tokenizer).

Above `memory_threshold` rows the query goes to `bm25.Bm25Index` instead: the same bm25()
ranking of the same unpruned terms under the same scope filters, computed on in-memory posting
arrays derived from this table (milliseconds at a million rows, where FTS5 needs seconds
unpruned). FTS5 still answers when a query word is a phrase to its tokenizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from footnote.index.bm25 import Bm25Index
from footnote.index.filters import SearchFilters
from footnote.index.lexical_text import fts_columns, fts_match, mark_cjk, match_terms, query_terms
from footnote.index.postings import TOKENIZE, fts_averages, tokenize_words
from footnote.index.scope import BM25_WEIGHTS, TEXT_COLUMNS, plan, prune_terms, scope_clauses
from footnote.store.sqlite import SqliteStore, rollback
from footnote.types import Block

HL = ("«", "»")
MAX_POSTINGS = 20_000
"""Default budget of summed document frequencies of the query terms kept (see module doc):
bm25() took 2.5-3.5 µs per matching row on the shared 2-core bench host (load 5-10), so 20k
bounds the scoring to tens of ms. An index under 20k rows never loses a term."""
SOURCE_FILTER_FACTOR = 20
"""With `source_ids` only the named sources' rows are scored; what remains is bm25()'s idf
count, a cheap walk of each term's posting list, so the budget is this many times larger."""
LAZY_FRACTION = 0.05
"""AND filters on at least this fraction of rows are checked on the scope text (`scope.plan`)."""
RANK = f"bm25({', '.join(str(w) for w in BM25_WEIGHTS)})"
_INSERT = (
    "INSERT INTO blocks_fts(rowid, section, body, cjk, scope, page) "
    "SELECT key, ?, ?, ?, scope, page FROM index_scope WHERE key = ?"
)
_CACHE_MAX = 100_000


class SqliteLexical:
    """`LexicalBackend` on the store's own SQLite connection."""

    def __init__(
        self,
        store: SqliteStore,
        *,
        max_postings: int | None = MAX_POSTINGS,
        lazy_fraction: float = LAZY_FRACTION,
        memory_threshold: int | None = None,
        index_dir: Path | None = None,
    ) -> None:
        self.store = store
        self.max_postings = max_postings
        self.lazy_fraction = lazy_fraction
        self.memory_threshold = memory_threshold
        self.memory = Bm25Index(store, index_dir / "lexical" if index_dir else None)
        self._counts: dict[str, tuple[int, int]] = {}
        self._stems: dict[str, tuple[str, ...]] = {}
        self._df: dict[str, int] = {}
        self._df_rows = 0
        self._temp_ready = False

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
                        conn.execute(_INSERT, (section, body, cjk, cur.lastrowid))
                    conn.execute("COMMIT")
                except BaseException:
                    rollback(conn)
                    raise
                known = self._keys(ids)
        return known, len(todo)

    def rebuild(self) -> None:
        """Rewrite every FTS row (text and scope) from the stored blocks and sources."""
        conn = self.store.conn
        with self.store.lock:
            rows = conn.execute("SELECT key, block_id FROM index_blocks").fetchall()
            blocks = self.store.get_blocks([r[1] for r in rows])
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("DELETE FROM blocks_fts")
                conn.executemany(
                    _INSERT, [(*fts_columns(blocks[b]), k) for k, b in rows if b in blocks]
                )
                conn.execute(
                    "UPDATE index_generation SET gen = gen + 1 WHERE name = 'lexical_text'"
                )
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
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
        """BM25 top-n with every filter inside the FTS5 query; score = -bm25 (higher is better)."""
        terms = match_terms(query)
        if not terms or n <= 0:
            return []
        if self._in_memory():
            hits = self.memory.search(terms, n, scope_clauses(filters), filters.pages)
            if hits is not None:
                return hits
        sql = "SELECT rowid, rank FROM blocks_fts WHERE blocks_fts MATCH ? AND rank MATCH ?"
        with self.store.lock:
            expr, cond, params = self.plan(terms, filters)
            if cond:
                sql += f" AND {cond}"
            if filters.pages is not None:
                sql += " AND page BETWEEN ? AND ?"
                params += [filters.pages[0], filters.pages[1]]
            rows = self.store.conn.execute(f"{sql} ORDER BY rank LIMIT ?", [expr, RANK, *params, n])
            return [(int(k), -float(r)) for k, r in rows.fetchall()]

    def _in_memory(self) -> bool:
        """Whether searches go to the in-memory index (`bm25.Bm25Index`)."""
        if self.memory_threshold is None:
            return False
        with self.store.lock:
            return self._rows() > self.memory_threshold

    def sync(self) -> None:
        """Bring the in-memory index up to date and save it, when the corpus is large enough
        to use it (the indexer calls this after each source, so searches start warm)."""
        if self._in_memory():
            self.memory.refresh(save=True)

    def plan(self, terms: Sequence[str], filters: SearchFilters) -> tuple[str, str, list[object]]:
        """MATCH expression (pruned terms, see `scope.prune_terms`, and narrow filters) and
        the SQL condition for broad filters (see `scope.plan`)."""
        total = self._rows()
        if total != self._df_rows and abs(total - self._df_rows) * 20 > total:
            self._df.clear()
            self._counts.clear()
            self._df_rows = total
        if self.max_postings is not None and len(terms) > 1:
            budget = self.max_postings * (SOURCE_FILTER_FACTOR if filters.source_ids else 1)
            df = {t: self._term_df(t, budget + 1) for t in terms}
            if min(df.values()) > budget:  # all common: rank them by their exact counts
                stems = self._stem(terms)
                df = {t: min((self._token_df(x) for x in stems[t]), default=0) for t in terms}
            terms = prune_terms(terms, df, budget)
        return plan(terms, scope_clauses(filters), self._token_df, total, self.lazy_fraction)

    def _term_df(self, term: str, cap: int) -> int:
        """Rows matching a query term, counted up to `cap` (so a common term costs `cap`
        posting-list steps, not its whole list); cached like `_token_df`."""
        hit = self._counts.get(term)
        if hit is None or (hit[0] >= hit[1] and hit[1] < cap):
            if len(self._counts) > _CACHE_MAX:
                self._counts.clear()
            row = self.store.conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM blocks_fts WHERE blocks_fts MATCH ? LIMIT ?)",
                (f'{TEXT_COLUMNS}: "{term.replace(chr(34), chr(34) * 2)}"', cap),
            ).fetchone()
            hit = (int(row[0]), cap)
            self._counts[term] = hit
        return min(hit[0], cap)

    def _temp(self) -> None:
        if self._temp_ready:
            return
        conn = self.store.conn
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fn_vocab USING fts5vocab(main, blocks_fts, row)"
        )
        self._temp_ready = True

    def _rows(self) -> int:
        """Rows in the FTS table, from its averages record (FTS5 keeps the count there)."""
        return fts_averages(self.store.conn)[0]

    def _stem(self, terms: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Query term -> the tokens the index holds for it (porter stems), cached."""
        todo = [t for t in dict.fromkeys(terms) if t not in self._stems]
        if todo:
            if len(self._stems) > _CACHE_MAX:
                self._stems.clear()
            self._stems.update(tokenize_words(self.store.conn, todo))
        return {t: self._stems[t] for t in terms}

    def _token_df(self, token: str) -> int:
        """Rows holding an index token (cached until the row count moves by 5 %)."""
        if token not in self._df:
            self._temp()
            if len(self._df) > _CACHE_MAX:
                self._df.clear()
            row = self.store.conn.execute(
                "SELECT doc FROM temp.fn_vocab WHERE term = ?", (token,)
            ).fetchone()
            self._df[token] = int(row[0]) if row else 0
        return self._df[token]

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
                    f"tokenize = '{TOKENIZE}')"
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
