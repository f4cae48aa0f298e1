"""Parse quality against ground truth we did not write, before/after in the same run.

Every measure runs twice in this process: BASELINE is ingestion as it was before issue #21 (no
OCR, ruled tables by pdfplumber only, no unruled tables), CURRENT is the default settings.
(a) olmOCR-bench sample rules (present / absent / order / table; math where LaTeX is produced);
(b) heading recall and precision vs GROBID/S2ORC section headers and LaTeX \\section titles;
(c) table cell F1 per ground-truth table (docling JSON, MinerU Markdown/HTML, LaTeX tabulars),
    each GT table against the best-matching table we extracted from the same PDF.
Usage: python bench/parse_quality.py   (needs ../shared/data)
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

import lxml.html

from footnote.config import IngestSettings
from footnote.errors import IngestError
from footnote.ingest import parse_file
from footnote.types import Document

REPO = Path(__file__).resolve().parents[1]
DATA = next(
    (p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir()),
    REPO.parent / "shared" / "data",
)
OLMO = DATA / "olmocr-bench-sample"
SCI = DATA / "sci-pdfs"
GT = SCI / "groundtruth"
BASELINE = IngestSettings(
    ocr="off", pdf_tables="pdfplumber", unruled_tables=False, formula_latex=False
)
CURRENT = IngestSettings()
CONFIGS = {"baseline": BASELINE, "current": CURRENT}
if "--docling" in sys.argv:  # the optional heavier reader, on the same ground truth
    CONFIGS["docling"] = IngestSettings(pdf_parser="docling-parse")
_CACHE: dict[tuple[str, Path], Document | None] = {}


def parsed(config: str, path: Path) -> Document | None:
    """A document parsed once per configuration (None when ingestion refused it)."""
    key = (config, path)
    if key not in _CACHE:
        try:
            _CACHE[key] = parse_file(path, CONFIGS[config])
        except IngestError:
            _CACHE[key] = None
    return _CACHE[key]


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


def _latex_key(tex: str) -> str:
    """A LaTeX formula reduced for comparison: no spaces, braces, \\left/\\right or sizing."""
    tex = re.sub(r"\\(?:left|right|big|Big|bigg|Bigg|displaystyle|,|;|!|quad|qquad)", "", tex)
    return re.sub(r"[\s{}]", "", tex)


def math_rule(rule: dict[str, str], doc: Document) -> bool:
    """Our stand-in for olmOCR's rendered-formula comparison: the rule's LaTeX, reduced, equals
    (or is contained in) a formula block's LaTeX, reduced."""
    want = _latex_key(rule["math"])
    return any(b.latex and want in _latex_key(b.latex) for b in doc.blocks)


def olmocr(config: str) -> dict[str, tuple[int, int]]:
    """Pass counts per rule type."""
    rules = [json.loads(x) for x in (OLMO / "dataset.jsonl").read_text().splitlines() if x.strip()]
    result: dict[str, list[bool]] = defaultdict(list)
    for rule in rules:
        doc = parsed(config, OLMO / "pdfs" / rule["pdf"])
        kind = rule["type"]
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
        elif kind == "math":
            ok = math_rule(rule, doc)
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
    """(hits, truth headings, our headings matching a true one, our headings)."""
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


def headings(config: str) -> dict[str, tuple[int, int, int, int]]:
    """Heading recall/precision per document."""
    out = {}
    for name in ("N18-3011", "2020.acl-main.207"):
        data = json.loads((GT / f"{name}.s2orc.json").read_text())
        truth = [p["section"] for p in data["pdf_parse"]["body_text"] if p["section"]]
        doc = parsed(config, SCI / "pdfs" / f"{name}.pdf")
        out[name] = recall(truth, doc) if doc else (0, len(set(truth)), 0, 0)
    for name in ("elegantpaper-en", "elegantpaper-cn"):
        tex = (GT / f"{name}.source.tex").read_text(encoding="utf-8")
        truth = re.findall(r"\\(?:sub)?section\*?\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", tex)
        truth = [re.sub(r"\\[a-zA-Z]+\{?|[{}]", "", t) for t in truth]
        doc = parsed(config, SCI / "pdfs" / f"{name}.pdf")
        out[name] = recall(truth, doc) if doc else (0, len(truth), 0, 0)
    return out


def _cell(text: str) -> str:
    text = re.sub(r"\\mathrm\{([^}]*)\}|\\text\{([^}]*)\}", r"\1\2", text)
    text = text.replace("\\%", "%").replace("$", "")
    return norm(text).replace(" ", "")


