"""Tables as structure: ruled tables via pdfplumber, unruled ones from aligned text columns."""

from __future__ import annotations

import io
import itertools
import logging
from collections.abc import Sequence

import pdfplumber

from footnote.ingest.captions import TABLE_CAPTION
from footnote.ingest.cleanup import clean_text
from footnote.ingest.pdf.file import PageText
from footnote.ingest.pdf.headers import structure
from footnote.ingest.pdf.layout import Row, TableItem
from footnote.ingest.raw import Line
from footnote.types import Table

log = logging.getLogger(__name__)

_LINES = {"vertical_strategy": "lines", "horizontal_strategy": "lines"}


def may_hold_ruled_table(page: PageText) -> bool:
    """Cheap pre-check before pdfplumber (~0.5 s a page): enough rules, and a caption or a grid."""
    if not page.fragments or page.n_paths > 2000:
        return False
    if page.n_rects >= 6 and page.has_table_caption:
        return True
    if page.n_vlines < 2 or page.n_hlines < 2:
        return False
    if page.has_table_caption:
        return True
    return page.n_vlines >= 3 and page.n_hlines >= 3 and page.n_paths <= 600


def ruled_tables(
    data: bytes, password: str | None, page_numbers: Sequence[int]
) -> tuple[dict[int, list[TableItem]], list[str]]:
    """Ruled tables per page (1-based) found by pdfplumber's line strategy, and warnings."""
    found: dict[int, list[TableItem]] = {}
    if not page_numbers:
        return found, []
    try:
        with pdfplumber.open(io.BytesIO(data), password=password or "") as doc:
            for number in page_numbers:
                items = _page_tables(doc.pages[number - 1])
                if items:
                    found[number] = items
    except Exception as exc:  # pdfminer raises many unrelated types on odd files
        log.debug("pdfplumber failed: %s", exc)
        return found, [f"table detection failed ({type(exc).__name__}); tables kept as text"]
    return found, []


def _page_tables(page: pdfplumber.page.Page) -> list[TableItem]:
    items = []
    for found in page.find_tables(table_settings=_LINES):
        cells = [[clean_text((c or "").replace("\n", " ")) for c in row] for row in found.extract()]
        cells = [row for row in cells if any(row)]
        if len(cells) < 2 or max(len(r) for r in cells) < 2:
            continue
        filled = sum(1 for r in cells for c in r if c)
        if filled < 4:
            continue
        x0, top, x1, bottom = (float(v) for v in found.bbox)
        table = Table(header=(tuple(cells[0]),), rows=tuple(tuple(r) for r in cells[1:]))
        items.append(TableItem((x0, top, x1, bottom), table))
    return items


def aligned_tables(rows: list[Row]) -> list[Row]:
    """Replace runs of rows whose fragments line up in columns by one table row."""
    out: list[Row] = []
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and _table_like(rows[j], rows[i]):
            j += 1
        if j - i >= 3 and _near_caption(rows, i, j):
            heads = upper_headers(out, rows[i], rows[i + 1 : j])
            table_row = _to_table(rows[i:j], heads)
            if table_row is not None:
                del out[len(out) - len(heads) :]
                out.append(table_row)
                i = j
                continue
        out.append(rows[i])
        i += 1
    return out


def _near_caption(rows: list[Row], i: int, j: int) -> bool:
    """Unruled tables are trusted only next to a "Table N" caption (reliability first)."""
    near = rows[max(0, i - 3) : i] + rows[j : j + 3]
    return any(TABLE_CAPTION.match(r.line.text) for r in near if r.table is None)


def _table_like(row: Row, first: Row) -> bool:
    if row.table is not None or len(row.frags) < 2:
        return False
    return row.flow_left == first.flow_left and row.line.size <= first.line.size + 1


def _to_table(run: list[Row], heads: list[Row]) -> Row | None:
    size = max(run[0].line.size, 1.0)
    for a, b in itertools.pairwise(run):
        if b.line.top - a.line.bottom > 1.5 * size:
            return None
    widest = max(len(r.frags) for r in run)
    spans = _column_spans([f for r in run if len(r.frags) == widest for f in r.frags])
    if not 2 <= len(spans) <= 20:
        return None
    frags = [f for r in run for f in r.frags]
    mean_len = sum(len(f.text) for f in frags) / len(frags)
    if mean_len > (30 if len(spans) == 2 else 45):
        return None
    grid = [_cells(r.frags, spans) for r in run]
    filled = sum(1 for row in grid for c in row if c)
    if filled < 0.6 * len(grid) * len(spans):
        return None
    if sum(1 for row in grid if sum(1 for c in row if c) >= 2) < 0.8 * len(grid):
        return None
    table = structure([_cells(r.frags, spans) for r in heads] + grid)
    x0 = min(f.x0 for f in frags)
    x1 = max(f.x1 for f in frags)
    top, bottom = (heads or run)[0].line.top, run[-1].line.bottom
    line = Line(table.as_text(), x0, top, x1, bottom, 0.0, False, run[0].line.page)
    item = TableItem((x0, top, x1, bottom), table)
    return Row(line, [], item, run[0].flow_left, run[0].flow_right)


def _column_spans(frags: list[Line]) -> list[tuple[float, float]]:
    spans: list[tuple[float, float]] = []
    for f in sorted(frags, key=lambda f: f.x0):
        if spans and f.x0 <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], f.x1))
        else:
            spans.append((f.x0, f.x1))
    return spans


def _cells(frags: list[Line], spans: list[tuple[float, float]]) -> list[str]:
    cells = [""] * len(spans)
    for f in frags:
        best = max(
            range(len(spans)),
            key=lambda k: (min(f.x1, spans[k][1]) - max(f.x0, spans[k][0]), -k),
        )
        cells[best] = f"{cells[best]} {f.text}".strip()
    return cells


def upper_headers(above: list[Row], header: Row, run: list[Row]) -> list[Row]:
    """Up to two short rows right above the header row: group names over its columns
    ("Full", "Grobid Subset") and a row label set between header rows ("Model")."""
    heads: list[Row] = []
    below = header
    x0 = min(r.line.x0 for r in [header, *run])
    x1 = max(r.line.x1 for r in [header, *run])
    for row in reversed(above[-2:]):
        short = all(len(f.text) <= 25 for f in row.frags) and not row.line.text.endswith(".")
        inside = row.line.x0 >= x0 - 2 and row.line.x1 <= x1 + 2
        near = below.line.top - row.line.bottom < 1.0 * max(below.line.size, 1.0)
        if row.table is not None or not row.frags or not (short and inside and near):
            break
        if row.flow_left != header.flow_left:
            break
        heads.insert(0, row)
        below = row
    return heads
