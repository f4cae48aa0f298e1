"""Graph rows from CSV and JSON files matched to the tables of a spec."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from footnote.errors import UsageError
from footnote.store.graph.base import GraphSpec
from footnote.store.graph.catalog import Rows


def read_table(path: Path) -> list[dict[str, Any]]:
    """Rows of a CSV (header row) or JSON (list of objects, or JSON lines) file."""
    if path.suffix.lower() == ".csv":
        csv.field_size_limit(1 << 30)
        with path.open(encoding="utf-8-sig", newline="") as f:
            return [dict(r) for r in csv.DictReader(f)]
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        data = json.loads(text)
        return [dict(r) for r in data]
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def rows_from_files(spec: GraphSpec, files: Sequence[Path]) -> tuple[Rows, Rows]:
    """Match files to tables by declared `file` name or `<Table>.csv/.json`, and read them."""
    by_name = {f.name: f for f in files}
    read: dict[Path, list[dict[str, Any]]] = {}

    def rows(name: str) -> list[dict[str, Any]]:
        path = by_name[name]
        if path not in read:  # a file feeding several tables is read once
            read[path] = read_table(path)
        return read[path]

    return rows_from_tables(spec, list(by_name), rows)


def rows_from_tables(
    spec: GraphSpec, names: Sequence[str], rows: Callable[[str], list[dict[str, Any]]]
) -> tuple[Rows, Rows]:
    """Node and relationship rows of `spec` from tables called `names` (file names such as
    `products.csv`): a table feeds a label or type that declares its `file`, else the one it
    is named after (`Person.csv`); `rows(name)` reads a table."""
    by_name = set(names)
    by_stem = {Path(n).stem: n for n in names}

    def find(table: str, declared: str) -> str | None:
        return (declared if declared in by_name else None) if declared else by_stem.get(table)

    nodes: Rows = {}
    rels: Rows = {}
    for label, node in spec.nodes.items():
        if (name := find(label, node.file)) is not None:
            nodes[label] = rows(name)
    for rel_name, rel in spec.relationships.items():
        if (name := find(rel_name, rel.file)) is not None:
            rels[rel_name] = rows(name)
    if not nodes:
        raise UsageError("no file matches a node table of the spec (name files after tables)")
    return nodes, rels
