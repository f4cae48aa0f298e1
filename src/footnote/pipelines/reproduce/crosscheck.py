"""Cross-checks: do the numbers a paper states add up? Recomputed by code, both sides cited.

What is checked:
- a table's aggregate column (Avg., Average, Mean, Total, Sum, 平均, 合计 …): each row's stated
  value against the mean or sum of its other numeric cells. Which cells count is decided once
  per table: the run of numeric columns next to the aggregate (or all of them) under which most
  rows agree — so a "Total" over three of four count columns is read as the paper meant it, and
  a row that still disagrees is a finding;
- a table's aggregate row (Average / Total / 平均 / 合计): each column against the rows above;
- shares stated with their counts in one sentence ("train (70%, 3177), Dev (10%, 454), Test
  (30%, 908)"): each percentage against count ÷ sum of counts;
- totals stated with their parts in one sentence ("训练集 9,600 条、验证集 1,200 条和测试集
  1,200 条，共 12,000 条"), and a part's share of that total ("训练集约占 91.8%").

A value agrees when |stated − recomputed| ≤ tolerance: half a unit of the stated value's last
digit plus the rounding the inputs carry (half a unit of their last digit, times their count for
a sum), times the configured multiplier.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from footnote.textnorm import parse_number, split_sentences
from footnote.types import Block, Table, cell_id

_AGG = re.compile(
    r"^(?:avg\.?|average|mean|macro[- ]avg\.?|平均(?:值|分|得分)?|均值|total|sum|总计|合计|总数|总和)$",
    re.IGNORECASE,
)
_SUM_WORDS = ("total", "sum", "总计", "合计", "总数", "总和")


@dataclass(frozen=True)
class Cited:
    """A number and the evidence id it was read from."""

    value: float
    cite: str
    text: str


@dataclass(frozen=True)
class CrossCheck:
    """One recomputation."""

    kind: str
    where: str
    stated: Cited
    inputs: tuple[Cited, ...]
    recomputed: float
    tolerance: float
    formula: str

    @property
    def adds_up(self) -> bool:
        """Whether the stated value agrees with the recomputed one."""
        return abs(self.stated.value - self.recomputed) <= self.tolerance + 1e-9

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (the `crosscheck` event and the API)."""
        return {
            "kind": self.kind,
            "where": self.where,
            "stated": {
                "value": self.stated.value,
                "cite": self.stated.cite,
                "text": self.stated.text,
            },
            "inputs": [{"value": c.value, "cite": c.cite, "text": c.text} for c in self.inputs],
            "recomputed": round(self.recomputed, 6),
            "tolerance": round(self.tolerance, 6),
            "formula": self.formula,
            "adds_up": self.adds_up,
        }


def _decimals(text: str) -> int:
    m = re.search(r"\d+\.(\d+)", text)
    return len(m.group(1)) if m else 0


def _tolerance(kind: str, stated: str, inputs: Sequence[str], factor: float) -> float:
    """Half a unit of the stated value's last digit plus the inputs' rounding."""
    half = 0.5 * 10.0 ** -_decimals(stated)
    d_in = max((_decimals(t) for t in inputs), default=0)
    carried = 0.5 * 10.0**-d_in if any("." in t for t in inputs) else 0.0
    if kind == "sum":
        carried *= len(inputs)
    return (half + carried) * factor


def _cell_number(text: str) -> float | None:
    return parse_number(text.replace("（", "(").split("(")[0]) if text.strip() else None


def _label(table: Table, block: Block) -> str:
    m = re.match(r"\s*((?:Table|Tab\.|表)\s*\w+)", table.caption)
    return m.group(1) if m else (" > ".join(block.section_path[-1:]) or "table")


def _recompute(kind: str, values: Sequence[float]) -> float:
    return sum(values) / len(values) if kind == "average" else sum(values)


