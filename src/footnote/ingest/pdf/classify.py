"""PDF blocks: what a group of rows is (heading and its level, caption, formula, list,
footnote, paragraph) from fonts and position; heading levels and the title."""

from __future__ import annotations

import itertools
import re
from collections import Counter

from footnote.ingest.block_rules import (
    EQ_NUMBER,
    NAMED_HEADINGS,
    NUMBERED,
    heading_key,
    numbered_level,
)
from footnote.ingest.captions import CAPTION, CAPTION_START, LIST_START
from footnote.ingest.cleanup import join_lines
from footnote.ingest.pdf.layout import Row
from footnote.ingest.raw import RawBlock, union_bbox
from footnote.textnorm import count_cjk
from footnote.types import BlockKind

_MATH = set("=+−×·÷±∓≤≥≠≈≡∝∞∑∏∫∮∂∇√∈∉⊂⊆∪∩∀∃¬∧∨→←↔⇒⇔αβγδεζηθικλμνξπρστυφχψωΓΔΘΛΞΠΣΦΨΩ^‖⟨⟩")
_FOOTNOTE = re.compile(r"^(?:[\d*†‡§¶]{1,3})\s?\S")


def body_size(rows: list[Row]) -> float:
    """The most common font size over all text, weighted by characters."""
    sizes: Counter[float] = Counter()
    for row in rows:
        if row.table is None:
            sizes[row.line.size] += len(row.line.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def classify(group: list[Row], body: float, page_height: float, vocab: set[str]) -> RawBlock:
    """Turn one group of rows into a typed raw block."""
    first = group[0]
    if first.table is not None:
        item = first.table
        return RawBlock("table", item.table.as_text(), first.line.page, item.bbox, table=item.table)
    lines = [r.line for r in group]
    text = join_lines([ln.text for ln in lines], vocab)
    bbox = None
    for ln in lines:
        bbox = union_bbox(bbox, ln.bbox)
    sizes: Counter[float] = Counter()
    for ln in lines:
        sizes[ln.size] += len(ln.text)
    size = sizes.most_common(1)[0][0]
    bold = all(ln.bold for ln in lines)
    block = RawBlock("paragraph", text, first.line.page, bbox, lines=lines, size=size, bold=bold)
    block.kind, block.level, block.formula_number = _kind(block, body, page_height, len(lines))
    if block.kind == "heading" and any(_cell_gaps(r) for r in group):
        block.kind, block.level = "paragraph", 0  # a table's header row, not a section
    return block


def _cell_gaps(row: Row) -> bool:
    """Fragments set apart by column gaps (a table row): not after a lone glyph (a logo
    letter before a title) nor after a section number."""
    wide = 2.0 * max(row.line.size, 1.0)
    frags = sorted(row.frags, key=lambda f: f.x0)
    for k, (a, b) in enumerate(itertools.pairwise(frags)):
        after_number = k == 0 and NUMBERED.match(row.line.text)
        if b.x0 - a.x1 > wide and len(a.text.strip()) >= 2 and not after_number:
            return True
    return False


def _kind(
    b: RawBlock, body: float, page_height: float, n_lines: int
) -> tuple[BlockKind, int, str | None]:
    text = b.text
    words = len(text.split())
    if CAPTION.match(text) or (CAPTION_START.match(text) and b.size < body - 0.4):
        return "caption", 0, None
    number = _formula(b, words, n_lines)
    if number is not None and "=" in text and not NUMBERED.match(text):
        return "formula", 0, number or None  # an equation set large is not a heading
    level = _heading_level(b, body, n_lines, words)
    if level is not None:
        return "heading", level, None
    if number is not None:
        return "formula", 0, number or None
    if (
        b.size <= body - 1.0
        and b.bbox is not None
        and b.bbox[1] > page_height * 0.6
        and (_FOOTNOTE.match(text) or text.startswith("http"))
    ):
        return "footnote", 0, None
    if LIST_START.match(text) and not NUMBERED.match(text):
        return "list", 0, None
    return "paragraph", 0, None


def _heading_level(b: RawBlock, body: float, n_lines: int, words: int) -> int | None:
    text = b.text
    if n_lines > 3 or len(text) > 200 or words > 25:
        return None
    key = heading_key(text)
    numbered = numbered_level(text)
    named = key in NAMED_HEADINGS
    bigger = b.size >= body + 0.9
    ends_sentence = text.endswith((".", ",", ";", "。", "，", "；")) and not re.fullmatch(
        r"[\dA-Z.]+\.", text
    )
    if "。" in text[:-1] or count_cjk(text) > 30:
        return None  # Chinese prose: headings are short and hold no full stop
    if re.search(r"\d{4}|@|https?:", text) and not numbered:
        return None
    if re.search(r"[a-z]\.\s+[A-Z]", text):  # a run-in heading followed by its paragraph
        return None
    if numbered is not None and NUMBERED.match(text):
        rest = NUMBERED.match(text)
        if rest and len(rest.group("rest").split()) > 14:
            return None
    if bigger and not ends_sentence and words <= 20:
        return numbered or -1
    if b.bold and (numbered is not None or named or (words <= 10 and not ends_sentence)):
        return numbered or -1
    if named and n_lines == 1 and b.size >= body - 0.5:
        return -1
    if numbered is not None and not NUMBERED.match(text) and n_lines == 1 and len(text) <= 30:
        return numbered  # Chinese 第一章 / 一、 at body size
    return None


def _formula(b: RawBlock, words: int, n_lines: int) -> str | None:
    """ "" for an unnumbered formula, the number for a numbered one, None otherwise."""
    text = b.text
    if n_lines > 6 or len(text) > 400:
        return None
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return None
    math = sum(1 for c in chars if c in _MATH)
    long_words = len(re.findall(r"[A-Za-z]{4,}", text))
    m = EQ_NUMBER.search(text)
    if m and (math >= 1 or "=" in text) and long_words <= max(3, words // 4):
        return m.group(1)
    if math / len(chars) >= 0.12 and long_words <= 2 and not text.endswith("."):
        return ""
    return None


def assign_levels(blocks: list[RawBlock], body: float) -> None:
    """Give unnumbered headings a level from the font sizes of numbered ones; pick a title."""
    heads = [b for b in blocks if b.kind == "heading"]
    if not heads:
        return
    by_size: dict[float, Counter[int]] = {}
    for h in heads:
        if h.level > 0:
            by_size.setdefault(h.size, Counter())[h.level] += 1
    ranked = sorted({h.size for h in heads if h.level < 0 and h.size not in by_size}, reverse=True)
    known = sorted(by_size, reverse=True)
    for h in heads:
        if h.level > 0:
            continue
        if h.size in by_size:
            h.level = by_size[h.size].most_common(1)[0][0]
        elif known and h.size > known[0]:
            h.level = 1
        elif known:
            below = [s for s in known if s <= h.size]
            h.level = by_size[below[0]].most_common(1)[0][0] if below else 3
        else:
            h.level = min(ranked.index(h.size) + 1, 3) if h.size in ranked else 1
    _pick_title(blocks, body)
    _demote_front_matter(blocks, body)
    _demote_table_labels(blocks, body)


def _demote_table_labels(blocks: list[RawBlock], body: float) -> None:
    """Small print set right above a table's rows (a group row such as "Tiny") is part of
    the table, not a section."""
    for b, nxt in itertools.pairwise(blocks):
        plain = numbered_level(b.text) is None and heading_key(b.text) not in NAMED_HEADINGS
        if b.kind == "heading" and nxt.kind == "table" and b.size < body - 0.4 and plain:
            b.kind, b.level = "paragraph", 0


def _pick_title(blocks: list[RawBlock], body: float) -> None:
    first_page = [b for b in blocks[:40] if b.page == 1 and b.kind in ("heading", "paragraph")]
    if not first_page:
        return
    top = max(first_page, key=lambda b: b.size)
    if top.size < body + 2 or len(top.text) > 250 or numbered_level(top.text) is not None:
        return
    if heading_key(top.text) in NAMED_HEADINGS:
        return
    top.kind, top.level = "heading", 0


def _demote_front_matter(blocks: list[RawBlock], body: float) -> None:
    """Authors, affiliations and notes between the title and "Abstract" are not sections."""
    first = [b for b in blocks[:60] if b.page == 1]
    anchor = next(
        (
            k
            for k, b in enumerate(first)
            if b.kind == "heading"
            and b.level != 0
            and (heading_key(b.text) in NAMED_HEADINGS or NUMBERED.match(b.text))
        ),
        None,
    )
    if anchor is None:
        return
    for k, b in enumerate(first[:anchor]):
        if b.kind != "heading" or b.level == 0:
            continue
        nxt = first[k + 1]
        if nxt.kind == "paragraph" and len(nxt.lines) >= 3 and nxt.size >= body - 0.5:
            continue  # a real unnumbered section (a report's "Summary") with its text
        b.kind, b.level = "paragraph", 0
    numbered = next(
        (k for k, b in enumerate(first) if b.kind == "heading" and NUMBERED.match(b.text)), anchor
    )
    for b in first[anchor + 1 : numbered]:  # names set beside the abstract (ACM layout)
        named = heading_key(b.text) in NAMED_HEADINGS
        if b.kind == "heading" and b.level != 0 and not b.bold and not named:
            b.kind, b.level = "paragraph", 0
