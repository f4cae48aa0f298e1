"""Bibliography entries and in-text citation links."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from footnote.ingest.cleanup import join_lines
from footnote.ingest.raw import Line, RawBlock, union_bbox
from footnote.types import Block

_NUM_MARK = re.compile(r"^\s*(?:\[(\d{1,4})\]|(\d{1,3})\.\s)")
_YEAR = re.compile(r"\b((?:19|20)\d{2})[a-z]?\b")
_AUTHOR_START = re.compile(r"^[A-Z][\w'’\-]+,\s")
_NUM_CITE = re.compile(r"\[(\d{1,4}(?:\s*[-–,;]\s*\d{1,4})*)\]")
_AY_CITE = re.compile(
    r"([A-Z][\w'’\-]+)(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][\w'’\-]+)?,?\s*\(?"
    r"((?:19|20)\d{2})[a-z]?\b"
)


def split_references(blocks: Sequence[RawBlock], vocab: set[str]) -> list[RawBlock]:
    """Turn the blocks under a References heading into one `reference` block per entry."""
    lines = [ln for b in blocks for ln in b.lines]
    if len(lines) >= 2 and all(b.lines for b in blocks):
        return _split_lines(blocks, lines, vocab)
    out: list[RawBlock] = []
    for b in blocks:
        parts = re.split(r"\n(?=\s*(?:\[\d{1,4}\]|\d{1,3}\.\s))", b.text)
        if len(parts) == 1:
            parts = b.text.split("\n")
        for part in parts:
            text = " ".join(part.split())
            if text:
                out.append(RawBlock("reference", text, b.page, b.bbox))
    return out


def _split_lines(blocks: Sequence[RawBlock], lines: list[Line], vocab: set[str]) -> list[RawBlock]:
    starts_at_block = {id(b.lines[0]) for b in blocks if b.lines}
    numbered = sum(1 for ln in lines if _NUM_MARK.match(ln.text)) >= max(2, len(lines) // 6)
    indents = [ln.x0 - ln.left > 0.6 * max(ln.size, 1.0) for ln in lines]
    hanging = not numbered and sum(indents) >= 0.25 * len(lines)
    entries: list[list[Line]] = []
    for i, ln in enumerate(lines):
        if numbered:
            start = bool(_NUM_MARK.match(ln.text))
        elif hanging:
            start = not indents[i]
        else:
            prev = lines[i - 1] if i else None
            start = (
                prev is None
                or id(ln) in starts_at_block
                or (prev.text.endswith(".") and bool(_AUTHOR_START.match(ln.text)))
            )
        if start or not entries:
            entries.append([ln])
        else:
            entries[-1].append(ln)
    out: list[RawBlock] = []
    for entry in entries:
        text = join_lines([ln.text for ln in entry], vocab)
        bbox = None
        for ln in entry:
            if ln.page == entry[0].page:
                bbox = union_bbox(bbox, ln.bbox)
        out.append(RawBlock("reference", text, entry[0].page, bbox, lines=entry))
    return out


def reference_keys(text: str) -> tuple[int | None, str | None, str | None]:
    """(number, first author's surname, year) of one bibliography entry."""
    m = _NUM_MARK.match(text)
    number = int(m.group(1) or m.group(2)) if m else None
    body = text[m.end() :] if m else text
    sm = re.match(r"\s*([A-Z][\w'’\-]+(?:\s+[a-z]{1,3}\s+[A-Z][\w'’\-]+)?)", body)
    surname = None
    if sm:
        word = sm.group(1)
        # "Smith, J." → Smith; "John Smith and …" → Smith
        after = body[sm.end() : sm.end() + 2]
        if after.startswith(",") or " " in word:
            surname = word.split()[-1]
        else:
            nm = re.match(r"\s*[A-Z][\w'’\-]+\s+(?:[A-Z]\.\s*)*([A-Z][\w'’\-]+)", body)
            surname = nm.group(1) if nm else word
    ym = _YEAR.search(body)
    return number, surname.lower() if surname else None, ym.group(1) if ym else None


@dataclass(frozen=True)
class CitationIndex:
    """Reference blocks by number and by (first author's surname, year), built once."""

    by_number: dict[int, str]
    by_author: dict[tuple[str, str], str]

    @classmethod
    def of(cls, refs: Sequence[Block]) -> CitationIndex:
        """Index a document's reference blocks."""
        by_number: dict[int, str] = {}
        by_author: dict[tuple[str, str], str] = {}
        for i, ref in enumerate(refs):
            number, surname, year = reference_keys(ref.text)
            by_number.setdefault(number if number is not None else i + 1, ref.id)
            if surname and year:
                by_author.setdefault((surname, year), ref.id)
        return cls(by_number, by_author)


def citation_targets(text: str, refs: Sequence[Block] | CitationIndex) -> tuple[str, ...]:
    """Ids of the reference blocks that citation markers in `text` point to."""
    index = refs if isinstance(refs, CitationIndex) else CitationIndex.of(refs)
    if not index.by_number and not index.by_author:
        return ()
    by_number, by_author = index.by_number, index.by_author
    found: list[str] = []
    for m in _NUM_CITE.finditer(text):
        for n in _expand(m.group(1)):
            rid = by_number.get(n)
            if rid and rid not in found:
                found.append(rid)
    if by_author:
        for m in _AY_CITE.finditer(text):
            rid = by_author.get((m.group(1).lower(), m.group(2)))
            if rid and rid not in found:
                found.append(rid)
    return tuple(found)


def _expand(spec: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"\s*[,;]\s*", spec):
        rng = re.split(r"\s*[-–]\s*", part)
        if len(rng) == 2 and rng[0].isdigit() and rng[1].isdigit():
            a, b = int(rng[0]), int(rng[1])
            if 0 < b - a < 50:
                out += list(range(a, b + 1))
                continue
        if part.isdigit():
            out.append(int(part))
    return out
