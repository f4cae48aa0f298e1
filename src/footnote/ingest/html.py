"""HTML: trafilatura's main content when it finds an article, else a DOM walk; keeps structure."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import lxml.etree as etree  # type: ignore[import-untyped]
import lxml.html  # type: ignore[import-untyped]
import trafilatura

from footnote.ingest.cleanup import clean_text
from footnote.ingest.raw import RawBlock
from footnote.ingest.structure import CAPTION
from footnote.types import BlockKind, Table

_SKIP = {
    "script",
    "style",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "noscript",
    "template",
    "svg",
    "button",
    "select",
    "iframe",
}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


def parse_html(source: str) -> tuple[list[RawBlock], str]:
    """Raw blocks and the page title."""
    try:
        doc = lxml.html.document_fromstring(source)
    except (etree.ParserError, ValueError):
        return [], ""
    title = clean_text(doc.findtext(".//title") or "")
    dom_blocks = _walk_dom(doc)
    tf_blocks = _trafilatura(source)
    dom_len = sum(len(b.text) for b in dom_blocks)
    tf_len = sum(len(b.text) for b in tf_blocks)
    blocks = tf_blocks if tf_blocks and tf_len >= 0.3 * dom_len else dom_blocks
    h1 = next((b.text for b in blocks if b.kind == "heading"), "")
    return blocks, title or h1


def _trafilatura(source: str) -> list[RawBlock]:
    try:
        xml = trafilatura.extract(
            source,
            output_format="xml",
            include_tables=True,
            include_formatting=False,
            include_comments=False,
            favor_recall=True,
        )
    except Exception:  # trafilatura surfaces lxml and its own errors on odd pages
        return []
    if not xml:
        return []
    try:
        root = etree.fromstring(xml.encode("utf-8"))
    except etree.XMLSyntaxError:
        return []
    main = root.find("main")
    if main is None:
        return []
    out: list[RawBlock] = []
    for el in main:
        tag = el.tag
        text = clean_text(" ".join(el.itertext()))
        if tag == "head":
            rend = str(el.get("rend", "h2"))
            level = int(rend[1]) if re.fullmatch(r"h[1-6]", rend) else 2
            if text:
                out.append(RawBlock("heading", text, level=level))
        elif tag == "list":
            items = [clean_text(" ".join(it.itertext())) for it in el.iter("item")]
            items = [f"- {t}" for t in items if t]
            if items:
                out.append(RawBlock("list", "\n".join(items)))
        elif tag == "table":
            table = _table_rows(el, "row", "cell", lambda c: c.get("role") == "head")
            if table is not None:
                out.append(RawBlock("table", table.as_text(), table=table))
        elif text:
            out.append(RawBlock("caption" if CAPTION.match(text) else "paragraph", text))
    return out


def _table_rows(el: Any, row_tag: str, cell_tag: str, is_head: Any) -> Table | None:
    header: list[tuple[str, ...]] = []
    rows: list[tuple[str, ...]] = []
    for row in el.iter(row_tag):
        cells = [c for c in row if isinstance(c.tag, str) and c.tag in cell_tag.split("|")]
        texts = tuple(clean_text(" ".join(c.itertext())) for c in cells)
        if not any(texts):
            continue
        if not rows and cells and all(is_head(c) for c in cells):
            header.append(texts)
        else:
            rows.append(texts)
    if not header and not rows:
        return None
    return Table(header=tuple(header), rows=tuple(rows))


def _walk_dom(doc: Any) -> list[RawBlock]:
    body = doc
    for path in (".//main", ".//article", ".//body"):
        found = doc.find(path)
        if found is not None:
            body = found
            break
    out: list[RawBlock] = []
    _visit(body, out)
    return out


def _visit(el: Any, out: list[RawBlock]) -> None:
    for child in el:
        tag = child.tag if isinstance(child.tag, str) else ""
        tag = tag.lower()
        if not tag or tag in _SKIP:
            continue
        text = clean_text(" ".join(child.itertext()))
        if tag in _HEADINGS:
            if text:
                out.append(RawBlock("heading", text, level=int(tag[1])))
        elif tag in ("ul", "ol"):
            items = [clean_text(" ".join(li.itertext())) for li in child.iter("li")]
            items = [f"- {t}" for t in items if t]
            if items:
                out.append(RawBlock("list", "\n".join(items)))
        elif tag == "table":
            table = _table_rows(child, "tr", "td|th", lambda c: c.tag == "th")
            if table is not None:
                cap = child.find("caption")
                if cap is not None:
                    table = replace(table, caption=clean_text(" ".join(cap.itertext())))
                out.append(RawBlock("table", table.as_text(), table=table))
        elif tag in ("p", "pre", "blockquote", "figcaption", "dd", "dt", "address"):
            if text:
                kind: BlockKind = (
                    "caption" if tag == "figcaption" or CAPTION.match(text) else "paragraph"
                )
                out.append(RawBlock(kind, text))
        elif tag in ("math",):
            if text:
                out.append(RawBlock("formula", text))
        else:
            direct = clean_text(child.text or "")
            if direct and len(child) == 0:
                out.append(RawBlock("paragraph", text))
            else:
                _visit(child, out)
