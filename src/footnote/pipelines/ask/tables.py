"""Table questions answered by structure: the row and column a question names resolve to a cell.

"In Table 1, what is the score of finetuned SciBERT on ChemProt?" names a row label (ChemProt)
and a column header (SciBERT / finetune). Code matches the question's terms against every
column's header path and every row's label (fuzzy: crude stems and prefixes; Chinese by
character bigrams; a small glossary maps common Chinese table words to English), and takes the
cell where the best row meets the best column. The answer sentence is phrased by code in the
question's language and cites that cell, whose evidence text is the row label, the column label
and the value, so the verifier checks exactly what the reader is told. When no row or column
stands out (tie or no match), nothing is resolved and the composer is asked instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from footnote.index.windows import terms
from footnote.ingest.captions import caption_ref
from footnote.textnorm import quantities
from footnote.types import Block, cell_id
from footnote.verify import Evidence

GLOSSARY = {
    "准确率": "accuracy",
    "精确率": "precision",
    "精度": "precision",
    "召回率": "recall",
    "平均": "average avg mean",
    "均值": "mean average",
    "总计": "total",
    "合计": "total",
    "总数": "total",
    "测试集": "test",
    "训练集": "train training",
    "验证集": "dev validation",
    "数量": "number count",
    "模型": "model",
    "方法": "method",
    "得分": "score",
    "分数": "score",
    "营业收入": "revenue",
    "净利润": "net profit",
    "编码器": "encoder enc",
    "解码器": "decoder dec",
    "层": "layers",
}
"""Chinese table vocabulary → English header words (for Chinese questions about English tables)."""
_NUMERIC = re.compile(r"^[\s()\[\]+\-−–±~≈<>%.,\d*†‡]*$")


@dataclass(frozen=True)
class CellAnswer:
    """A resolved cell: where it is, its labels, and the evidence item that cites it."""

    block: Block
    row: int
    col: int
    row_label: str
    col_label: str
    value: str
    score: float

    @property
    def evidence_id(self) -> str:
        """The cell's citable id (`block#r{row}c{col}`)."""
        return cell_id(self.block.id, self.row, self.col)

    def evidence(self, relevance: float) -> Evidence:
        """The cell as an evidence item: its text names row, column and value."""
        table = self.block.table
        assert table is not None
        header = (
            " | ".join(" / ".join(h) for h in zip(*table.header, strict=False))
            if table.header
            else ""
        )
        row_text = " | ".join(table.all_rows[self.row])
        return Evidence(
            self.evidence_id,
            f"{self.row_label}, {self.col_label}: {self.value}",
            self.block,
            relevance=relevance,
            context=f"{table.caption}\n{header}\n{row_text}".strip(),
        )

    def sentence(self, lang: str) -> str:
        """The answer sentence, phrased by code in the question's language."""
        if lang == "zh":  # labels and value only: no word the cell does not hold
            return f"{self.row_label}，{self.col_label}：{self.value}。"
        return f"The {self.col_label} value for {self.row_label} is {self.value}."


def bilingual_terms(text: str) -> set[str]:
    """Matching terms of a text, with the glossary's English for the Chinese table words in it."""
    extra = " ".join(en for zh, en in GLOSSARY.items() if zh in text)
    return terms(text + " " + extra)


def _coverage(q: set[str], label: str) -> float:
    """The share of a label's terms the question names (exactly or by a long shared prefix)."""
    lt = bilingual_terms(label)
    if not lt:
        return 0.0
    named = sum(
        1
        for t in lt
        if t in q
        or (len(t) >= 4 and any(len(x) >= 4 and (x.startswith(t) or t.startswith(x)) for x in q))
    )
    return named / len(lt)


def _match(q: set[str], label: str) -> float:
    """How well a label is named by the question: matched label terms (prefix-fuzzy) / label terms."""
    lt = bilingual_terms(label)
    if not lt:
        return 0.0
    hit = 0.0
    for t in lt:
        if t in q:
            hit += 1
        elif len(t) >= 4 and any(len(x) >= 4 and (x.startswith(t) or t.startswith(x)) for x in q):
            hit += 0.8
    # a label all of whose words are named beats a long label with one word named
    return hit + 0.5 * hit / len(lt)


def _is_value(cell: str) -> bool:
    return bool(cell.strip()) and (bool(_NUMERIC.match(cell)) or bool(quantities(cell)))


