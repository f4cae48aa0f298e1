"""Plain text: decoding, paragraphs split by blank lines, headings by simple patterns."""

from __future__ import annotations

import re

from footnote.ingest.block_rules import (
    CN_CHAPTER,
    CN_ITEM,
    EQ_NUMBER,
    NAMED_HEADINGS,
    NUMBERED,
    heading_key,
    numbered_level,
)
from footnote.ingest.captions import CAPTION, LIST_START
from footnote.ingest.cleanup import clean_text, join_lines
from footnote.ingest.encoding import decode_bytes
from footnote.ingest.raw import Line, RawBlock

_UNDERLINE = re.compile(r"^(=+|-+)\s*$")


def decode(data: bytes) -> str:
    """Bytes → str by the one decoding rule (`ingest.encoding`)."""
    return decode_bytes(data).text


def parse_text(text: str) -> tuple[list[RawBlock], str]:
    """Raw blocks and a title from plain text."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks: list[RawBlock] = []
    for para in re.split(r"\n\s*\n", text):
        raw_lines = [ln for ln in para.split("\n") if ln.strip()]
        if not raw_lines:
            continue
        if len(raw_lines) == 2 and _UNDERLINE.match(raw_lines[1].strip()):
            level = 1 if raw_lines[1].strip()[0] == "=" else 2
            blocks.append(RawBlock("heading", clean_text(raw_lines[0]), level=level))
            continue
        # a heading line directly followed by its paragraph (no blank line between)
        if len(raw_lines) > 1 and _heading_level(raw_lines[0].strip()) is not None:
            head = raw_lines.pop(0).strip()
            blocks.append(RawBlock("heading", clean_text(head), level=_heading_level(head) or 1))
        lines = [_line(ln) for ln in raw_lines]
        lines = [ln for ln in lines if ln.text]
        if not lines:
            continue
        first = lines[0].text
        hlevel = _heading_level(first) if len(lines) == 1 else None
        if hlevel is not None:
            name = re.sub(r"^#{1,6}\s+", "", first)
            blocks.append(RawBlock("heading", name, level=hlevel, lines=lines))
        elif CAPTION.match(first):
            blocks.append(RawBlock("caption", join_lines([ln.text for ln in lines]), lines=lines))
        elif LIST_START.match(first) and not NUMBERED.match(first):
            blocks.append(RawBlock("list", "\n".join(ln.text for ln in lines), lines=lines))
        elif len(lines) <= 2 and (m := EQ_NUMBER.search(lines[-1].text)) and "=" in para:
            blocks.append(
                RawBlock(
                    "formula",
                    " ".join(ln.text for ln in lines),
                    formula_number=m.group(1),
                    lines=lines,
                )
            )
        else:
            blocks.append(RawBlock("paragraph", join_lines([ln.text for ln in lines]), lines=lines))
    title = next((b.text for b in blocks if b.kind == "heading"), "")
    return blocks, title


def _line(raw: str) -> Line:
    indent = len(raw) - len(raw.lstrip(" \t"))
    return Line(clean_text(raw), float(indent * 5), 0.0, 0.0, 0.0, 10.0)


def _heading_level(line: str) -> int | None:
    """Level of a one-line heading in plain text, or None."""
    if len(line) > 100 or line.endswith((".", ",", ";", "。", "，")):
        return None
    m = re.match(r"^(#{1,6})\s+\S", line)
    if m:
        return len(m.group(1))
    if heading_key(line) in NAMED_HEADINGS:
        return 1
    if NUMBERED.match(line) and len(line.split()) <= 10:
        return numbered_level(line)
    if (CN_CHAPTER.match(line) or CN_ITEM.match(line)) and len(line) <= 30:
        return numbered_level(line)
    if line.isupper() and 1 <= len(line.split()) <= 8 and re.search(r"[A-Z]{3}", line):
        return 1
    return None
