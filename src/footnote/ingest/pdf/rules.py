"""Ruled tables from the page's own vector rules (read by pypdfium2 with the text, so no
second parse of the page): rules are snapped and joined into edges, their crossings into
cells, connected cells into tables, and the page's text fragments into the cells.

The same idea as pdfplumber's "lines" strategy, without re-interpreting the page in Python.
"""

from __future__ import annotations

import bisect
from collections import defaultdict

from footnote.ingest.cleanup import clean_text, join_lines
from footnote.ingest.pdf.file import PageText
from footnote.ingest.pdf.headers import is_number, structure
from footnote.ingest.pdf.layout import TableItem
from footnote.ingest.raw import Line

_SNAP = 2.0
"""Rules this close (points) are one rule."""
_JOIN = 3.0
"""Collinear rules with a gap up to this are one rule."""
_TOL = 2.5
"""How far a crossing may miss."""

Edge = tuple[float, float, float]
"""(position, start, end): y, x0, x1 of a horizontal rule; x, y0, y1 of a vertical one."""


def ruled_tables(page: PageText) -> list[TableItem]:
    """The page's fully ruled tables (each cell closed by rules), with their cells' text."""
    if not page.fragments or len(page.hrules) < 2 or len(page.vrules) < 2 or page.n_paths > 3000:
        return []
    hs = _merge(page.hrules)
    vs = _merge(page.vrules)
    if len(hs) < 2 or len(vs) < 2:
        return []
    points = _crossings(hs, vs)
    cells = _cells(points, hs, vs)
    out = []
    for group in _groups(cells):
        item = _table(group, page.fragments)
        if item is not None:
            out.append(item)
    return out


def _merge(edges: list[Edge]) -> list[Edge]:
    """Snap rules at nearly the same position, then join collinear ones that touch."""
    by_pos: list[list[Edge]] = []
    for e in sorted(edges):
        if by_pos and e[0] - by_pos[-1][0][0] <= _SNAP:
            by_pos[-1].append(e)
        else:
            by_pos.append([e])
    out: list[Edge] = []
    for group in by_pos:
        pos = sum(e[0] for e in group) / len(group)
        spans = sorted((min(e[1], e[2]), max(e[1], e[2])) for e in group)
        start, end = spans[0]
        for a, b in spans[1:]:
            if a <= end + _JOIN:
                end = max(end, b)
            else:
                out.append((pos, start, end))
                start, end = a, b
        out.append((pos, start, end))
    return [e for e in out if e[2] - e[1] >= 3.0]


def _crossings(hs: list[Edge], vs: list[Edge]) -> set[tuple[float, float]]:
    found = set()
    for y, hx0, hx1 in hs:
        for x, vy0, vy1 in vs:
            if hx0 - _TOL <= x <= hx1 + _TOL and vy0 - _TOL <= y <= vy1 + _TOL:
                found.add((round(x, 1), round(y, 1)))
    return found


def _covered(edges: list[Edge], pos: float, a: float, b: float) -> bool:
    """An edge at `pos` runs from a to b (within tolerances)."""
    return any(abs(e[0] - pos) <= _TOL and e[1] - _TOL <= a and e[2] + _TOL >= b for e in edges)


def _cells(
    points: set[tuple[float, float]], hs: list[Edge], vs: list[Edge]
) -> list[tuple[float, float, float, float]]:
    """The smallest closed rectangle below-right of each crossing."""
    xs_at: dict[float, list[float]] = defaultdict(list)
    ys_at: dict[float, list[float]] = defaultdict(list)
    for x, y in points:
        xs_at[y].append(x)
        ys_at[x].append(y)
    for v in (*xs_at.values(), *ys_at.values()):
        v.sort()
    cells = []
    for x, y in sorted(points, key=lambda p: (p[1], p[0])):
        right = xs_at[y][bisect.bisect_right(xs_at[y], x) :]
        down = ys_at[x][bisect.bisect_right(ys_at[x], y) :]
        done = False
        for y2 in down:
            if not _covered(vs, x, y, y2):
                break
            for x2 in right:
                if not _covered(hs, y, x, x2):
                    break
                if (x2, y2) in points and _covered(vs, x2, y, y2) and _covered(hs, y2, x, x2):
                    cells.append((x, y, x2, y2))
                    done = True
                    break
            if done:
                break
    return cells


