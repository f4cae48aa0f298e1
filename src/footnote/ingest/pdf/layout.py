"""Page geometry: running headers/footers, columns, reading order, lines into blocks."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass, field

from footnote.ingest.captions import CAPTION_START, LIST_START
from footnote.ingest.pdf.file import PageText
from footnote.ingest.raw import Line
from footnote.textnorm import is_cjk
from footnote.types import BBox, Table

_PAGE_NO = re.compile(
    r"^[\W_]*(?:page|p\.|pp\.|第)?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*(?:(?:of|/|页|共)\s*\d{1,4})?"
    r"\s*(?:页)?[\W_]*$",
    re.I,
)
_MARGIN = 0.08
_BOILERPLATE = re.compile(
    r"^(?:Downloaded from|Download date|Published (?:by|online)|Proceedings of|Preprint\b|"
    r"arXiv:\s?\d{4}\.\d{4,5}|©|\(c\)\s*\d{4}|c (?:19|20)\d\d [A-Z]|Copyright\b|doi:|https?://(?:dx\.)?doi\.org/|"
    r"OPEN ACCESS|www\.\S+$)"
    r"|©\s*\d{4}|\bpage \d+ of \d+\b|\|\s*www\.|Freely available online"
    r"|\bVol(?:ume|\.)?\s*\d+\s*[,|(]?\s*(?:No\.?|Issue|pp?\.)\s*\d"
    r"|^[A-Z][\w .&-]+ (?:19|20)\d\d;\s*\d+(?:\(\d+\))?:\s*\d+",
    re.I,
)
"""Journal / repository / conference lines that mark a page header or footer."""
_RUNNING_AUTHOR = re.compile(r"^[A-Z][\w'’-]+ (?:et al\.?|and [A-Z][\w'’-]+):? ")


@dataclass
class TableItem:
    """A table found on a page, placed in the reading order like a text line."""

    bbox: BBox
    table: Table


@dataclass
class Row:
    """One line of text (fragments on one baseline within one column) or a table."""

    line: Line
    frags: list[Line] = field(default_factory=list)
    table: TableItem | None = None
    flow_left: float = 0.0
    flow_right: float = 0.0


def drop_running_text(pages: list[PageText]) -> int:
    """Remove running headers/footers and page numbers in place; return how many went."""
    keys: Counter[tuple[str, int]] = Counter()
    for page in pages:
        for frag in page.fragments:
            if _in_margin(frag, page):
                keys.update(set(_repeat_keys(frag)))
    need = max(2, round(0.4 * len(pages)))
    dropped = 0
    for page in pages:
        furniture = _furniture(page)
        keep = []
        for frag in page.fragments:
            margin = _in_margin(frag, page)
            repeated = len(pages) > 1 and any(keys[k] >= need for k in _repeat_keys(frag))
            marked = id(frag) in furniture
            if margin and (repeated or marked or _PAGE_NO.match(frag.text)):
                dropped += 1
                continue
            keep.append(frag)
        page.fragments = keep
    return dropped


def _furniture(page: PageText) -> set[int]:
    """Ids of fragments in a header/footer stack that carries a journal/repository line."""
    found: set[int] = set()
    for run in _edge_runs(page):
        if any(
            _BOILERPLATE.search(f.text)
            or (f.bottom < page.height / 2 and _RUNNING_AUTHOR.match(f.text))
            for f in run
        ):
            found.update(id(f) for f in run)
    return found


def _edge_runs(page: PageText) -> list[list[Line]]:
    """The fragments stacked at the very top and at the very bottom of the page, each kept
    only when the stack ends in the margin with a clear gap before the body."""
    found: list[list[Line]] = []
    order = sorted(page.fragments, key=lambda f: f.top)
    for frags, sign in ((order, 1), (order[::-1], -1)):
        run: list[Line] = []
        edge = 0.0
        for f in frags:
            near = f.top if sign > 0 else page.height - f.bottom
            if run and near > edge + 0.8 * max(f.size, 1.0):
                break
            run.append(f)
            edge = max(edge, f.bottom if sign > 0 else page.height - f.top)
        if run and edge < page.height * _MARGIN and len(run) < len(frags):
            found.append(run)
    return found


def _in_margin(frag: Line, page: PageText) -> bool:
    return frag.bottom < page.height * _MARGIN or frag.top > page.height * (1 - _MARGIN)


def _repeat_keys(frag: Line) -> list[tuple[str, int]]:
    norm = re.sub(r"\d+", "#", frag.text.lower()).strip()
    y = round(frag.top / 4)
    return [(norm, y), (norm, y + 1)]


def order_rows(page: PageText, tables: list[TableItem]) -> list[Row]:
    """The page's text lines and tables in reading order (columns left to right)."""
    frags = [f for f in page.fragments if not any(_inside(f, t.bbox) for t in tables)]
    items: list[Line | TableItem] = [*frags, *tables]
    if not items:
        return []
    gutter = _find_gutter(frags, page.width)
    if gutter is None:
        return _rows(items, _extent(frags), page.number)
    span = page.width * 0.08
    full: list[Line | TableItem] = []
    left: list[Line | TableItem] = []
    right: list[Line | TableItem] = []
    for it in items:
        x0, _, x1, _ = _box(it)
        if x0 < gutter - span and x1 > gutter + span:
            full.append(it)
        elif (x0 + x1) / 2 < gutter:
            left.append(it)
        else:
            right.append(it)
    full.sort(key=lambda it: _box(it)[1])
    lx, rx = (
        _extent([f for f in left if isinstance(f, Line)]),
        _extent([f for f in right if isinstance(f, Line)]),
    )
    rows: list[Row] = []
    prev_cut = -1e9
    for cut_item in [*full, None]:
        cut = _box(cut_item)[1] if cut_item is not None else 1e9
        band_l = [it for it in left if prev_cut <= _box(it)[1] < cut]
        band_r = [it for it in right if prev_cut <= _box(it)[1] < cut]
        rows += _rows(band_l, lx, page.number) + _rows(band_r, rx, page.number)
        if cut_item is not None:
            rows += _rows([cut_item], (page.width * 0.1, page.width * 0.9), page.number)
            prev_cut = cut
    return rows


