"""Unruled tables set across both columns of a two-column page: their row-label columns sit
left of the gutter and their numbers right of it, so they are found on the whole page width
before the page is split into columns (else the labels become a paragraph of the left column)."""

from __future__ import annotations

from footnote.ingest.captions import TABLE_CAPTION
from footnote.ingest.pdf.file import PageText
from footnote.ingest.pdf.headers import is_value, structure
from footnote.ingest.pdf.layout import TableItem, find_gutter
from footnote.ingest.raw import Line

Band = list[Line]


def spanning_tables(page: PageText, found: list[TableItem]) -> list[TableItem]:
    """Tables crossing the page's middle, next to a "Table N" caption, made of rows with
    four or more cells and two or more numbers (frags inside `found` tables are skipped)."""
    frags = [f for f in page.fragments if not any(_inside(f, t.bbox) for t in found)]
    gutter = find_gutter(frags, page.width)
    if gutter is None:
        return []  # on a one-column page the column finders see whole rows already
    mid = gutter
    rows = _bands(frags)
    tabular = [k for k, r in enumerate(rows) if _tabular(r, mid, 0.3 * page.width)]
    out = []
    for run in _runs(rows, tabular):
        if len(run) < 3:
            continue
        top_k = _extend_up(rows, run[0], run)
        members = [f for k in range(top_k, run[-1] + 1) for f in rows[k]]
        x0, x1 = min(f.x0 for f in members), max(f.x1 for f in members)
        top, bottom = min(f.top for f in members), max(f.bottom for f in members)
        if not _captioned(frags, top, bottom):
            continue
        item = _table([rows[k] for k in range(top_k, run[-1] + 1)], (x0, top, x1, bottom))
        if item is not None:
            out.append(item)
    return out


def _inside(f: Line, bbox: tuple[float, float, float, float]) -> bool:
    cx, cy = (f.x0 + f.x1) / 2, (f.top + f.bottom) / 2
    return bbox[0] - 2 <= cx <= bbox[2] + 2 and bbox[1] - 2 <= cy <= bbox[3] + 2


def _bands(frags: list[Line]) -> list[Band]:
    """Fragments on one baseline across the whole page width, top to bottom."""
    rows: list[Band] = []
    for f in sorted(frags, key=lambda f: (f.top, f.x0)):
        if rows:
            top, bot = min(g.top for g in rows[-1]), max(g.bottom for g in rows[-1])
            if min(bot, f.bottom) - max(top, f.top) >= 0.5 * min(f.height, bot - top):
                rows[-1].append(f)
                continue
        rows.append([f])
    return [sorted(r, key=lambda f: f.x0) for r in rows]


def _cells(row: Band) -> list[Line]:
    """Fragments joined where the gap is a word space, not a column gap."""
    cells: list[Line] = []
    for f in row:
        if cells and f.x0 - cells[-1].x1 < 0.8 * max(f.size, 1.0):
            c = cells[-1]
            cells[-1] = Line(
                f"{c.text} {f.text}", c.x0, c.top, f.x1, c.bottom, c.size, c.bold, c.page
            )
        else:
            cells.append(f)
    return cells


def _tabular(row: Band, mid: float, widest: float) -> bool:
    """Four or more cells, two numbers, across the middle, no cell as wide as a column."""
    cells = _cells(row)
    values = sum(1 for c in cells if is_value(c.text))
    narrow = all(c.x1 - c.x0 <= widest for c in cells)
    return len(cells) >= 4 and values >= 2 and narrow and cells[0].x1 < mid < cells[-1].x0


def _runs(rows: list[Band], tabular: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for k in tabular:
        if runs:
            prev = rows[runs[-1][-1]]
            height = max(f.height for f in prev)
            if rows[k][0].top - max(f.bottom for f in prev) <= 2.5 * height:
                runs[-1].append(k)
                continue
        runs.append([k])
    return runs


def _extend_up(rows: list[Band], first: int, run: list[int]) -> int:
    """Header rows right above the run: close, inside its width, of short cells."""
    x0 = min(f.x0 for k in run for f in rows[k])
    x1 = max(f.x1 for k in run for f in rows[k])
    width = x1 - x0
    x0, x1 = x0 - 0.1 * width, x1 + 0.1 * width  # header cells run wider than the body's
    k = first
    while k > 0:
        above, here = rows[k - 1], rows[k]
        height = max(f.height for f in here)
        cells = _cells(above)
        if min(f.top for f in here) - max(f.bottom for f in above) > 1.5 * height:
            break
        if len(cells) < 2 or any(
            c.x0 < x0 or c.x1 > x1 or c.x1 - c.x0 > 0.4 * width for c in cells
        ):
            break
        k -= 1
    return k


def _captioned(frags: list[Line], top: float, bottom: float) -> bool:
    return any(
        TABLE_CAPTION.match(f.text)
        and (top - 60 <= f.bottom <= top or bottom <= f.top <= bottom + 60)
        for f in frags
    )


def _table(rows: list[Band], bbox: tuple[float, float, float, float]) -> TableItem | None:
    """Columns from the body rows' cells; label-only rows set between two rows (a label
    centred over its rows) join the nearest row."""
    cells = [_cells(r) for r in rows]
    first_body = next((k for k, r in enumerate(cells) if any(is_value(c.text) for c in r)), 0)
    spans: list[tuple[float, float]] = []
    for c in sorted((c for r in cells[first_body:] for c in r), key=lambda c: c.x0):
        if spans and c.x0 <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], c.x1))
        else:
            spans.append((c.x0, c.x1))
    if not 3 <= len(spans) <= 30:
        return None
    grid: list[list[str]] = []
    centres: list[float] = []
    for k, r in enumerate(cells):
        row = [""] * len(spans)
        for c in r:
            best = max(
                range(len(spans)),
                key=lambda j: (min(c.x1, spans[j][1]) - max(c.x0, spans[j][0]), -j),
            )
            row[best] = f"{row[best]} {c.text}".strip()
        if k > first_body and not any(is_value(t) for t in row) and grid:
            near = _nearest_free(grid, centres, row, (r[0].top + r[0].bottom) / 2, k, first_body)
            if near is not None:
                grid[near] = [a or b for a, b in zip(grid[near], row, strict=True)]
                continue
        grid.append(row)
        centres.append((r[0].top + r[0].bottom) / 2)
    if len(grid) < 3:
        return None
    return TableItem(bbox, structure(grid))


def _nearest_free(
    grid: list[list[str]], centres: list[float], row: list[str], y: float, k: int, first: int
) -> int | None:
    """The body row nearest to y whose cells are empty where `row` has text."""
    del k
    body = range(first, len(grid))
    free = [i for i in body if all(not grid[i][j] for j, t in enumerate(row) if t)]
    return min(free, key=lambda i: abs(centres[i] - y)) if free else None
