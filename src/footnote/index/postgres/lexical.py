"""PostgreSQL full-text lexical backend, ranked by BM25 like the embedded index.

Each indexed block has a `tsvector` of the very tokens the embedded FTS5 index holds: its
section path (weight B), body and the jieba words of its CJK runs, each column tokenized by
FTS5's own `porter unicode61` tokenizer in process (`postings.fts5_tokens`), so the two
backends stem, split and count alike; a GIN index finds the rows matching any query token.
The score is FTS5's bm25() (k1 1.2, b 0.75, section weight 0.5, idf ln((N - df + 0.5) /
(df + 0.5)) floored at 1e-6) computed in SQL from the row's positions, its token count and
the document frequencies that statement triggers keep in `lexical_terms` / `lexical_totals`
(migration 0001). Every filter and the ACL are conditions of the same query, so only allowed
rows are ranked. Query terms are pruned rarest-first to a budget of summed document
frequencies: only rows holding a kept term are candidates, but each candidate is scored with
every query term, as the embedded in-memory index ranks above its threshold (scoring by the
kept terms alone shared 0.49 of its top-10 at 1M blocks; every term, 0.95). A database indexed
by an older tokenizer (PostgreSQL's `english` stemmer, before migration 0004) is re-tokenized
once when it is opened.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from footnote.index.filters import SearchFilters
from footnote.index.lexical_text import block_text, fts_columns, mark_cjk, query_terms
from footnote.index.postgres.filters import FROM, where
from footnote.index.postings import TOKENIZE, fts5_tokens
from footnote.index.scope import prune_terms
from footnote.store.postgres import PgStore
from footnote.store.rows import block_from_row
from footnote.types import Block

log = logging.getLogger(__name__)
HL = ("«", "»")
MAX_POSTINGS = 20_000
"""Budget of summed document frequencies of the query terms kept (see `scope.prune_terms`)."""
K1, B, SECTION_WEIGHT = 1.2, 0.75, 0.5

_SCORE = f"""
WITH q AS (
    SELECT t.term, greatest(ln((tot.rows - t.df + 0.5) / (t.df + 0.5)), 1e-6) AS idf
    FROM lexical_terms t, lexical_totals tot WHERE t.term = ANY(%s)
), avg AS (SELECT greatest(len::float8 / greatest(rows, 1), 1) AS dl FROM lexical_totals),
c AS (SELECT ib.key, ib.tsv, ib.len FROM {FROM} WHERE ib.tsv @@ %s::tsquery AND {{where}})
SELECT c.key, sum(q.idf * f.tf * {K1 + 1} / (f.tf + {K1} * (1 - {B} + {B} * c.len / avg.dl)))
    AS score
FROM c CROSS JOIN avg CROSS JOIN LATERAL (
    SELECT u.lexeme, cardinality(u.positions)
        - {1 - SECTION_WEIGHT} * cardinality(array_positions(u.weights, 'B')) AS tf
    FROM unnest(c.tsv) u WHERE u.lexeme = ANY(%s)
) f JOIN q ON q.term = f.lexeme
GROUP BY c.key ORDER BY score DESC, c.key LIMIT %s
"""


def _quote(lexeme: str) -> str:
    """A lexeme as a tsvector/tsquery literal (quotes doubled, backslashes escaped)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


MAX_POSITION, MAX_POSITIONS, MAX_LEXEME_BYTES = 16383, 256, 2046
"""PostgreSQL's tsvector limits: a larger position is stored as 16383, a lexeme keeps at most
256 positions, and a longer lexeme is refused (such a token is left out; tf counts the
positions kept, the length every token)."""


def tsvector(section: Sequence[str], body: Sequence[str], cjk: Sequence[str]) -> tuple[str, int]:
    """A tsvector literal of the three columns' tokens (section weight B) and the row's
    length in tokens (FTS5's document size: every column's tokens)."""
    positions: dict[str, list[str]] = {}
    pos = 0
    for weight, tokens in (("B", section), ("", body), ("", cjk)):
        for token in tokens:
            pos += 1
            if len(token.encode()) <= MAX_LEXEME_BYTES:
                positions.setdefault(token, []).append(f"{min(pos, MAX_POSITION)}{weight}")
    literal = " ".join(f"{_quote(t)}:{','.join(p[:MAX_POSITIONS])}" for t, p in positions.items())
    return literal, pos


def rows_of(blocks: Sequence[Block]) -> list[tuple[str, str, str, int]]:
    """(block id, body, tsvector literal, length) of each block."""
    columns = [fts_columns(b) for b in blocks]
    out = []
    for b, tokens in zip(blocks, fts5_tokens(columns), strict=True):
        literal, length = tsvector(*tokens)
        out.append((b.id, block_text(b), literal, length))
    return out