def _box(it: Line | TableItem) -> BBox:
    return it.bbox


def _inside(frag: Line, bbox: BBox) -> bool:
    cx, cy = (frag.x0 + frag.x1) / 2, (frag.top + frag.bottom) / 2
    return bbox[0] - 2 <= cx <= bbox[2] + 2 and bbox[1] - 2 <= cy <= bbox[3] + 2


def _extent(frags: list[Line]) -> tuple[float, float]:
    if not frags:
        return (0.0, 0.0)
    xs0 = sorted(f.x0 for f in frags)
    xs1 = sorted(f.x1 for f in frags)
    return xs0[len(xs0) // 10], xs1[(len(xs1) * 9) // 10]


def find_gutter(frags: list[Line], width: float) -> float | None:
    """The x of the gap between two text columns, None on a one-column page."""
    return _find_gutter(frags, width)


def _find_gutter(frags: list[Line], width: float) -> float | None:
    """The x of a vertical gap that splits the body into two columns, if there is one."""
    body = [f for f in frags if len(f.text) > 1]
    if len(body) < 12:
        return None
    xmin = min(f.x0 for f in body)
    xmax = max(f.x1 for f in body)
    span = xmax - xmin
    if span < width * 0.4:
        return None
    best: tuple[int, float, float] | None = None
    x = xmin + 0.3 * span
    while x <= xmin + 0.7 * span:
        cross = sum(1 for f in body if f.x0 < x - 1 and f.x1 > x + 1)
        cand = (cross, abs(x - (xmin + span / 2)), x)
        if best is None or cand < best:
            best = cand
        x += 2.0
    if best is None:
        return None
    cross, _, gx = best
    lefts = [f for f in body if f.x1 <= gx]
    rights = [f for f in body if f.x0 >= gx]
    allowed = max(0.3 * min(len(lefts), len(rights)), 0.2 * (len(lefts) + len(rights)))
    if len(lefts) < 5 or len(rights) < 5 or cross > allowed:
        return None
    # both sides must hold real text lines, stacked over a good part of the page
    for side in (lefts, rights):
        wide = [f for f in side if f.x1 - f.x0 > 0.25 * span]
        if len(wide) < 4:
            return None
    return gx


def _rows(items: list[Line | TableItem], extent: tuple[float, float], page: int) -> list[Row]:
    """Group fragments on one baseline into rows; sort rows top to bottom."""
    items = sorted(items, key=lambda it: (_box(it)[1], _box(it)[0]))
    rows: list[Row] = []
    group: list[Line] = []
    for it in items:
        if isinstance(it, TableItem):
            if group:
                rows.append(_make_row(group, extent))
                group = []
            x0, top, x1, bottom = it.bbox
            line = Line(it.table.as_text(), x0, top, x1, bottom, 0.0, False, page)
            rows.append(Row(line, [], it, extent[0], extent[1]))
            continue
        if group:
            g_top = min(f.top for f in group)
            g_bot = max(f.bottom for f in group)
            overlap = min(g_bot, it.bottom) - max(g_top, it.top)
            if overlap < 0.5 * min(it.height, g_bot - g_top):
                rows.append(_make_row(group, extent))
                group = []
        group.append(it)
    if group:
        rows.append(_make_row(group, extent))
    return rows


def _make_row(group: list[Line], extent: tuple[float, float]) -> Row:
    group.sort(key=lambda f: f.x0)
    text = group[0].text
    for f in group[1:]:
        sep = "" if is_cjk(text[-1]) and is_cjk(f.text[0]) else " "
        text += sep + f.text
    sizes: Counter[float] = Counter()
    for f in group:
        sizes[f.size] += len(f.text)
    size = sizes.most_common(1)[0][0]
    bold = sum(len(f.text) for f in group if f.bold) >= 0.9 * sum(len(f.text) for f in group)
    main = max(group, key=lambda f: len(f.text))
    read = [f for f in group if f.conf is not None]
    conf = (
        sum((f.conf or 0.0) * len(f.text) for f in read) / max(sum(len(f.text) for f in read), 1)
        if read
        else None
    )
    line = Line(
        text,
        group[0].x0,
        main.top,
        max(f.x1 for f in group),
        main.bottom,
        size,
        bold,
        group[0].page,
        extent[0],
        conf,
        group[0].note,
    )
    return Row(line, list(group), None, extent[0], extent[1])


_TERMINAL = tuple(".!?:;。！？：；”\"')")


def line_gaps(rows: list[Row]) -> dict[float, float]:
    """The usual blank space between consecutive lines of one paragraph, per font size.

    Documents set with 1.5 line spacing leave more room between lines than 0.6 em; a
    paragraph break is a gap clearly wider than the document's own line gap.
    """
    seen: dict[float, Counter[float]] = {}
    for a, b in itertools.pairwise(rows):
        if a.table is not None or b.table is not None or a.flow_left != b.flow_left:
            continue
        size = a.line.size
        gap = b.line.top - a.line.bottom
        if b.line.size == size and -0.3 * size < gap < 1.5 * size:
            seen.setdefault(size, Counter())[round(gap * 2) / 2] += 1
    return {size: c.most_common(1)[0][0] for size, c in seen.items() if c.total() >= 8}


def group_rows(
    rows: list[Row], body_size: float, gaps: dict[float, float] | None = None
) -> list[list[Row]]:
    """Split a page's ordered rows into paragraph-like groups (tables stand alone)."""
    groups: list[list[Row]] = []
    cur: list[Row] = []
    for row in rows:
        if row.table is not None:
            if cur:
                groups.append(cur)
            groups.append([row])
            cur = []
            continue
        if cur and _breaks(cur[-1], row, body_size, len(cur), gaps or {}):
            groups.append(cur)
            cur = []
        cur.append(row)
    if cur:
        groups.append(cur)
    return groups


def _breaks(prev_row: Row, row: Row, body_size: float, n: int, gaps: dict[float, float]) -> bool:
    prev, line = prev_row.line, row.line
    size = max(min(prev.size, line.size), 1.0)
    gap = line.top - prev.bottom
    usual = gaps.get(line.size, 0.0) if prev.size == line.size else 0.0
    if gap > min(max(0.6 * size, usual + 0.25 * size), 1.2 * size) or gap < -2 * size:
        return True
    if prev_row.flow_left != row.flow_left:
        return True
    if abs(prev.size - line.size) >= 1.0 or prev.bold != line.bold:
        return True
    if CAPTION_START.match(line.text) or LIST_START.match(line.text) or line.note:
        return True
    left, right = row.flow_left, row.flow_right
    indented = line.x0 - left > 0.8 * size and abs(prev.x0 - left) < 0.8 * size
    prev_short = prev.x1 < right - 2.5 * size
    if indented and (prev_short or prev.text.endswith(_TERMINAL)) and line.text[:1].isupper():
        return True
    if prev_short and prev.text.endswith((".", "。", "!", "?", "！", "？", ":")) and n >= 1:
        return not _centered(prev, left, right)
    return False


def _centered(line: Line, left: float, right: float) -> bool:
    return abs((line.x0 - left) - (right - line.x1)) < 0.1 * (right - left) and line.x0 > left + 20
