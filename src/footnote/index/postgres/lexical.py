"""PostgreSQL full-text lexical backend, ranked by BM25 like the embedded index.

Each indexed block has a `tsvector`: its section path (weight B) and body stemmed by the
`english` configuration, plus the jieba search-mode words of its CJK runs as lexemes of
their own (the same segmentation as the embedded `cjk` column, see `lexical_text`); a GIN
index finds the rows matching any query lexeme. The score is FTS5's bm25() (k1 1.2, b 0.75,
section weight 0.5, idf ln((N - df + 0.5) / (df + 0.5)) floored at 1e-6) computed in SQL from
the row's positions, its token count and the document frequencies that statement triggers
keep in `lexical_terms` / `lexical_totals` (migration 0001). Every filter and the ACL are
conditions of the same query, so only allowed rows are ranked. Query terms are pruned
rarest-first to a budget of summed document frequencies, as the embedded index does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from footnote.index.filters import SearchFilters
from footnote.index.lexical_text import block_text, cjk_words, mark_cjk, query_terms, word_runs
from footnote.index.postgres.filters import FROM, where
from footnote.index.scope import prune_terms
from footnote.store.postgres import PgStore
from footnote.store.rows import block_from_row
from footnote.types import Block

HL = ("«", "»")
MAX_POSTINGS = 20_000
"""Budget of summed document frequencies of the query terms kept (see `scope.prune_terms`)."""
K1, B, SECTION_WEIGHT = 1.2, 0.75, 0.5

_TSV = "setweight(to_tsvector('english', %s), 'B') || to_tsvector('english', %s) || %s::tsvector"
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


def cjk_tsvector(section: str, body: str) -> str:
    """The jieba words of the CJK runs as a tsvector literal (positions in order)."""
    words = cjk_words(f"{section}\n{body}")
    positions: dict[str, list[int]] = {}
    for i, w in enumerate(words[:16000], start=1):
        positions.setdefault(w, []).append(i)
    return " ".join(f"{_quote(w)}:{','.join(map(str, p[:256]))}" for w, p in positions.items())


class PgLexical:
    """`LexicalBackend` on the PostgreSQL store's database."""

    def __init__(self, store: PgStore, *, max_postings: int | None = MAX_POSTINGS) -> None:
        self.db = store.db
        self.max_postings = max_postings

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
            rows = [_row(b) for b in blocks if b.id not in known]
            added = 0
            if rows:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO index_blocks (block_id, body, tsv, len) "
                        f"SELECT %s, %s, v.tsv, (SELECT coalesce(sum(array_length(u.positions, 1)), 0) "
                        f"FROM unnest(v.tsv) u) FROM (SELECT {_TSV} AS tsv) v "
                        "ON CONFLICT (block_id) DO NOTHING",
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

    def rebuild(self) -> None:
        """Re-derive every row's tsvector from its block (keys kept), then the statistics."""
        with self.db.tx() as conn:
            rows = conn.execute(
                "SELECT ib.key, b.* FROM index_blocks ib JOIN blocks b ON b.id = ib.block_id"
            ).fetchall()
            with conn.cursor() as cur:
                cur.executemany(
                    f"UPDATE index_blocks SET body = %s, tsv = v.tsv, len = (SELECT "
                    f"coalesce(sum(array_length(u.positions, 1)), 0) FROM unnest(v.tsv) u) "
                    f"FROM (SELECT {_TSV} AS tsv) v WHERE key = %s",
                    [(*_row(block_from_row(r))[1:], r["key"]) for r in rows],
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

    def lexemes(self, query: str) -> dict[str, int]:
        """The query's lexemes (English stems, then CJK words) with their document frequency."""
        latin, cjk = query_terms(query)
        if not latin and not cjk:
            return {}
        rows = self.db.all(
            "SELECT l.term, coalesce(t.df, 0) AS df, l.i FROM unnest("
            "tsvector_to_array(to_tsvector('english', %s)) || %s::text[]) WITH ORDINALITY "
            "AS l(term, i) LEFT JOIN lexical_terms t ON t.term = l.term ORDER BY l.i",
            (" ".join(latin), cjk),
        )
        return {r["term"]: int(r["df"]) for r in rows}

    def search(self, query: str, n: int, filters: SearchFilters) -> list[tuple[int, float]]:
        """BM25 top-n among the rows the filters allow (higher is better)."""
        df = self.lexemes(query)
        terms = [t for t, d in df.items() if d > 0]
        if not terms or n <= 0:
            return []
        if self.max_postings is not None and len(terms) > 1:
            budget = self.max_postings * (20 if filters.source_ids else 1)
            terms = prune_terms(terms, df, budget)
        cond, params = where(filters)
        tsq = " | ".join(_quote(t) for t in terms)
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


def _row(b: Block) -> tuple[Any, ...]:
    section, body = " / ".join(b.section_path), block_text(b)
    return (b.id, body, word_runs(section), word_runs(body), cjk_tsvector(section, body))