def column_labels(block: Block) -> list[str]:
    """Each column's header path ("SciBERT / finetune"); spanning header cells fill rightwards."""
    table = block.table
    assert table is not None
    width = max((len(r) for r in table.all_rows), default=0)
    header = table.header or table.all_rows[:1]
    paths: list[list[str]] = [[] for _ in range(width)]
    for row in header:
        last = ""
        for c in range(width):
            cell = row[c].strip() if c < len(row) else ""
            cell = cell or last
            last = cell
            if cell and (not paths[c] or paths[c][-1] != cell):
                paths[c].append(cell)
    return [" / ".join(p) for p in paths]


def row_label(row: Sequence[str]) -> str:
    """The row's leading non-value cells, joined."""
    return " ".join(row_label_cells(row))


def _row_key(row: Sequence[str]) -> str:
    """The most specific cell of a row's label (its last label cell: "SciERC" of CS/NER/SciERC)."""
    cells = row_label_cells(row)
    return cells[-1] if cells else ""


def row_label_cells(row: Sequence[str]) -> list[str]:
    """The row's leading non-value cells."""
    label: list[str] = []
    for cell in row:
        if _is_value(cell) and label:
            break
        if cell.strip():
            label.append(cell.strip())
    return label


def resolve_cell(
    question: str, block: Block, *, margin: float = 0.25, strict: bool = False
) -> CellAnswer | None:
    """The cell the question names in this table, or None when row or column is unclear.
    `strict` (the table is not named): the question must name the whole row label and at least
    half of the column's header path, so a stray shared word never picks a cell."""
    table = block.table
    if table is None or not table.rows:
        return None
    q = bilingual_terms(question)
    cols = column_labels(block)
    first_body = len(table.header) if table.header else 1
    rows = table.all_rows
    row_scores = [
        (_match(q, row_label(rows[r])), r) for r in range(first_body, len(rows)) if rows[r]
    ]
    col_scores = [(_match(q, cols[c]), c) for c in range(len(cols)) if cols[c]]
    best_row = _unique_best(row_scores, margin)
    if best_row is None:
        return None
    r = best_row
    label = row_label(rows[r])
    # columns: only those holding a value in this row, and not the label's own columns
    label_cols = {c for c, cell in enumerate(rows[r]) if cell.strip() and cell.strip() in label}
    candidates = [
        (s, c)
        for s, c in col_scores
        if c < len(rows[r]) and c not in label_cols and _is_value(rows[r][c])
    ]
    best_col = _unique_best(candidates, margin)
    if best_col is None:
        return None
    if strict and (_coverage(q, _row_key(rows[r])) < 1.0 or _coverage(q, cols[best_col]) < 0.5):
        return None
    row_s = max(s for s, i in row_scores if i == r)
    col_s = max(s for s, i in candidates if i == best_col)
    return CellAnswer(
        block, r, best_col, label, cols[best_col], rows[r][best_col].strip(), row_s + col_s
    )


def _names_table(block: Block, refs: Sequence[str]) -> bool:
    ref = caption_ref(block.table.caption) if block.table is not None else None
    return ref is not None and ref[0] == "table" and ref[1] in refs


def _unique_best(scored: Sequence[tuple[float, int]], margin: float) -> int | None:
    ranked = sorted(scored, key=lambda s: -s[0])
    if not ranked or ranked[0][0] <= 0:
        return None
    if len(ranked) > 1 and ranked[1][0] > ranked[0][0] - margin:
        return None
    return ranked[0][1]


def resolve_in_tables(
    question: str, blocks: Sequence[Block], refs: Sequence[str] = (), *, strict: bool = True
) -> CellAnswer | None:
    """The best cell over the given table blocks. When the question names tables (`refs`,
    "Table 1" → "1"), only those are read: a look-alike cell of another table is never taken;
    when it names none, only a cell whose row and column labels it names in full (`strict`;
    off: the best-scoring cell, the behaviour before issue #29)."""
    if refs:
        blocks = [b for b in blocks if _names_table(b, refs)]
    strict = strict and not refs
    found = [
        c
        for b in blocks
        if b.table is not None
        for c in [resolve_cell(question, b, strict=strict)]
        if c
    ]
    return max(found, key=lambda c: c.score) if found else None
