"""Tables without rules, found from text alignment alone: runs of rows whose cells are mostly
numbers (financial statements, result tables without a caption), section rows inside them,
the header row above, columns from the gaps every row leaves open, and tables set side by
side split where a label column follows a number column."""

from __future__ import annotations

import itertools

from footnote.ingest.pdf.headers import is_number, structure
from footnote.ingest.pdf.layout import Row, TableItem
from footnote.ingest.pdf.tables import upper_headers
from footnote.ingest.raw import Line

_MIN_ROWS = 3


def _numeric_row(row: Row) -> bool:
    if row.table is not None or len(row.frags) < 2:
        return False
    rest = row.frags[1:]
    numbers = sum(1 for f in rest if is_number(f.text))
    return numbers >= max(1, (len(rest) + 1) // 2) and (len(row.frags) >= 3 or numbers == 1)


def _short_row(row: Row) -> bool:
    """A section row inside a table ("Assets", "盈利能力指标(%)")."""
    return row.table is None and len(row.frags) <= 2 and len(row.line.text) <= 40


def numeric_tables(rows: list[Row]) -> list[Row]:
    """Replace runs of number rows (with their header and section rows) by table rows."""
    out: list[Row] = []
    i = 0
    while i < len(rows):
        if not _numeric_row(rows[i]):
            out.append(rows[i])
            i += 1
            continue
        last, j = i, i + 1
        while j < len(rows) and _close(rows[j - 1], rows[j]):
            if _numeric_row(rows[j]):
                last = j
            elif not (_short_row(rows[j]) and j - last <= 2):
                break
            j += 1
        run = rows[i : last + 1]
        header = out[-1] if out and _header_row(out[-1], run[0]) else None
        numeric = sum(1 for r in run if _numeric_row(r))
        if numeric >= _MIN_ROWS or (header is not None and numeric >= _MIN_ROWS - 1):
            heads = upper_headers(out[:-1], header, run) if header is not None else []
            made = _tables([*heads, header, *run] if header else run)
            if made:
                del out[len(out) - len(heads) - (header is not None) :]
                out += made
                i = last + 1
                continue
        out += run
        i = last + 1
    return out


def _close(a: Row, b: Row) -> bool:
    size = max(a.line.size, 1.0)
    near = b.line.top - a.line.bottom < 2.0 * size
    return near and a.flow_left == b.flow_left and a.table is None and b.table is None


def _header_row(row: Row, first: Row) -> bool:
    """The row above a number run that names its columns."""
    if row.table is not None or len(row.frags) < 2 or (_numeric_row(row) and len(row.frags) < 3):
        return False
    gap = first.line.top - row.line.bottom
    return gap < 2.0 * max(first.line.size, 1.0) and row.flow_left == first.flow_left


def _spans(frags: list[Line]) -> list[tuple[float, float]]:
    """Column spans: x-intervals covered by cells, split where no cell crosses."""
    spans: list[tuple[float, float]] = []
    for f in sorted(frags, key=lambda f: f.x0):
        if spans and f.x0 <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], f.x1))
        else:
            spans.append((f.x0, f.x1))
    return spans


def _grid(run: list[Row], spans: list[tuple[float, float]]) -> list[list[str]]:
    grid = []
    for r in run:
        cells = [""] * len(spans)
        for f in r.frags:
            k = max(
                range(len(spans)),
                key=lambda k: (min(f.x1, spans[k][1]) - max(f.x0, spans[k][0]), -k),
            )
            cells[k] = f"{cells[k]} {f.text}".strip()
        grid.append(cells)
    return grid


def _tables(run: list[Row]) -> list[Row]:
    most = max(len(r.frags) for r in run)  # a group header over several columns joins none
    wide = [f for r in run if len(r.frags) >= max(3, 0.8 * most) for f in r.frags] or [
        f for r in run for f in r.frags
    ]
    spans = _spans(wide)
    if not 2 <= len(spans) <= 30:
        return []
    grid = _grid(run, spans)
    cuts = [0, *_side_by_side(grid), len(spans)]
    out = []
    for a, b in itertools.pairwise(cuts):
        part = [row[a:b] for row in grid]
        keep = [k for k, r in enumerate(part) if any(r)]
        if len(keep) < _MIN_ROWS or b - a < 2:
            continue
        rows = [tuple(part[k]) for k in keep]
        frags = [
            f
            for k in keep
            for f in run[k].frags
            if spans[a][0] - 1 <= f.x0 and f.x1 <= spans[b - 1][1] + 1
        ]
        if not frags:
            continue
        x0, x1 = min(f.x0 for f in frags), max(f.x1 for f in frags)
        top, bottom = run[keep[0]].line.top, run[keep[-1]].line.bottom
        table = structure([list(r) for r in rows])
        line = Line(table.as_text(), x0, top, x1, bottom, 0.0, False, run[0].line.page)
        out.append(
            Row(
                line,
                [],
                TableItem((x0, top, x1, bottom), table),
                run[0].flow_left,
                run[0].flow_right,
            )
        )
    return out


def _side_by_side(grid: list[list[str]]) -> list[int]:
    """Columns where a second table starts: mostly labels, right after a column of numbers."""
    cuts: list[int] = []
    width = len(grid[0])
    for c in range(2, width - 1):
        left = [r[c - 1] for r in grid if r[c - 1]]
        here = [r[c] for r in grid if r[c]]
        if len(here) < _MIN_ROWS or not left:
            continue
        labels = sum(1 for t in here if not is_number(t)) / len(here)
        numbers = sum(1 for t in left if is_number(t)) / len(left)
        if labels >= 0.8 and numbers >= 0.6 and (not cuts or c - cuts[-1] >= 2):
            cuts.append(c)
    return cuts
