"""Parse quality against ground truth we did not write.

(a) olmOCR-bench sample rules (present / absent / order / table) on our extracted text;
(b) heading recall vs GROBID/S2ORC section headers and LaTeX \\section titles;
(c) table cell F1 vs docling JSON tables and MinerU ground-truth Markdown tables.
Usage: python bench/parse_quality.py   (needs ../shared/data)
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

from footnote.config import IngestSettings
from footnote.errors import IngestError
from footnote.ingest import parse_file
from footnote.types import Document

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
OLMO = DATA / "olmocr-bench-sample"
SCI = DATA / "sci-pdfs"
SETTINGS = IngestSettings()


def norm(text: str, case: bool = False) -> str:
    """NFKC, unify quotes/dashes, collapse whitespace; lower-case unless `case`."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[‘’´`]", "'", re.sub(r"[“”]", '"', text))
    text = re.sub(r"[‐‑‒–—−]", "-", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text if case else text.lower()


def fuzzy_find(needle: str, hay: str, max_diffs: int) -> int:
    """Start index of `needle` in `hay` within `max_diffs` edits (-1 if absent)."""
    idx = hay.find(needle)
    if idx >= 0 or max_diffs == 0 or not needle:
        return idx
    m = len(needle)
    prev = list(range(m + 1))
    best, best_end = max_diffs + 1, -1
    for j, ch in enumerate(hay):
        cur = [0] * (m + 1)
        for i in range(1, m + 1):
            cost = 0 if needle[i - 1] == ch else 1
            cur[i] = min(prev[i - 1] + cost, prev[i] + 1, cur[i - 1] + 1)
        if cur[m] < best:
            best, best_end = cur[m], j
        prev = cur
    return max(0, best_end - m + 1) if best <= max_diffs else -1


def doc_text(doc: Document) -> str:
    """Blocks in reading order (tables as ' | ' rows)."""
    return "\n".join(b.text for b in doc.blocks)


def table_rule(rule: dict[str, str], doc: Document) -> bool:
    """olmOCR table rule: the cell exists and its stated neighbours hold."""
    want = norm(rule["cell"])
    for b in doc.blocks:
        if b.table is None:
            continue
        grid = [[norm(c) for c in row] for row in b.table.all_rows]
        for r, row in enumerate(grid):
            for c, cell in enumerate(row):
                if cell != want:
                    continue
                checks = {
                    "up": grid[r - 1][c] if r > 0 and c < len(grid[r - 1]) else None,
                    "down": grid[r + 1][c] if r + 1 < len(grid) and c < len(grid[r + 1]) else None,
                    "left": row[c - 1] if c > 0 else None,
                    "right": row[c + 1] if c + 1 < len(row) else None,
                    "top_heading": grid[0][c] if c < len(grid[0]) else None,
                    "left_heading": row[0],
                }
                if all(checks[k] == norm(rule[k]) for k in checks if rule.get(k)):
                    return True
    return False


def olmocr() -> dict[str, tuple[int, int]]:
    """Pass counts per rule type."""
    rules = [json.loads(x) for x in (OLMO / "dataset.jsonl").read_text().splitlines() if x.strip()]
    docs: dict[str, Document | None] = {}
    result: dict[str, list[bool]] = defaultdict(list)
    for rule in rules:
        name = rule["pdf"]
        if name not in docs:
            try:
                docs[name] = parse_file(OLMO / "pdfs" / name, SETTINGS)
            except IngestError:
                docs[name] = None
        doc = docs[name]
        kind = rule["type"]
        if kind == "math":
            continue
        if doc is None:
            result[kind].append(False)
            continue
        case = bool(rule.get("case_sensitive"))
        text = norm(doc_text(doc), case)
        diffs = int(rule.get("max_diffs", 0))
        if kind == "present":
            ok = fuzzy_find(norm(rule["text"], case), text, diffs) >= 0
        elif kind == "absent":
            ok = fuzzy_find(norm(rule["text"], case), text, diffs) < 0
        elif kind == "order":
            a = fuzzy_find(norm(rule["before"]), text, diffs)
            b = fuzzy_find(norm(rule["after"]), text, diffs)
            ok = a >= 0 and b >= 0 and a < b
        else:
            ok = table_rule(rule, doc)
        result[kind].append(ok)
    return {k: (sum(v), len(v)) for k, v in result.items()}


def heading_key(text: str) -> str:
    """Heading text without numbering, punctuation and case."""
    text = re.sub(r"^\s*(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)*|[IVX]+)\.?\s+", "", text)
    return re.sub(r"[^\w\u4e00-\u9fff]+", "", text.lower())


_UNLISTED = {
    "abstract",
    "references",
    "bibliography",
    "acknowledgements",
    "acknowledgments",
    "摘要",
    "参考文献",
    "致谢",
}
"""Headings the ground truth leaves out (front/back matter): not counted against precision."""


def _match(t: str, o: str) -> bool:
    return t == o or bool(len(t) > 4 and (t in o or o in t) and o)


def recall(truth: list[str], doc: Document) -> tuple[int, int, int, int]:
    """(hits, truth headings, our headings matching a true one, our headings): recall on the
    key equality/containment match, and precision over our headings except the title and
    front/back matter the truth does not list."""
    keys = {heading_key(x) for x in truth if heading_key(x)}
    heads = [b for b in doc.blocks if b.kind == "heading"]
    hit = sum(1 for t in keys if any(_match(t, heading_key(b.text)) for b in heads))
    ours = [
        heading_key(b.text)
        for b in heads
        if b.text != doc.source.title and heading_key(b.text) not in _UNLISTED
    ]
    good = sum(1 for o in ours if any(_match(t, o) for t in keys))
    return hit, len(keys), good, len(ours)


def headings() -> dict[str, tuple[int, int, int, int]]:
    """Heading recall per document."""
    out = {}
    gt = SCI / "groundtruth"
    for name in ("N18-3011", "2020.acl-main.207"):
        data = json.loads((gt / f"{name}.s2orc.json").read_text())
        truth = [p["section"] for p in data["pdf_parse"]["body_text"] if p["section"]]
        out[name] = recall(truth, parse_file(SCI / "pdfs" / f"{name}.pdf", SETTINGS))
    for name in ("elegantpaper-en", "elegantpaper-cn"):
        tex = (gt / f"{name}.source.tex").read_text(encoding="utf-8")
        truth = re.findall(r"\\(?:sub)?section\*?\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", tex)
        truth = [re.sub(r"\\[a-zA-Z]+\{?|[{}]", "", t) for t in truth]
        out[name] = recall(truth, parse_file(SCI / "pdfs" / f"{name}.pdf", SETTINGS))
    return out


def cell_f1(truth: list[str], doc: Document) -> tuple[float, int, int]:
    """Multiset F1 of normalised non-empty cell texts."""
    t = Counter(norm(c).replace(" ", "") for c in truth if norm(c))
    ours = Counter(
        norm(c).replace(" ", "")
        for b in doc.blocks
        if b.table
        for r in b.table.all_rows
        for c in r
        if norm(c)
    )
    tp = sum((t & ours).values())
    p = tp / max(sum(ours.values()), 1)
    r = tp / max(sum(t.values()), 1)
    return (2 * p * r / (p + r) if p + r else 0.0), sum(ours.values()), sum(t.values())


def tables() -> dict[str, tuple[float, int, int]]:
    """Cell F1 per document with ground-truth tables."""
    gt = SCI / "groundtruth"
    out = {}
    for js in sorted(gt.glob("*.docling.json")):
        data = json.loads(js.read_text())
        cells = [c["text"] for t in data.get("tables", []) for c in t["data"]["table_cells"]]
        if cells:
            name = js.name.replace(".docling.json", "")
            out[name] = cell_f1(cells, parse_file(SCI / "pdfs" / f"{name}.pdf", SETTINGS))
    for md in sorted(gt.glob("mineru_*.gt.md")):
        cells = []
        for line in md.read_text(encoding="utf-8").splitlines():
            if line.startswith("|") and not re.fullmatch(r"[|:\-\s]+", line):
                cells += [
                    re.sub(r"\$|\\mathrm\{([^}]*)\}", r"\1", c).replace("\\%", "%")
                    for c in line.strip().strip("|").split("|")
                ]
        if cells:
            name = md.name.replace(".gt.md", "")
            out[name[:40]] = cell_f1(cells, parse_file(SCI / "pdfs" / f"{name}.pdf", SETTINGS))
    return out


def main() -> None:
    """Print the three tables of numbers."""
    if not DATA.exists():
        raise SystemExit(f"shared data not found at {DATA}")
    print("(a) olmOCR-bench sample rules (math rules not evaluated: we emit no LaTeX)")
    total = [0, 0]
    for kind, (ok, n) in sorted(olmocr().items()):
        total[0] += ok
        total[1] += n
        print(f"  {kind:8} {ok:3d}/{n:<3d} {ok / n:6.1%}")
    print(f"  {'all':8} {total[0]:3d}/{total[1]:<3d} {total[0] / total[1]:6.1%}")
    print("(b) heading recall; precision (ours matching a true heading / ours)")
    hs = headings()
    for name, (hit, n, good, ours) in hs.items():
        print(
            f"  {name:40} {hit:3d}/{n:<3d} {hit / max(n, 1):6.1%}   "
            f"precision {good:3d}/{ours:<3d} {good / max(ours, 1):6.1%}"
        )
    print("(c) table cell F1 (ours cells / truth cells)")
    for name, (f1, ours, truth) in tables().items():
        print(f"  {name:40} F1 {f1:5.2f}  ({ours} / {truth})")


if __name__ == "__main__":
    main()