def gt_tables() -> list[tuple[str, Path, list[str]]]:
    """(label, the PDF it belongs to, its cells) for every ground-truth table."""
    out: list[tuple[str, Path, list[str]]] = []
    for js in sorted(GT.glob("*.docling.json")):
        name = js.name.replace(".docling.json", "")
        for k, t in enumerate(json.loads(js.read_text()).get("tables", [])):
            cells = [c["text"] for c in t["data"]["table_cells"]]
            out.append((f"{name} #{k + 1} (docling)", SCI / "pdfs" / f"{name}.pdf", cells))
    for md in sorted(GT.glob("mineru_*.gt.md")):
        name = md.name.replace(".gt.md", "")
        pdf, k = SCI / "pdfs" / f"{name}.pdf", 0
        text = md.read_text(encoding="utf-8")
        for block in re.findall(r"(?:^\|.*\n?)+", text, re.M):
            cells = [
                c
                for line in block.splitlines()
                if not re.fullmatch(r"[|:\-\s]+", line)
                for c in line.strip().strip("|").split("|")
            ]
            k += 1
            out.append((f"{name[:24]} #{k} (md)", pdf, cells))
        for html in re.findall(r"<table.*?</table>", text, re.S):
            root = lxml.html.fromstring(html)
            cells = [" ".join(td.itertext()) for td in root.iter("td", "th")]
            k += 1
            out.append((f"{name[:24]} #{k} (html)", pdf, cells))
    tex_sources = [
        ("elegantpaper-en", GT / "elegantpaper-en.source.tex", "elegantpaper-en.pdf"),
        ("elegantpaper-cn", GT / "elegantpaper-cn.source.tex", "elegantpaper-cn.pdf"),
        (
            "ucasthesis Chap_Guide",
            GT / "ucasthesis-tex" / "Chap_Guide.tex",
            "ucasthesis-template-guide-zh.pdf",
        ),
        (
            "ucasthesis Chap_Intro",
            GT / "ucasthesis-tex" / "Chap_Intro.tex",
            "ucasthesis-template-guide-zh.pdf",
        ),
    ]
    for label, tex, pdf in tex_sources:
        doc = parse_file(tex, CURRENT)  # tabular environments read from the LaTeX source
        for k, b in enumerate(b for b in doc.blocks if b.table is not None):
            assert b.table is not None
            cells = [c for row in b.table.all_rows for c in row]
            out.append((f"{label} #{k + 1} (tex)", SCI / "pdfs" / pdf, cells))
    return out


def f1(truth: Counter[str], ours: Counter[str]) -> float:
    tp = sum((truth & ours).values())
    p, r = tp / max(sum(ours.values()), 1), tp / max(sum(truth.values()), 1)
    return 2 * p * r / (p + r) if p + r else 0.0


def table_f1(config: str, pdf: Path, cells: list[str]) -> float:
    """Cell F1 of one GT table against the best-matching table we extracted."""
    truth = Counter(_cell(c) for c in cells if _cell(c))
    doc = parsed(config, pdf)
    if doc is None:
        return 0.0
    scores = [
        f1(truth, Counter(_cell(c) for row in b.table.all_rows for c in row if _cell(c)))
        for b in doc.blocks
        if b.table is not None
    ]
    return max(scores, default=0.0)


def main() -> None:
    """Print the three tables of numbers, one column per configuration."""
    if not DATA.exists():
        raise SystemExit(f"shared data not found at {DATA}")
    names = list(CONFIGS)
    print(
        "baseline: no OCR, pdfplumber ruled tables only, no unruled tables, no formula LaTeX; "
        "current: default settings"
    )
    if "docling" in CONFIGS:
        print("docling: current settings with ingest.pdf_parser = docling-parse")
    print("\n(a) olmOCR-bench sample rules   " + "".join(f"{n:>16}" for n in names))
    runs = {c: olmocr(c) for c in names}
    totals = {c: [0, 0] for c in names}
    for kind in sorted(runs["current"]):
        cells = []
        for c in names:
            ok, n = runs[c].get(kind, (0, 0))
            totals[c][0] += ok
            totals[c][1] += n
            cells.append(f"{ok:4d}/{n:<3d} {ok / max(n, 1):6.1%}")
        print(f"  {kind:30} " + "  ".join(cells))
    print(f"  {'all':30} " + "  ".join(f"{a:4d}/{n:<3d} {a / n:6.1%}" for a, n in totals.values()))
    print("\n(b) headings: recall (hits/truth) and precision (ours matching/ours)")
    for config in names:
        for name, (hit, n, good, ours) in headings(config).items():
            print(
                f"  {config:8} {name:22} recall {hit:3d}/{n:<3d} {hit / max(n, 1):6.1%}   "
                f"precision {good:3d}/{ours:<3d} {good / max(ours, 1):6.1%}"
            )
    print("\n(c) table cell F1 per ground-truth table " + "".join(f"{n:>10}" for n in names))
    means: dict[str, list[float]] = {c: [] for c in names}
    for label, pdf, cells in gt_tables():
        scores = {c: table_f1(c, pdf, cells) for c in names}
        for c, v in scores.items():
            means[c].append(v)
        row = "".join(f"{scores[c]:10.2f}" for c in names)
        print(f"  {label:40}{row}   ({len(cells)} cells)")
    count = len(means["current"])
    row = "".join(f"{sum(v) / max(len(v), 1):10.2f}" for v in means.values())
    print(f"  {'mean over ' + str(count) + ' tables':40}{row}")


if __name__ == "__main__":
    main()
    sys.exit(0)
