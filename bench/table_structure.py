"""Cell-level table structure accuracy on hand-labelled tables (tests/data/tables/gold.json).

A gold cell counts as right when a table on its page holds the value with the gold row
header inside its row header and the gold column header path inside its column path (in
order; extra unit rows allowed); "header path" counts the column path alone. Also prints the
olmOCR-bench table rules (neighbours and headings of a cell) over its sample PDFs.
The baseline is the same script with the pre-change ingest code first on the path:
PYTHONPATH=<old checkout>/src python bench/table_structure.py (the gold, the scoring and the
reading of cells stay those of this file and `ingest/pdf/headers.py`).
Usage: python bench/table_structure.py [--data /work/shared/data]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from footnote.config import IngestSettings
from footnote.ingest import parse_file
from footnote.ingest.pdf.headers import labelled_cells
from footnote.types import Document, Table

GOLD = Path(__file__).resolve().parents[1] / "tests" / "data" / "tables" / "gold.json"
SETTINGS = IngestSettings(workers=1)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _in_order(want: list[str], path: tuple[str, ...]) -> bool:
    it = iter(_norm(p) for p in path)
    return all(any(w == p for p in it) for w in (_norm(x) for x in want))


def _tables(doc: Document, page: int) -> list[Table]:
    return [b.table for b in doc.blocks if b.page == page and b.table is not None]


def score(gold: dict[str, object], tables: list[Table]) -> tuple[int, int, int]:
    """(cells right, header paths right, gold cells) for one gold table."""
    cells = [c for t in tables for c in labelled_cells(t)]
    right = paths = 0
    todo = gold["cells"]
    assert isinstance(todo, list)
    for g in todo:
        found = [c for c in cells if _norm(c[2]) == _norm(g["value"])]
        path_ok = [c for c in found if _in_order(g["column_header_path"], c[1])]
        paths += bool(path_ok)
        right += any(_norm(g["row_header"]) in _norm(c[0]) for c in path_ok)
    return right, paths, len(todo)


def _olmocr(data: Path) -> tuple[int, int]:
    """olmOCR-bench table rules passed, over the sample's table rules."""
    lines = (data / "olmocr-bench-sample" / "dataset.jsonl").read_text().splitlines()
    rules = [json.loads(ln) for ln in lines if ln.strip()]
    rules = [r for r in rules if r.get("type") == "table"]
    docs: dict[str, Document] = {}
    passed = 0
    for r in rules:
        pdf = data / "olmocr-bench-sample" / "pdfs" / r["pdf"]
        doc = docs.setdefault(r["pdf"], parse_file(pdf, SETTINGS))
        passed += any(_rule(r, t) for t in _tables(doc, r["page"]))
    return passed, len(rules)


def _rule(rule: dict[str, str], table: Table) -> bool:
    grid = table.all_rows
    n_head = len(table.header)
    for i, row in enumerate(grid):
        for j, cell in enumerate(row):
            if _norm(cell) != _norm(rule["cell"]):
                continue
            checks = {
                "up": grid[i - 1][j] if i > 0 and j < len(grid[i - 1]) else None,
                "down": grid[i + 1][j] if i + 1 < len(grid) and j < len(grid[i + 1]) else None,
                "left": row[j - 1] if j > 0 else None,
                "right": row[j + 1] if j + 1 < len(row) else None,
                "top_heading": " ".join(h[j] for h in grid[:n_head] if j < len(h)),
                "left_heading": row[0],
            }
            if all(
                _norm(rule[k]) in _norm(v or "")
                if k.endswith("heading")
                else _norm(rule[k]) == _norm(v or "")
                for k, v in checks.items()
                if k in rule
            ):
                return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data"))
    args = parser.parse_args()
    gold = json.loads(GOLD.read_text(encoding="utf-8"))["tables"]
    docs: dict[str, Document] = {}
    total = [0, 0, 0]
    print(f"{'table':<18} {'cells':>7} {'header path':>12}")
    for g in gold:
        doc = docs.setdefault(g["pdf"], parse_file(args.data / g["pdf"], SETTINGS))
        right, paths, n = score(g, _tables(doc, g["page"]))
        total = [total[0] + right, total[1] + paths, total[2] + n]
        print(f"{g['name']:<18} {right:>3}/{n:<3} {paths:>8}/{n:<3}")
    print(f"{'all':<18} {total[0]:>3}/{total[2]:<3} {total[1]:>8}/{total[2]:<3}")
    print(
        f"cell accuracy {total[0] / total[2]:.2f}, header-path accuracy {total[1] / total[2]:.2f}"
    )
    passed, n_rules = _olmocr(args.data)
    print(f"olmOCR-bench table rules passed: {passed}/{n_rules}")


if __name__ == "__main__":
    main()
