"""Search filters and their SQL: every filter, ACL included, is part of the query itself."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from footnote.types import Hit


@dataclass(frozen=True)
class SearchFilters:
    """Which blocks a search may return.

    - `source_ids`: only these sources (superseded versions allowed when named here);
    - `section_prefix`: the block's section path starts with this path (case-insensitive,
      component by component: `("Methods",)` matches `["Methods", "Data"]`);
    - `kinds`: block kinds; `pages`: inclusive page range; `labels`: the source carries all;
    - `user_groups`: `None` is unrestricted (the local user); otherwise a source with empty
      `acl_groups` is public and any other source is visible only when the groups intersect.
    """

    source_ids: tuple[str, ...] = ()
    section_prefix: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    pages: tuple[int, int] | None = None
    labels: tuple[str, ...] = ()
    user_groups: tuple[str, ...] | None = None

    @property
    def block_level(self) -> bool:
        """True when a filter looks at blocks, not only at their sources."""
        return bool(self.section_prefix or self.kinds or self.pages is not None)


SearchFn = Callable[[str, int, SearchFilters], list[Hit]]
"""`search(query, k, filters)`: the hits of a search (the workspace's searcher, or a stand-in)."""


def _marks(n: int) -> str:
    return ",".join("?" * n)


def source_where(f: SearchFilters, s: str = "s") -> tuple[str, list[object]]:
    """SQL condition on the `sources` alias `s`: ids or not superseded, labels, ACL."""
    conds: list[str] = []
    params: list[object] = []
    if f.source_ids:
        conds.append(f"{s}.id IN ({_marks(len(f.source_ids))})")
        params.extend(f.source_ids)
    else:
        conds.append(f"{s}.superseded_by IS NULL")
    for label in f.labels:
        conds.append(f"EXISTS (SELECT 1 FROM json_each({s}.labels) WHERE value = ?)")
        params.append(label)
    if f.user_groups is not None:
        acl = f"{s}.acl_groups = '[]'"
        if f.user_groups:
            acl = (
                f"({acl} OR EXISTS (SELECT 1 FROM json_each({s}.acl_groups) "
                f"WHERE value IN ({_marks(len(f.user_groups))})))"
            )
            params.extend(f.user_groups)
        conds.append(acl)
    return " AND ".join(conds), params


def block_where(f: SearchFilters, b: str = "b") -> tuple[str, list[object]]:
    """SQL condition on the `blocks` alias `b`: section prefix, kinds, pages ('1' if none)."""
    conds: list[str] = []
    params: list[object] = []
    if f.section_prefix:
        exact = json.dumps(list(f.section_prefix), ensure_ascii=False)
        like = _escape_like(exact[:-1]) + ", %"
        conds.append(
            f"(lower({b}.section_path) = lower(?) OR lower({b}.section_path) "
            "LIKE lower(?) ESCAPE '\\')"
        )
        params.extend([exact, like])
    if f.kinds:
        conds.append(f"{b}.kind IN ({_marks(len(f.kinds))})")
        params.extend(f.kinds)
    if f.pages is not None:
        conds.append(f"{b}.page BETWEEN ? AND ?")
        params.extend([f.pages[0], f.pages[1]])
    return (" AND ".join(conds) or "1"), params


def all_where(f: SearchFilters, b: str = "b", s: str = "s") -> tuple[str, list[object]]:
    """Block and source conditions together (for a query joining both)."""
    bw, bp = block_where(f, b)
    sw, sp = source_where(f, s)
    return f"{bw} AND {sw}", bp + sp


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