def _groups(
    cells: list[tuple[float, float, float, float]],
) -> list[list[tuple[float, float, float, float]]]:
    """Cells that share corners, grouped into tables."""
    parent = list(range(len(cells)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_corner: dict[tuple[float, float], int] = {}
    for i, (x0, y0, x1, y1) in enumerate(cells):
        for corner in ((x0, y0), (x1, y0), (x0, y1), (x1, y1)):
            j = by_corner.setdefault(corner, i)
            parent[find(i)] = find(j)
    groups: dict[int, list[tuple[float, float, float, float]]] = defaultdict(list)
    for i, cell in enumerate(cells):
        groups[find(i)].append(cell)
    return list(groups.values())


def _table(cells: list[tuple[float, float, float, float]], frags: list[Line]) -> TableItem | None:
    xs = sorted({c[0] for c in cells} | {c[2] for c in cells})
    ys = sorted({c[1] for c in cells} | {c[3] for c in cells})
    if len(xs) < 3 or len(ys) < 3:
        return None
    parts: list[list[list[str]]] = [[[] for _ in range(len(xs) - 1)] for _ in range(len(ys) - 1)]
    texts: dict[tuple[float, float, float, float], list[Line]] = defaultdict(list)
    for f in frags:
        cx, cy = (f.x0 + f.x1) / 2, (f.top + f.bottom) / 2
        for cell in cells:
            if cell[0] <= cx <= cell[2] and cell[1] <= cy <= cell[3]:
                texts[cell].append(f)
                break
    for cell, lines in texts.items():
        r, c = bisect.bisect_left(ys, cell[1]), bisect.bisect_left(xs, cell[0])
        centre = (min(f.x0 for f in lines) + max(f.x1 for f in lines)) / 2
        last = bisect.bisect_left(xs, cell[2]) - 1  # a merged cell: the column under its text
        c = min(max(bisect.bisect_right(xs, centre) - 1, c), max(last, c))
        if r < len(parts) and c < len(parts[r]):
            parts[r][c] = _bands(lines)
    if any(_stacked_numbers(" ".join(c)) for row in parts for c in row):
        return None  # the rules frame groups of a bigger table; its columns are read unruled
    left, right = _side_column(xs[0], ys, frags, -1), _side_column(xs[-1], ys, frags, 1)
    parts = [[*lc, *row, *rc] for lc, row, rc in zip(left[0], parts, right[0], strict=True)]
    grid = [g for row in parts for g in _split_stacked(row)]
    xs = [*left[1], *xs, *right[1]]  # a side column's outer edge
    header, top = _header_above(xs, ys[0], frags)
    grid = [row for row in header + grid if any(row)]
    if len(grid) < 2 or max(sum(1 for t in row if t) for row in grid) < 2:
        return None
    if sum(1 for row in grid for t in row if t) < 4:
        return None
    keep = [k for k in range(len(grid[0])) if any(row[k] for row in grid)]
    rows = [tuple(row[k] for k in keep) for row in grid]
    bbox = (xs[0], top, xs[-1], ys[-1])
    return TableItem(bbox, structure([list(r) for r in rows]))


def _header_above(xs: list[float], top: float, frags: list[Line]) -> tuple[list[list[str]], float]:
    """Unboxed header rows right above a grid of shaded cells, split into its columns; and
    the new top edge."""
    above = [
        f
        for f in frags
        if xs[0] - 2 <= (f.x0 + f.x1) / 2 <= xs[-1] + 2 and top - 60 < f.bottom <= top + 1
    ]
    bands: list[list[Line]] = []
    for f in sorted(above, key=lambda f: -f.bottom):
        if bands and abs(bands[-1][0].bottom - f.bottom) < 0.5 * max(f.height, 1):
            bands[-1].append(f)
        else:
            bands.append([f])
    rows: list[list[str]] = []
    edge = top
    width = xs[-1] - xs[0]
    for n, band in enumerate(bands):
        height = max(f.height for f in band)
        if edge - max(f.bottom for f in band) > 1.5 * height:
            break
        nxt = bands[n + 1] if n + 1 < len(bands) else []
        between = len(nxt) >= 2 and min(f.top for f in band) - max(f.bottom for f in nxt) <= height
        over = (
            bool(rows) and edge - band[0].bottom <= height and band[0].x1 - band[0].x0 < width / 3
        )
        if len(band) < 2 and not (between or over):
            break  # one label is kept set between header rows ("Model") or over them
        row = [""] * (len(xs) - 1)
        for f in sorted(band, key=lambda f: f.x0):
            k = min(max(bisect.bisect_right(xs, (f.x0 + f.x1) / 2) - 1, 0), len(row) - 1)
            row[k] = f"{row[k]} {f.text}".strip()
        rows.insert(0, row)
        edge = min(f.top for f in band)
    return rows, edge


def _stacked_numbers(text: str) -> bool:
    """Six or more numbers and nothing else in one cell: a column group, not a cell."""
    tokens = text.split()
    return len(tokens) >= 6 and all(is_number(t) for t in tokens)


def _bands(lines: list[Line]) -> list[str]:
    """A cell's text lines, top to bottom."""
    lines = sorted(lines, key=lambda f: (round(f.top), f.x0))
    bands: list[list[Line]] = []
    for f in lines:
        if bands and abs(bands[-1][-1].top - f.top) < 0.5 * max(f.height, 1):
            bands[-1].append(f)
        else:
            bands.append([f])
    return [" ".join(f.text for f in band) for band in bands]


def _side_column(
    edge: float, ys: list[float], frags: list[Line], side: int
) -> tuple[list[list[list[str]]], list[float]]:
    """An unruled column of short cells set right outside the grid's left (side -1) or right
    (side 1) edge, on the grid's rows: its cells per row, and its outer edge ([] if none)."""
    near = [
        f
        for f in frags
        if ys[0] - 1 <= (f.top + f.bottom) / 2 <= ys[-1] + 1
        and 0 <= (edge - f.x1 if side < 0 else f.x0 - edge) <= 30
    ]
    rows: list[list[list[str]]] = [[[]] for _ in range(len(ys) - 1)]
    if not near or any(f.x1 - f.x0 > 60 or len(f.text) > 15 for f in near):
        return [[] for _ in range(len(ys) - 1)], []
    for r in range(len(ys) - 1):
        rows[r] = [_bands([f for f in near if ys[r] <= (f.top + f.bottom) / 2 < ys[r + 1]])]
    if sum(1 for row in rows if row[0]) < 0.6 * len(rows):
        return [[] for _ in range(len(ys) - 1)], []
    outer = min(f.x0 for f in near) if side < 0 else max(f.x1 for f in near)
    return rows, [outer]


def _split_stacked(row: list[list[str]]) -> list[list[str]]:
    """A ruled row whose number cells each stack n lines ("0.965 / 0.969" beside "OTSL /
    HTML") is n rows; a one-line cell (a label set over them) stands in each."""
    stacked = [c for c in row if len(c) >= 2]
    n = len(stacked[0]) if stacked else 1
    numbers = sum(1 for c in stacked if all(is_number(t) for t in c))
    if n < 2 or any(len(c) not in (0, 1, n) for c in row) or numbers < max(2, len(stacked) // 2):
        return [[clean_text(join_lines(c)) for c in row]]
    return [[clean_text(c[k] if len(c) == n else join_lines(c)) for c in row] for k in range(n)]
