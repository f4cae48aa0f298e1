"""Markdown via markdown-it-py tokens: headings, paragraphs, lists, GFM tables, code, math."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from footnote.ingest import metadata
from footnote.ingest.captions import CAPTION
from footnote.ingest.cleanup import clean_text
from footnote.ingest.metadata import Meta
from footnote.ingest.raw import Line, RawBlock
from footnote.types import BlockKind, Table

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)
_MATH_BLOCK = re.compile(r"^\s*\$\$(.+?)\$\$\s*(?:\((\d{1,3}(?:\.\d+)?[a-z]?)\))?\s*$", re.S)
_TAG = re.compile(r"\\tag\{([^}]+)\}")


def inline_text(token: Token) -> str:
    """Plain text of an inline token (links keep their text, images their alt text)."""
    if not token.children:
        return token.content
    parts: list[str] = []
    for child in token.children:
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content if child.type != "html_inline" else "")
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content or str(child.attrs.get("alt", "")))
    return "".join(parts)


def parse_markdown(source: str) -> tuple[list[RawBlock], Meta]:
    """Raw blocks and metadata (front matter title/author/date/doi, else the first heading)."""
    meta = Meta()
    fm = _FRONT_MATTER.match(source)
    if fm:
        meta = _front_matter(fm.group(1))
        source = source[fm.end() :]
    title = meta.title
    md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    tokens = md.parse(source)
    blocks: list[RawBlock] = []
    list_depth = 0
    items: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
            if list_depth == 0 and items:
                blocks.append(RawBlock("list", "\n".join(items), lines=[_line(t) for t in items]))
                items = []
        elif tok.type == "heading_open":
            text = clean_text(inline_text(tokens[i + 1]))
            blocks.append(RawBlock("heading", text, level=int(tok.tag[1:])))
            i += 2
        elif tok.type == "inline" and list_depth > 0:
            marker = "-" if _list_kind(tokens, i) == "bullet" else "*"
            text = clean_text(" ".join(inline_text(tok).split("\n")))
            items.append(f"{'  ' * (list_depth - 1)}{marker} {text}")
        elif tok.type == "inline":
            blocks.append(_paragraph(inline_text(tok)))
        elif tok.type in ("fence", "code_block"):
            info = tok.info.strip().lower()
            if info in ("math", "latex", "tex", "katex"):
                blocks.append(_formula(tok.content.strip()))
            elif tok.content.strip():
                blocks.append(RawBlock("paragraph", clean_text(tok.content.rstrip())))
        elif tok.type == "table_open":
            i, table = _table(tokens, i)
            blocks.append(RawBlock("table", table.as_text(), table=table))
        elif tok.type == "html_block":
            text = clean_text(re.sub(r"<[^>]+>", " ", tok.content))
            if text:
                blocks.append(RawBlock("paragraph", text))
        i += 1
    if not title:
        title = next((b.text for b in blocks if b.kind == "heading"), "")
    meta.title = title
    return blocks, meta


def _front_matter(text: str) -> Meta:
    """title, author(s), date and doi from YAML-ish front matter (scalars and `- item` lists)."""
    fields: dict[str, list[str]] = {}
    key = ""
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_]+):\s*(.*)$", line)
        if m:
            key = m.group(1).lower()
            value = m.group(2).strip().strip("'\"")
            fields[key] = (
                [v.strip().strip("'\"") for v in value.strip("[]").split(",")]
                if (value.startswith("["))
                else ([value] if value else [])
            )
        elif key and (item := re.match(r"^\s+-\s+(.+)$", line)):
            fields[key].append(item.group(1).strip().strip("'\""))
    authors = fields.get("authors") or fields.get("author") or []
    date = (fields.get("date") or [""])[0]
    doi = (fields.get("doi") or [""])[0]
    return Meta(
        title=clean_text((fields.get("title") or [""])[0]),
        authors=[clean_text(a) for a in authors if a.strip()],
        published_at=metadata.iso_date(date) if date else None,
        doi=doi or None,
    )


def _list_kind(tokens: list[Token], i: int) -> str:
    depth = 0
    for tok in reversed(tokens[:i]):
        if tok.type.endswith("_list_close"):
            depth += 1
        elif tok.type.endswith("_list_open"):
            if depth == 0:
                return "bullet" if tok.type.startswith("bullet") else "ordered"
            depth -= 1
    return "bullet"


def _line(text: str) -> Line:
    indent = len(text) - len(text.lstrip(" "))
    return Line(text.strip(), float(indent * 5), 0.0, 0.0, 0.0, 10.0)


def _paragraph(raw: str) -> RawBlock:
    m = _MATH_BLOCK.match(raw)
    if m:
        block = _formula(m.group(1).strip())
        block.formula_number = m.group(2) or block.formula_number
        return block
    lines = [clean_text(ln) for ln in raw.split("\n") if ln.strip()]
    text = " ".join(lines)
    kind: BlockKind = "caption" if CAPTION.match(text) else "paragraph"
    return RawBlock(kind, text, lines=[_line(ln) for ln in lines])


def _formula(latex: str) -> RawBlock:
    tag = _TAG.search(latex)
    text = clean_text(latex)
    tex = clean_text(_TAG.sub("", latex)) or None
    return RawBlock(
        "formula", text, formula_number=tag.group(1).strip() if tag else None, latex=tex
    )


def _table(tokens: list[Token], i: int) -> tuple[int, Table]:
    header: list[tuple[str, ...]] = []
    rows: list[tuple[str, ...]] = []
    row: list[str] = []
    in_head = False
    while i < len(tokens) and tokens[i].type != "table_close":
        tok = tokens[i]
        if tok.type == "thead_open":
            in_head = True
        elif tok.type == "thead_close":
            in_head = False
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "inline":
            row.append(clean_text(inline_text(tok)))
        elif tok.type == "tr_close":
            (header if in_head else rows).append(tuple(row))
        i += 1
    return i, Table(header=tuple(header), rows=tuple(rows))
