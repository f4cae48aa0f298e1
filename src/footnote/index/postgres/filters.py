"""Search filters as PostgreSQL conditions (the counterpart of `index.filters` for SQLite):
every filter, the ACL included, is a condition of the ranking query itself."""

from __future__ import annotations

import json

from footnote.index.filters import SearchFilters

FROM = "index_blocks ib JOIN blocks b ON b.id = ib.block_id JOIN sources s ON s.id = b.source_id"
"""The join every search ranks over (aliases `ib`, `b`, `s`)."""


def where(f: SearchFilters) -> tuple[str, list[object]]:
    """SQL condition on `b` (blocks) and `s` (sources) and its parameters."""
    conds: list[str] = []
    params: list[object] = []
    if f.source_ids:
        conds.append("s.id = ANY(%s)")
        params.append(list(f.source_ids))
    else:
        conds.append("s.superseded_by IS NULL")
    if f.labels:
        conds.append("s.labels_j @> %s::jsonb")
        params.append(json.dumps(list(f.labels)))
    if f.user_groups is not None:
        conds.append("(s.acl_j = '[]'::jsonb OR s.acl_j ?| %s::text[])")
        params.append(list(f.user_groups))
    if f.section_prefix:
        exact = json.dumps(list(f.section_prefix), ensure_ascii=False)
        conds.append(
            "(lower(b.section_path) = lower(%s) OR starts_with(lower(b.section_path), lower(%s)))"
        )
        params += [exact, exact[:-1] + ", "]
    if f.kinds:
        conds.append("b.kind = ANY(%s)")
        params.append(list(f.kinds))
    if f.pages is not None:
        conds.append("b.page BETWEEN %s AND %s")
        params += [f.pages[0], f.pages[1]]
    return " AND ".join(conds), params
