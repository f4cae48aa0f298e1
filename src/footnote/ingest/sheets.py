"""Spreadsheets as tables: CSV/TSV (stdlib `csv`, dialect sniffed) and XLSX (openpyxl, cell
values as displayed numbers, not formulas). A long sheet is cut into tables of
`_ROWS` rows, each repeating the header, so every block stays a readable size; a sheet's name
is its section heading and its position is the block's page."""

from __future__ import annotations

import csv
import io

from footnote.ingest.archive import ElementBudget
from footnote.ingest.cleanup import clean_text
from footnote.ingest.metadata import Meta
from footnote.ingest.raw import Parsed, RawBlock
from footnote.types import Table

_ROWS = 40


def parse_csv(text: str, name: str) -> Parsed:
    """One table (in chunks) from delimited text; the first row is the header."""
    sample = text[:20000]
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, ",;\t|")
    except csv.Error:
        dialect = csv.excel_tab if sample.count("\t") > sample.count(",") else csv.excel
    rows = [[clean_text(c) for c in row] for row in csv.reader(io.StringIO(text), dialect)]
    return Parsed(_tables(rows, "", 1), Meta(title=name))


def parse_xlsx(data: bytes, name: str, budget: ElementBudget) -> Parsed:
    """Every sheet with content: a heading with the sheet's name, then its table chunks."""
    import openpyxl

    book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    blocks: list[RawBlock] = []
    try:
        for number, sheet in enumerate(book.worksheets, start=1):
            rows = []
            for row in sheet.iter_rows(values_only=True):
                budget.take(len(row))
                rows.append([_cell(v) for v in row])
            blocks += _tables(rows, clean_text(sheet.title), number)
        title = clean_text(book.properties.title or "") or name
        creator = clean_text(book.properties.creator or "")
    finally:
        book.close()
    meta = Meta(title=title, authors=[creator] if creator else [])
    return Parsed(blocks, meta, pages=max((b.page for b in blocks), default=1))


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return clean_text(str(value))


def _tables(rows: list[list[str]], heading: str, page: int) -> list[RawBlock]:
    while rows and not any(rows[-1]):
        rows.pop()
    rows = [r for r in rows if any(r)]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    while width > 1 and not any(len(r) >= width and r[width - 1] for r in rows):
        width -= 1
    grid = [tuple((r + [""] * width)[:width]) for r in rows]
    header, body = grid[0], grid[1:]
    out = [RawBlock("heading", heading, page, level=1)] if heading else []
    for start in range(0, max(len(body), 1), _ROWS):
        table = Table(header=(header,), rows=tuple(body[start : start + _ROWS]))
        out.append(RawBlock("table", table.as_text(), page, table=table))
    return out
