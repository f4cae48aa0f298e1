"""Filters as FTS5 tokens, and the pruned MATCH expression a lexical search runs.

Every indexed row carries a `scope` column of tokens (written by SQL: the `index_scope` view
of migration 0003, kept current by a trigger on `sources`):

    k<kind>0  s<source id>0  pub0 | rst0 g<group>0…  l<label>0…  p<c1>0 p<c1>x<c2>0…  [old0]

where `<x>` is the lower-case hex of the UTF-8 value (section components ASCII-lower-cased,
as SQL `lower()` does) and the final `0` keeps the porter stemmer away. A search ANDs/NOTs
them with the query terms, restricted to the `scope` column (so a block whose text says
"pub0" gains nothing), so every filter but the page range runs inside the FTS5 query and
`ORDER BY rank LIMIT n` only ever ranks allowed rows. Broad clauses are checked on the
stored scope text in the same SELECT instead (see `plan`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from footnote.index.filters import SearchFilters

PUBLIC, RESTRICTED, SUPERSEDED = "pub0", "rst0", "old0"  # rst0: not public
TEXT_COLUMNS = "{section body cjk}"
BM25_WEIGHTS = (0.5, 1.0, 1.0, 0.0)
"""bm25() column weights: section path, body (text + table), jieba CJK words, scope (none)."""
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _hex(value: str) -> str:
    return value.encode("utf-8").hex()


def source_token(source_id: str) -> str:
    return f"s{_hex(source_id)}0"


def group_token(group: str) -> str:
    return f"g{_hex(group)}0"


def label_token(label: str) -> str:
    return f"l{_hex(label)}0"


def kind_token(kind: str) -> str:
    return f"k{_hex(kind)}0"


def section_token(prefix: Sequence[str]) -> str:
    """Token of a section-path prefix (case-insensitive for ASCII, like SQL `lower()`)."""
    return "p" + "x".join(_hex(c.translate(_ASCII_LOWER)) for c in prefix) + "0"


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _any(tokens: Sequence[str]) -> str:
    return " OR ".join(_quote(t) for t in tokens)


Clause = tuple[str, list[str]]
"""("AND", tokens): the row has one of them; ("NOT", tokens): it has none of them."""


def scope_clauses(f: SearchFilters) -> list[Clause]:
    """The filters (all but the page range) as scope-token clauses, equivalent to
    `filters.source_where` + `filters.block_where`."""
    out: list[Clause] = []
    if f.source_ids:
        out.append(("AND", [source_token(s) for s in dict.fromkeys(f.source_ids)]))
    else:
        out.append(("NOT", [SUPERSEDED]))
    for label in f.labels:
        out.append(("AND", [label_token(label)]))
    if f.user_groups is not None:  # public, or one of my groups
        out.append(("AND", [PUBLIC, *(group_token(g) for g in dict.fromkeys(f.user_groups))]))
    if f.kinds:
        out.append(("AND", [kind_token(k) for k in dict.fromkeys(f.kinds)]))
    if f.section_prefix:
        out.append(("AND", [section_token(f.section_prefix)]))
    return out


def plan(
    terms: Sequence[str],
    clauses: Sequence[Clause],
    df: Callable[[str], int],
    rows: int,
    lazy_fraction: float,
) -> tuple[str, str, list[object]]:
    """(MATCH expression, extra SQL condition on `scope` or "", its parameters).

    A clause goes into MATCH unless it is an AND whose tokens are on at least `lazy_fraction`
    of the rows: FTS5's bm25() walks every phrase's whole posting list once per query (for
    its idf), which for `pub0` on half of a million rows costs more than the search. Such a
    broad clause becomes a condition on the stored `scope` text in the same SELECT, which
    SQLite checks row by row in rank order *before* LIMIT counts the row, so it still
    filters inside the query, and about n / fraction rows are looked at."""
    expr = f"{TEXT_COLUMNS}: ({_any(terms)})"
    conds: list[str] = []
    params: list[object] = []
    for op, tokens in clauses:
        if op == "AND" and rows and sum(df(t) for t in tokens) >= lazy_fraction * rows:
            conds.append(
                "(" + " OR ".join(["instr(' ' || scope || ' ', ?) > 0"] * len(tokens)) + ")"
            )
            params += [f" {t} " for t in tokens]
        else:
            expr = f"({expr}) {op} (scope: ({_any(tokens)}))"
    return expr, " AND ".join(conds), params


def prune_terms(terms: Sequence[str], df: dict[str, int], budget: int) -> list[str]:
    """The query terms worth matching, in their original order.

    FTS5 scores every row that matches any term, so the cost grows with the summed document
    frequency. Terms are taken rarest first while that sum stays within `budget` (the rarest
    one always). The dropped terms are the most common, i.e. those with the lowest BM25 idf
    (a term in more than half the rows scores ~0 in FTS5's bm25()), so the rows that matched
    only them were the ones ranking last.
    """
    if not terms:
        return []
    order = sorted(range(len(terms)), key=lambda i: (df.get(terms[i], 0), i))
    keep: set[int] = set()
    total = 0
    for i in order:
        d = df.get(terms[i], 0)
        if keep and total + d > budget:
            break
        keep.add(i)
        total += d
    return [t for i, t in enumerate(terms) if i in keep]
