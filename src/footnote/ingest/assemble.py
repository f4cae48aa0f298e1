"""Raw blocks → final blocks: continuation merge, sections, splitting, dedup, ids, links."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from footnote.config import IngestSettings
from footnote.ingest.block_rules import REFERENCE_HEADINGS, heading_key
from footnote.ingest.cleanup import join_lines
from footnote.ingest.raw import Line, RawBlock, union_bbox
from footnote.ingest.references import CitationIndex, citation_targets, split_references
from footnote.textnorm import split_sentences, text_lang
from footnote.types import Block, Section, make_block_id

_TERMINAL = (".", "!", "?", ":", "。", "！", "？", "：", ";", "；", "”", '"')
_MERGEABLE = ("paragraph", "list")


@dataclass
class _Node:
    title: str
    level: int
    block_ids: list[str] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)

    def freeze(self) -> Section:
        return Section(
            self.title,
            self.level,
            block_ids=tuple(self.block_ids),
            children=tuple(c.freeze() for c in self.children),
        )


def assemble(
    raw: list[RawBlock], sha: str, settings: IngestSettings, vocab: set[str], title: str
) -> tuple[tuple[Block, ...], tuple[Section, ...], str]:
    """Final blocks in reading order, the section tree and the document language."""
    limit = settings.max_paragraph_chars
    items = [p for b in raw if b.text.strip() or b.table is not None for p in _cap(b, limit)]
    doc_lang = text_lang(" ".join(b.text for b in items[:400]))
    items = _merge_continuations(items, vocab, limit)
    items = _references(items, vocab)
    paths = _section_paths(items)
    staged: list[tuple[RawBlock, tuple[str, ...]]] = []
    for b, path in zip(items, paths, strict=True):
        for piece in _split_long(b, settings.max_block_chars):
            staged.append((piece, path))
    staged = _dedup(staged)
    staged = _merge_short(staged, settings.min_block_chars, vocab)
    _attach_captions([b for b, _ in staged])
    blocks = _finish(staged, sha, doc_lang)
    return blocks, _section_tree(blocks, title), doc_lang


def _cap(b: RawBlock, limit: int) -> list[RawBlock]:
    """A block longer than `ingest.max_paragraph_chars` cut at spaces into blocks no longer."""
    if len(b.text) <= limit or b.table is not None:
        return [b]
    pieces: list[str] = []
    text, start = b.text, 0
    while len(text) - start > limit:
        cut = text.rfind(" ", start + 1, start + limit + 1)
        cut = cut if cut > start else start + limit
        pieces.append(text[start:cut].strip())
        start = cut
    pieces.append(text[start:].strip())
    pieces = [p for p in pieces if p]
    return [
        replace(b, text=t, lines=part) for t, part in zip(pieces, _share(b, pieces), strict=True)
    ]


def _merge_continuations(items: list[RawBlock], vocab: set[str], limit: int) -> list[RawBlock]:
    """Paragraphs continued by the next one (no full stop, lower-case start) joined up to
    `limit` characters, each paragraph's parts joined once (re-joining the growing text at
    every part was quadratic)."""
    out: list[RawBlock] = []
    parts: list[list[str]] = []
    size = 0
    for b in items:
        prev = out[-1] if out else None
        if (
            prev is not None
            and size + len(b.text) < limit
            and b.kind == "paragraph"
            and prev.kind == "paragraph"
            and not parts[-1][-1].endswith(_TERMINAL)
            and (b.text[:1].islower() or (b.page != prev.page and b.text[:1] in "(,;"))
            and (
                b.page != prev.page
                or b.bbox is None
                or prev.bbox is None
                or b.bbox[1] < prev.bbox[1]
                or b.bbox[1] - prev.bbox[3] < 40
            )
        ):
            parts[-1].append(b.text)
            size += len(b.text) + 1
            prev.lines += b.lines
            if b.page == prev.page:
                prev.bbox = union_bbox(prev.bbox, b.bbox)
            continue
        out.append(b)
        parts.append([b.text])
        size = len(b.text)
    for b, texts in zip(out, parts, strict=True):
        if len(texts) > 1:
            b.text = join_lines(texts, vocab)
    return out


def _references(items: list[RawBlock], vocab: set[str]) -> list[RawBlock]:
    out: list[RawBlock] = []
    zone: list[RawBlock] = []
    level: int | None = None
    for b in [*items, RawBlock("heading", "\x00end", level=1)]:
        if b.kind == "heading" and level is not None and 0 < b.level <= level:
            out += split_references(zone, vocab)
            zone, level = [], None
        if level is not None and b.kind in ("paragraph", "list", "footnote", "formula"):
            zone.append(b)
            continue
        if b.kind == "heading" and heading_key(b.text) in REFERENCE_HEADINGS:
            level = max(b.level, 1)
        if b.text != "\x00end":
            out.append(b)
    return out


def _section_paths(items: list[RawBlock]) -> list[tuple[str, ...]]:
    stack: list[tuple[int, str]] = []
    paths = []
    for b in items:
        if b.kind == "heading" and b.level > 0:
            while stack and stack[-1][0] >= b.level:
                stack.pop()
            stack.append((b.level, b.text))
        paths.append(tuple(t for _, t in stack))
    return paths


def _split_long(b: RawBlock, limit: int) -> list[RawBlock]:
    if len(b.text) <= limit or b.kind not in ("paragraph", "list", "footnote", "reference"):
        return [b]
    chunks: list[str] = []
    cur = ""
    for sent in split_sentences(b.text):
        while len(sent) > limit:  # one giant "sentence": cut at a space
            cut = sent.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            if cur:
                chunks.append(cur)
                cur = ""
            chunks.append(sent[:cut].strip())
            sent = sent[cut:].strip()
        sep = "" if not cur or re.search(r"[。！？]$", cur) else " "
        if cur and len(cur) + len(sep) + len(sent) > limit:
            chunks.append(cur)
            cur = sent
        else:
            cur = f"{cur}{sep}{sent}" if cur else sent
    if cur:
        chunks.append(cur)
    return [
        replace(b, text=c, lines=part) for c, part in zip(chunks, _share(b, chunks), strict=True)
    ]


def _share(b: RawBlock, chunks: list[str]) -> list[list[Line]]:
    """The block's lines dealt to its chunks by text offset (each chunk its own lines, not a
    copy of all of them per chunk, which was quadratic)."""
    out: list[list[Line]] = []
    k, seen, end = 0, 0, 0
    for c in chunks:
        end += len(c) + 1
        start = k
        while k < len(b.lines) and seen < end:
            seen += len(b.lines[k].text) + 1
            k += 1
        out.append(b.lines[start:k] or b.lines[max(start - 1, 0) : start])
    return out


def _merge_short(
    staged: list[tuple[RawBlock, tuple[str, ...]]], min_chars: int, vocab: set[str]
) -> list[tuple[RawBlock, tuple[str, ...]]]:
    out = list(staged)
    i = 0
    while i < len(out):
        b, path = out[i]
        if b.kind in _MERGEABLE and len(b.text) < min_chars:
            for j in (i - 1, i + 1):
                if 0 <= j < len(out) and out[j][0].kind == b.kind and out[j][1] == path:
                    other = out[j][0]
                    first, second = (other, b) if j < i else (b, other)
                    sep = "\n" if b.kind == "list" else None
                    text = (
                        f"{first.text}{sep}{second.text}"
                        if sep
                        else join_lines([first.text, second.text], vocab)
                    )
                    merged = replace(first, text=text, lines=first.lines + second.lines)
                    if first.page == second.page:
                        merged.bbox = union_bbox(first.bbox, second.bbox)
                    lo = min(i, j)
                    out[lo : lo + 2] = [(merged, path)]
                    i = max(lo - 1, 0)
                    break
            else:
                i += 1
            continue
        i += 1
    return out


def _dedup(
    staged: list[tuple[RawBlock, tuple[str, ...]]],
) -> list[tuple[RawBlock, tuple[str, ...]]]:
    seen: set[tuple[str, str]] = set()
    out = []
    for b, path in staged:
        key = (b.kind, b.text)
        if b.kind != "heading" and key in seen:
            continue
        seen.add(key)
        out.append((b, path))
    return out


def _attach_captions(items: list[RawBlock]) -> None:
    caps = [
        (i, b)
        for i, b in enumerate(items)
        if b.kind == "caption" and re.match(r"^(?:Table|TABLE|Tab\.|表)", b.text)
    ]
    used: set[int] = set()
    for i, b in enumerate(items):
        if b.kind != "table" or b.table is None or b.table.caption:
            continue
        best: tuple[float, int, RawBlock] | None = None
        for j, cap in caps:
            if j in used or cap.page != b.page:
                continue
            dist = float(abs(j - i)) * 1000
            if b.bbox and cap.bbox:
                dist = min(abs(cap.bbox[3] - b.bbox[1]), abs(cap.bbox[1] - b.bbox[3]))
            if best is None or dist < best[0]:
                best = (dist, j, cap)
        if best is not None and (best[0] < 120 or not b.bbox):
            used.add(best[1])
            b.table = replace(b.table, caption=best[2].text)
            b.text = b.table.as_text()


def _finish(
    staged: list[tuple[RawBlock, tuple[str, ...]]], sha: str, doc_lang: str
) -> tuple[Block, ...]:
    source_id = sha[:12]
    blocks: list[Block] = []
    ids: set[str] = set()
    for order, (b, path) in enumerate(staged):
        bid = make_block_id(sha, b.page, order, b.text)
        k = 1
        while bid in ids:
            bid = make_block_id(sha, b.page, order, f"{b.text}\x1f{k}")
            k += 1
        ids.add(bid)
        letters = sum(1 for c in b.text if c.isalpha())
        lang = text_lang(b.text) if letters >= 8 else doc_lang
        blocks.append(
            Block(
                bid,
                source_id,
                b.kind,
                b.text,
                b.page,
                bbox=b.bbox,
                section_path=path,
                order=order,
                lang=lang,
                table=b.table,
                formula_number=b.formula_number,
                ocr_confidence=b.ocr_confidence,
                latex=b.latex,
            )
        )
    refs = [b for b in blocks if b.kind == "reference"]
    if refs:
        index = CitationIndex.of(refs)
        blocks = [
            replace(b, links=citation_targets(b.text, index))
            if b.kind in ("paragraph", "list", "caption", "footnote")
            else b
            for b in blocks
        ]
    return tuple(blocks)


def _section_tree(blocks: tuple[Block, ...], title: str) -> tuple[Section, ...]:
    front = _Node(title, 0)
    roots: list[_Node] = []
    stack: list[_Node] = []
    for b in blocks:
        if b.kind == "heading" and b.section_path and b.section_path[-1] == b.text:
            level = len(b.section_path)
            while stack and stack[-1].level >= level:
                stack.pop()
            node = _Node(b.text, level)
            (stack[-1].children if stack else roots).append(node)
            stack.append(node)
        (stack[-1] if stack else front).block_ids.append(b.id)
    return tuple(n.freeze() for n in ([front] if front.block_ids else []) + roots)