class PgLexical:
    """`LexicalBackend` on the PostgreSQL store's database."""

    def __init__(self, store: PgStore, *, max_postings: int | None = MAX_POSTINGS) -> None:
        self.db = store.db
        self.max_postings = max_postings
        self._retokenize_if_older()

    def _retokenize_if_older(self) -> None:
        """Re-derive every row once when the database was indexed by another tokenizer."""
        row = self.db.one("SELECT tokenizer FROM lexical_meta WHERE id = 1")
        if row is not None and row["tokenizer"] == TOKENIZE:
            return
        log.warning("re-tokenizing the lexical index with FTS5's tokenizer (once; was %s)",
                    row["tokenizer"] if row else "unknown")  # fmt: skip
        self.rebuild(only_if_older=True)

    def add(self, blocks: Sequence[Block]) -> tuple[dict[str, int], int]:
        """Index blocks not yet indexed (one transaction); block id -> key for all of them
        and how many were new. Safe to run twice or concurrently: a block keeps one key."""
        ids = [b.id for b in blocks]
        with self.db.tx() as conn:
            known = {
                r["block_id"]
                for r in conn.execute(
                    "SELECT block_id FROM index_blocks WHERE block_id = ANY(%s)", (ids,)
                )
            }
            rows = rows_of([b for b in blocks if b.id not in known])
            added = 0
            if rows:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO index_blocks (block_id, body, tsv, len) "
                        "VALUES (%s, %s, %s::tsvector, %s) ON CONFLICT (block_id) DO NOTHING",
                        rows,
                    )
                added = len(rows)
            keys = {
                r["block_id"]: int(r["key"])
                for r in conn.execute(
                    "SELECT key, block_id FROM index_blocks WHERE block_id = ANY(%s)", (ids,)
                )
            }
        return keys, added

    def rebuild(self, *, only_if_older: bool = False) -> None:
        """Re-derive every row's tsvector from its block (keys kept), then the statistics
        (one transaction, under an advisory lock; with `only_if_older`, nothing when the
        database is already tokenized by FTS5's tokenizer, so two openers do it once)."""
        with self.db.tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('footnote.lexical.rebuild'))")
            meta = conn.execute("SELECT tokenizer FROM lexical_meta WHERE id = 1").fetchone()
            if only_if_older and meta is not None and meta["tokenizer"] == TOKENIZE:
                return
            rows = conn.execute(
                "SELECT ib.key, b.* FROM index_blocks ib JOIN blocks b ON b.id = ib.block_id"
            ).fetchall()
            keys = [r["key"] for r in rows]
            derived = rows_of([block_from_row(r) for r in rows])
            with conn.cursor() as cur:
                cur.executemany(
                    "UPDATE index_blocks SET body = %s, tsv = %s::tsvector, len = %s WHERE key = %s",
                    [
                        (body, tsv, n, key)
                        for key, (_, body, tsv, n) in zip(keys, derived, strict=True)
                    ],
                )
            conn.execute("DELETE FROM lexical_terms")
            conn.execute(
                "INSERT INTO lexical_terms (term, df) SELECT u.lexeme, count(*) "
                "FROM index_blocks ib, unnest(ib.tsv) u GROUP BY u.lexeme"
            )
            conn.execute(
                "UPDATE lexical_totals SET rows = (SELECT count(*) FROM index_blocks), "
                "len = (SELECT coalesce(sum(len), 0) FROM index_blocks)"
            )
            conn.execute(
                "INSERT INTO lexical_meta (id, tokenizer) VALUES (1, %s) ON CONFLICT (id) DO "
                "UPDATE SET tokenizer = excluded.tokenizer", (TOKENIZE,),
            )  # fmt: skip

    def lexemes(self, query: str) -> dict[str, int]:
        """The query's tokens (FTS5's porter stems of its words, then its CJK words) with
        their document frequency."""
        latin, cjk = query_terms(query)
        if not latin and not cjk:
            return {}
        words = [*latin, *cjk]
        terms = list(dict.fromkeys(t for row in fts5_tokens([(w,) for w in words]) for t in row[0]))
        if not terms:
            return {}
        df = {r["term"]: int(r["df"]) for r in self.db.all(
            "SELECT term, df FROM lexical_terms WHERE term = ANY(%s)", (terms,))}  # fmt: skip
        return {t: df.get(t, 0) for t in terms}

    def search(self, query: str, n: int, filters: SearchFilters) -> list[tuple[int, float]]:
        """BM25 top-n among the rows the filters allow (higher is better): candidates hold a
        term kept by the budget, scores count every query term."""
        df = self.lexemes(query)
        terms = [t for t, d in df.items() if d > 0]
        if not terms or n <= 0:
            return []
        kept = terms
        if self.max_postings is not None and len(terms) > 1:
            budget = self.max_postings * (20 if filters.source_ids else 1)
            kept = prune_terms(terms, df, budget)
        cond, params = where(filters)
        tsq = " | ".join(_quote(t) for t in kept)
        rows = self.db.all(_SCORE.format(where=cond), [terms, tsq, *params, terms, n])
        return [(int(r["key"]), float(r["score"])) for r in rows]

    def highlight(self, query: str, keys: Sequence[int]) -> dict[int, str]:
        """Body text with matched terms (English stems, jieba CJK words) in « »."""
        if not keys:
            return {}
        latin, cjk = query_terms(query)
        rows = self.db.all(
            "SELECT key, CASE WHEN q.q IS NULL OR numnode(q.q) = 0 THEN body ELSE ts_headline("
            "'english', body, q.q, 'HighlightAll=true, StartSel=«, StopSel=»') END AS marked "
            "FROM index_blocks, (SELECT to_tsquery('english', nullif(%s, '')) AS q) q "
            "WHERE key = ANY(%s)",
            (" | ".join(_quote(w) for w in latin), list(keys)),
        )
        return {int(r["key"]): mark_cjk(str(r["marked"]), cjk, *HL) for r in rows}

    def block_ids(self, keys: Sequence[int]) -> dict[int, str]:
        """Key -> block id."""
        rows = self.db.all(
            "SELECT key, block_id FROM index_blocks WHERE key = ANY(%s)", (list(keys),)
        )
        return {int(r["key"]): r["block_id"] for r in rows}

    def remove_source(self, source_id: str) -> int:
        """Drop a source's rows (vectors go with them by cascade)."""
        return self.db.run(
            "DELETE FROM index_blocks WHERE block_id IN "
            "(SELECT id FROM blocks WHERE source_id = %s)",
            (source_id,),
        )

    def sync(self) -> None:
        """Nothing derived to refresh: the statistics are kept by triggers."""
