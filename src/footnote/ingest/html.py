"""HTML: trafilatura's main content when it finds an article, else a DOM walk; keeps structure."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import lxml.etree as etree  # type: ignore[import-untyped]
import lxml.html  # type: ignore[import-untyped]
import trafilatura

from footnote.ingest import metadata
from footnote.ingest.captions import CAPTION
from footnote.ingest.cleanup import clean_text
from footnote.ingest.metadata import Meta
from footnote.ingest.raw import RawBlock
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
# fmt: off
_INLINE = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "br", "cite", "code", "data", "del", "dfn", "em", "font",
    "i", "img", "ins", "kbd", "label", "mark", "q", "s", "samp", "small", "span", "strike",
    "strong", "sub", "sup", "time", "tt", "u", "var", "wbr",
})
# fmt: on


def parse_html(source: str) -> tuple[list[RawBlock], Meta]:
    """Raw blocks and the page's metadata (title from `<title>`, else the meta tags or h1)."""
    try:
        doc = lxml.html.document_fromstring(source)
    except (etree.ParserError, ValueError):
        return [], Meta()
    title = clean_text(doc.findtext(".//title") or "")
    meta = metadata.from_html_meta(meta_tags(doc))
    dom_blocks, semantic = _walk_dom(doc)
    tf_blocks = _trafilatura(source)
    dom_len = sum(len(b.text) for b in dom_blocks)
    tf_len = sum(len(b.text) for b in tf_blocks)
    # trafilatura is worth its flattening (merged blocks, lost headings) only where it dropped
    # boilerplate the DOM walk kept; never when it lost the headings of a <main>/<article>
    lost_headings = semantic and _headings(dom_blocks) > _headings(tf_blocks)
    use_tf = tf_blocks and 0.3 * dom_len <= tf_len < 0.9 * dom_len and not lost_headings
    blocks = tf_blocks if use_tf else dom_blocks
    h1 = next((b.text for b in blocks if b.kind == "heading"), "")
    meta.title = title or meta.title or h1
    return blocks, meta


def meta_tags(doc: Any) -> dict[str, list[str]]:
    """`<meta name|property=… content=…>` values by lower-cased name, in page order."""
    tags: dict[str, list[str]] = {}
    for el in doc.iter("meta"):
        name = (el.get("name") or el.get("property") or "").strip().lower()
        content = el.get("content")
        if name and content:
            tags.setdefault(name, []).append(content)
    return tags


def dom_blocks(root: Any) -> list[RawBlock]:
    """Blocks of an (X)HTML element tree by the DOM walk alone (EPUB chapters)."""
    return _walk_dom(root)[0]


def _headings(blocks: list[RawBlock]) -> int:
    return sum(1 for b in blocks if b.kind == "heading")


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
        text = flat_text(el)
        if tag == "head":
            rend = str(el.get("rend", "h2"))
            level = int(rend[1]) if re.fullmatch(r"h[1-6]", rend) else 2
            if text:
                out.append(RawBlock("heading", text, level=level))
        elif tag == "list":
            items = [flat_text(it) for it in el.iter("item")]
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
        texts = tuple(flat_text(c) for c in cells)
        if not any(texts):
            continue
        if not rows and cells and all(is_head(c) for c in cells):
            header.append(texts)
        else:
            rows.append(texts)
    if not header and not rows:
        return None
    return Table(header=tuple(header), rows=tuple(rows))


def _walk_dom(doc: Any) -> tuple[list[RawBlock], bool]:
    """Blocks of the page's main/article element (else the body); True when one was found."""
    body, semantic = doc, False
    for path in (".//main", ".//article", ".//body"):
        found = doc.find(path)
        if found is not None:
            body, semantic = found, path != ".//body"
            break
    out: list[RawBlock] = []
    _visit(body, out, in_article=_tag(body) == "article")
    return out, semantic


def _tag(el: Any) -> str:
    return el.tag.lower() if isinstance(el.tag, str) else ""


def flat_text(el: Any) -> str:
    """An element's text with its descendants' text and tails in document order: inline
    children join without added spaces, block children and `<br>` are set off by a space."""
    parts: list[str] = [el.text or ""]
    for child in el:
        tag = _tag(child)
        if tag and tag not in ("script", "style", "template", "noscript"):
            inner = flat_text(child)
            parts.append(inner if tag in _INLINE else f" {inner} ")
            if tag == "br":
                parts.append(" ")
        parts.append(child.tail or "")
    return clean_text("".join(parts))


def _visit(el: Any, out: list[RawBlock], *, in_article: bool) -> None:
    """Walk block-level children; text, inline children and tails between them are paragraphs."""
    run: list[str] = [el.text or ""]

    def flush() -> None:
        text = clean_text("".join(run))
        run.clear()
        if text:
            out.append(RawBlock("caption" if CAPTION.match(text) else "paragraph", text))

    for child in el:
        tag = _tag(child)
        if not tag or (tag in _SKIP and not (tag == "header" and in_article)):
            run.append(child.tail or "")
            continue
        if tag in _INLINE:
            run.append(flat_text(child) if tag != "br" else " ")
            run.append(child.tail or "")
            continue
        flush()
        _block(child, tag, out, in_article=in_article)
        run.append(child.tail or "")
    flush()


def _block(child: Any, tag: str, out: list[RawBlock], *, in_article: bool) -> None:
    text = flat_text(child)
    if tag in _HEADINGS:
        if text:
            out.append(RawBlock("heading", text, level=int(tag[1])))
    elif tag in ("ul", "ol"):
        items = [flat_text(li) for li in child.iter("li")]
        items = [f"- {t}" for t in items if t]
        if items:
            out.append(RawBlock("list", "\n".join(items)))
    elif tag == "table":
        table = _table_rows(child, "tr", "td|th", lambda c: c.tag == "th")
        if table is not None:
            cap = child.find("caption")
            if cap is not None:
                table = replace(table, caption=flat_text(cap))
            out.append(RawBlock("table", table.as_text(), table=table))
    elif tag in ("p", "pre", "blockquote", "figcaption", "dd", "dt", "address"):
        if text:
            kind: BlockKind = (
                "caption" if tag == "figcaption" or CAPTION.match(text) else "paragraph"
            )
            out.append(RawBlock(kind, text))
    elif tag == "math":
        if text:
            out.append(RawBlock("formula", text))
    else:
        _visit(child, out, in_article=in_article or tag == "article")