def table_checks(block: Block, factor: float = 1.0) -> list[CrossCheck]:
    """Aggregate columns and rows of one table block."""
    table = block.table
    if table is None or not table.rows:
        return []
    header = table.header[-1] if table.header else ()
    offset = len(table.header)
    out: list[CrossCheck] = []
    for col, name in enumerate(header):
        if _AGG.match(name.strip()):
            out += _column_checks(block, table, col, name.strip(), offset, factor)
    for r, row in enumerate(table.rows):
        if row and _AGG.match(row[0].strip()) and r > 0:
            out += _row_checks(block, table, r, offset, factor)
    return out


def _column_checks(
    block: Block, table: Table, col: int, name: str, offset: int, factor: float
) -> list[CrossCheck]:
    kind = "sum" if name.lower() in _SUM_WORDS else "average"
    numeric = [
        c for c in range(col) if sum(_cell_number(row[c]) is not None for row in table.rows
                                     if c < len(row)) >= max(1, len(table.rows) // 2)
    ]  # fmt: skip
    subsets: list[list[int]] = [numeric]
    for start in range(len(numeric) - 1):
        run = numeric[start:]
        if all(b == a + 1 for a, b in itertools.pairwise(run)) and len(run) >= 2:
            subsets.append(run)
    best: tuple[int, int, list[CrossCheck]] | None = None
    for cols in subsets:
        if len(cols) < 2:
            continue
        checks = []
        for r, row in enumerate(table.rows):
            stated = _cell_number(row[col]) if col < len(row) else None
            vals = [_cell_number(row[c]) if c < len(row) else None for c in cols]
            if stated is None or any(v is None for v in vals):
                continue
            values = [v for v in vals if v is not None]
            rid = offset + r
            checks.append(
                CrossCheck(
                    kind,
                    f"{_label(table, block)} ({row[0].strip() or f'row {r + 1}'} row, {name} column)",
                    Cited(stated, cell_id(block.id, rid, col), row[col]),
                    tuple(
                        Cited(v, cell_id(block.id, rid, c), row[c])
                        for v, c in zip(values, cols, strict=True)
                    ),
                    _recompute(kind, values),
                    _tolerance(kind, row[col], [row[c] for c in cols], factor),
                    f"{'mean' if kind == 'average' else 'sum'} of columns "
                    + ", ".join(table.header[-1][c] if table.header else str(c) for c in cols),
                )
            )
        agree = sum(c.adds_up for c in checks)
        if checks and (best is None or (agree, len(cols)) > (best[0], best[1])):
            best = (agree, len(cols), checks)
    if best is None or best[0] * 2 < len(best[2]):
        return []  # no reading of the column under which most rows add up: not a plain aggregate
    return best[2]


def _row_checks(block: Block, table: Table, r: int, offset: int, factor: float) -> list[CrossCheck]:
    row = table.rows[r]
    kind = "sum" if row[0].strip().lower() in _SUM_WORDS else "average"
    out = []
    for c in range(1, len(row)):
        stated = _cell_number(row[c])
        above = [(i, table.rows[i][c]) for i in range(r) if c < len(table.rows[i])]
        vals = [(i, _cell_number(t), t) for i, t in above]
        if stated is None or len(vals) < 2 or any(v is None for _, v, _ in vals):
            continue
        inputs = tuple(
            Cited(v, cell_id(block.id, offset + i, c), t) for i, v, t in vals if v is not None
        )
        out.append(
            CrossCheck(
                kind,
                f"{_label(table, block)} ({row[0].strip()} row, column {c + 1})",
                Cited(stated, cell_id(block.id, offset + r, c), row[c]),
                inputs,
                _recompute(kind, [i.value for i in inputs]),
                _tolerance(kind, row[c], [t for _, _, t in vals], factor),
                f"{kind} of the rows above",
            )
        )
    return out


_SHARE_PAIR = re.compile(r"\((\d+(?:\.\d+)?)\s*%\s*,\s*(\d[\d,]*)(?:\s*[A-Za-z]+)?\)")
_ZH_TOTAL = re.compile(r"(?:共|总计|合计|总共)\s*(\d[\d,]*(?:\.\d+)?)\s*(条|对|篇|个|句|张)")
_ZH_SHARE = re.compile(r"(训练集|验证集|开发集|测试集)(?:约)?占[^%\d]{0,10}(\d+(?:\.\d+)?)\s*%")
_ZH_NAMED = re.compile(r"(训练集|验证集|开发集|测试集)\s*(\d[\d,]*)\s*(?:条|对|篇|个|句|张)")
_ZH_RESPECTIVELY = re.compile(
    r"((?:训练集|验证集|开发集|测试集)(?:\s*[、和及与]\s*(?:训练集|验证集|开发集|测试集))+)分别为\s*"
    r"(\d[\d,]*(?:\s*[、,，和及]\s*\d[\d,]*)+)"
)


def _where(block: Block) -> str:
    return " > ".join(block.section_path[-1:]) or f"page {block.page}"


def text_checks(block: Block, factor: float = 1.0) -> Iterator[CrossCheck]:
    """Shares with their counts, and totals with their parts, stated in one sentence."""
    if block.table is not None or block.kind in ("reference", "heading"):
        return
    for sent in split_sentences(block.text):
        pairs = [(m.group(1), m.group(2)) for m in _SHARE_PAIR.finditer(sent)]
        if len(pairs) >= 2:
            counts = [float(c.replace(",", "")) for _, c in pairs]
            total = sum(counts)
            for (pct, count), n in zip(pairs, counts, strict=True):
                yield CrossCheck(
                    "percentage",
                    f"{_where(block)} (share of {count})",
                    Cited(float(pct), block.id, f"{pct}%"),
                    tuple(Cited(x, block.id, c) for x, (_, c) in zip(counts, pairs, strict=True)),
                    100 * n / total,
                    _tolerance("percentage", pct, [], factor),
                    f"100 × {count} / ({' + '.join(c for _, c in pairs)})",
                )
        yield from _zh_totals(block, sent, factor)


def _zh_totals(block: Block, sent: str, factor: float) -> Iterator[CrossCheck]:
    m = _ZH_TOTAL.search(sent)
    if not m:
        return
    total_text, unit = m.group(1), m.group(2)
    parts: dict[str, str] = {}
    for named in _ZH_NAMED.finditer(sent):
        parts.setdefault(named.group(1), named.group(2))
    for resp in _ZH_RESPECTIVELY.finditer(sent):
        names = re.split(r"\s*[、和及与]\s*", resp.group(1))
        nums = re.split(r"\s*(?:[、，和及]|,\s+)\s*(?=\d)", resp.group(2))
        for name, num in zip(names, nums, strict=False):
            parts.setdefault(name, num.strip())
    if len(parts) < 2:
        return
    total = float(total_text.replace(",", ""))
    values = {k: float(v.replace(",", "")) for k, v in parts.items()}
    inputs = tuple(Cited(v, block.id, parts[k]) for k, v in values.items())
    yield CrossCheck(
        "sum",
        f"{_where(block)} (total of {total_text} {unit})",
        Cited(total, block.id, total_text),
        inputs,
        sum(values.values()),
        _tolerance("sum", total_text, list(parts.values()), factor),
        " + ".join(parts.values()),
    )
    for share in _ZH_SHARE.finditer(sent):
        name, pct = share.group(1), share.group(2)
        if name in values:
            yield CrossCheck(
                "percentage",
                f"{_where(block)} ({name} share)",
                Cited(float(pct), block.id, f"{pct}%"),
                (Cited(values[name], block.id, parts[name]), Cited(total, block.id, total_text)),
                100 * values[name] / total,
                _tolerance("percentage", pct, [], factor),
                f"100 × {parts[name]} / {total_text}",
            )


def cross_checks(blocks: Sequence[Block], factor: float = 1.0) -> list[CrossCheck]:
    """Every cross-check found in a paper's blocks, in reading order."""
    out: list[CrossCheck] = []
    for block in blocks:
        out += table_checks(block, factor)
        out += list(text_checks(block, factor))
    return out
