"""A table grid's structure: which leading rows are its header, which leading columns label
its rows, and header cells that span the sub-headers below them (read as header paths)."""

from __future__ import annotations

import re

from footnote.types import Table

NUMBER = re.compile(
    r"^[(\[]?[-+−–]?[$€£¥]?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s?(?:%|x|倍|bp)?[)\]]?"
    r"[EAFP*]?$|^(?:19|20)\d\d[EAFHQ]?\d?$|^[-–—]+$|^n/?a$|^N/?A$",
    re.I,
)
"""A cell that is a number: 1,234.5 · -3% · (0.4) · 2022E · — · n/a."""


def is_number(text: str) -> bool:
    """True for a cell holding a number (with sign, unit, percent or estimate mark)."""
    return bool(NUMBER.match(text.strip()))


_MAX_HEADER_ROWS = 4


def is_value(text: str) -> bool:
    """A number, or one short token that starts as one ("3.32T", "12B", "~7.5k"; not "F1")."""
    token = text.lstrip("+-−–(~≈<>$€£¥")
    return is_number(text) or (token[:1].isdigit() and len(text) <= 12 and len(text.split()) == 1)


def label_columns(rows: list[list[str]] | tuple[tuple[str, ...], ...]) -> int:
    """How many leading columns label the rows: up to the last column of words in the left
    half of the typed columns ("6 | 6 | OTSL | 0.965 | …": three); one if none holds numbers."""
    width = max((len(r) for r in rows), default=0)
    typed: list[tuple[int, bool]] = []  # (column, holds words)
    for c in range(width):
        cells = [r[c] for r in rows if c < len(r) and r[c]]
        if not cells:
            continue
        if sum(1 for t in cells if is_value(t)) / len(cells) > 0.5:
            typed.append((c, False))
        elif sum(1 for t in cells if any(ch.isalpha() for ch in t)) / len(cells) > 0.5:
            typed.append((c, True))
    if width < 2 or all(words for _, words in typed):
        return min(1, width)
    left = typed[: (len(typed) + 1) // 2]
    labels = max((c + 1 for c, words in left if words), default=1)
    return max(1, min(labels, width - 1))


def structure(grid: list[list[str]]) -> Table:
    """A Table from a grid: the leading rows without a number in a value column are the
    header (one row where no body row holds a number), label-only header rows merge into the
    last one, and an upper header cell spans the sub-headed columns nearest to it."""
    grid = [list(r) for r in grid if any(r)]
    width = max(len(r) for r in grid)
    grid = [r + [""] * (width - len(r)) for r in grid]
    n_head = 1
    labels = label_columns(grid[1:])
    numeric = [any(is_value(t) for t in r[labels:] if t) for r in grid]
    if any(numeric):
        n_head = max(1, min(numeric.index(True), _MAX_HEADER_ROWS, len(grid) - 1))
    head, body = grid[:n_head], grid[n_head:]
    head = _merge_label_rows(head, labels)
    head = _spread(head, labels)
    return Table(header=tuple(tuple(r) for r in head), rows=tuple(tuple(r) for r in body))


def _merge_label_rows(head: list[list[str]], labels: int) -> list[list[str]]:
    """A header row holding only row-label names (a "Model" set between two header rows)
    joins the last header row where that one leaves them empty."""
    if len(head) < 2:
        return head
    keep = []
    last = list(head[-1])
    for row in head[:-1]:
        only_labels = not any(row[labels:]) and all(not last[c] for c in range(labels) if row[c])
        if only_labels:
            for c in range(labels):
                last[c] = row[c] or last[c]
        else:
            keep.append(row)
    return [*keep, last]


def _spread(head: list[list[str]], labels: int) -> list[list[str]]:
    """Fill an upper header row's empty cells over sub-headed columns from its nearest cell
    that itself stands over a sub-header (a group name such as "Full" over P, R, F1)."""
    if len(head) < 2:
        return head
    out = [list(r) for r in head]
    for k in range(len(out) - 1):
        below = [any(out[j][c] for j in range(k + 1, len(out))) for c in range(len(out[k]))]
        anchors = [c for c in range(labels, len(out[k])) if out[k][c] and below[c]]
        if not anchors:
            continue
        for c in range(labels, len(out[k])):
            if not out[k][c] and below[c]:
                near = min(anchors, key=lambda a: (abs(a - c), a > c))
                out[k][c] = out[k][near]
    return out


def labelled_cells(table: Table) -> list[tuple[str, tuple[str, ...], str]]:
    """Each body cell of a value column as (row header, column header path, value): the
    row's label cells joined by " / ", the non-empty header cells over its column."""
    labels = label_columns(table.rows)
    out = []
    for row in table.rows:
        row_header = " / ".join(t for t in row[:labels] if t)
        for c in range(labels, len(row)):
            if row[c]:
                path = tuple(dict.fromkeys(h[c] for h in table.header if c < len(h) and h[c]))
                out.append((row_header, path, row[c]))
    return out
