"""Graph rows from CSV and JSON files matched to the tables of a spec."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
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
    by_stem = {f.stem: f for f in files}

    def find(table: str, declared: str) -> Path | None:
        return by_name.get(declared) if declared else by_stem.get(table)

    nodes: Rows = {}
    rels: Rows = {}
    for label, node in spec.nodes.items():
        if (path := find(label, node.file)) is not None:
            nodes[label] = read_table(path)
    for name, rel in spec.relationships.items():
        if (path := find(name, rel.file)) is not None:
            rels[name] = read_table(path)
    if not nodes:
        raise UsageError("no file matches a node table of the spec (name files after tables)")
    return nodes, rels
