"""Word (.docx, python-docx) and PowerPoint (.pptx, python-pptx) files → raw blocks.

DOCX: body paragraphs and tables in document order; heading levels from the built-in
"Heading N" / "Title" styles (or the outline level), lists from list styles or numbering,
captions from the "Caption" style; core properties give the metadata. DOCX has no pages, so
every block is on page 1.
PPTX: one page per slide; the title placeholder is a level-1 heading, the other shapes'
paragraphs are paragraphs or (when indented or bulleted) list items, tables stay tables,
speaker notes follow the slide; shape positions give the bounding boxes.
"""

from __future__ import annotations

import io
import re
from typing import Any

from footnote.ingest import metadata
from footnote.ingest.archive import ElementBudget
from footnote.ingest.captions import CAPTION
from footnote.ingest.cleanup import clean_text
from footnote.ingest.metadata import Meta
from footnote.ingest.raw import Parsed, RawBlock
from footnote.types import BlockKind, Table

_EMU_PER_PT = 12700
_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*(\d)$", re.I)


def _core_meta(props: Any) -> Meta:
    """Title, authors and date from OOXML core properties."""
    date = props.created or props.modified
    return Meta(
        title=clean_text(props.title or ""),
        authors=metadata.split_authors(props.author or "")
        or ([clean_text(props.author)] if (props.author or "").strip() else []),
        published_at=date.date().isoformat() if date else None,
    )


def parse_docx(data: bytes, budget: ElementBudget) -> Parsed:
    """A Word document's blocks in order, with its core properties as metadata."""
    import docx
    from docx.table import Table as DocxTable
    from docx.text.paragraph import Paragraph

    document = docx.Document(io.BytesIO(data))
    styles = _Styles(document)
    blocks: list[RawBlock] = []
    items: list[str] = []

    def flush_list() -> None:
        if items:
            blocks.append(RawBlock("list", "\n".join(items)))
            items.clear()

    for child in document.element.body.iterchildren():
        budget.take()
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "tbl":
            flush_list()
            table = _docx_table(DocxTable(child, document), budget)
            if table is not None:
                blocks.append(RawBlock("table", table.as_text(), table=table))
            continue
        if tag != "p":
            continue
        para = Paragraph(child, document)
        text = clean_text(para.text)
        if not text:
            continue
        style = styles.name(child)
        level = _docx_heading_level(para, style)
        if level is None and _is_list(para, style):
            depth = max(_list_depth(para), 0)
            items.append(f"{'  ' * depth}- {text}")
            continue
        flush_list()
        if level is not None:
            blocks.append(RawBlock("heading", text, level=level))
        else:
            kind: BlockKind = (
                "caption" if style.lower() == "caption" or CAPTION.match(text) else ("paragraph")
            )
            blocks.append(RawBlock(kind, text))
    flush_list()
    meta = _core_meta(document.core_properties)
    if not meta.title:
        meta.title = next((b.text for b in blocks if b.kind == "heading"), "")
    return Parsed(blocks, meta)


class _Styles:
    """Paragraph style names by style id, read once: python-docx's `Paragraph.style` scans
    every style of the document for each paragraph (milliseconds a paragraph)."""

    def __init__(self, document: Any) -> None:
        from docx.enum.style import WD_STYLE_TYPE

        kind = WD_STYLE_TYPE.PARAGRAPH
        self.names = {s.style_id: s.name or "" for s in document.styles if s.type == kind}
        default = document.styles.default(kind)
        self.default = (default.name or "") if default is not None else ""

    def name(self, p: Any) -> str:
        """The name of paragraph element `p`'s style (the default style when it names none)."""
        ppr = p.pPr
        sid = ppr.pStyle.val if ppr is not None and ppr.pStyle is not None else None
        return self.names.get(sid, self.default) if sid else self.default


def _docx_heading_level(para: Any, style: str) -> int | None:
    if style.lower() == "title":
        return 0  # the document title, as in a PDF: not a section
    m = _HEADING_STYLE.match(style)
    if m:
        return int(m.group(1))
    ppr = para._p.pPr
    outline = (
        ppr.find("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}outlineLvl")
        if ppr is not None
        else None
    )
    if outline is not None:
        value = outline.get("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}val")
        if value is not None and value.isdigit() and int(value) < 9:
            return int(value) + 1
    return None


def _is_list(para: Any, style: str) -> bool:
    return style.lower().startswith(("list", "列表")) or _list_depth(para) >= 0


def _list_depth(para: Any) -> int:
    """The numbering level of a numbered/bulleted paragraph, or -1."""
    ppr = para._p.pPr
    if ppr is None or ppr.numPr is None:
        return -1
    ilvl = ppr.numPr.ilvl
    return int(ilvl.val) if ilvl is not None and ilvl.val is not None else 0


def _docx_table(table: Any, budget: ElementBudget) -> Table | None:
    grid: list[tuple[str, ...]] = []
    for row in table.rows:
        budget.take(len(row.cells))
        cells: list[str] = []
        last = None
        for cell in row.cells:
            if cell._tc is last:  # a horizontally merged cell repeats: keep one
                cells.append("")
                continue
            last = cell._tc
            cells.append(clean_text(" ".join(p.text for p in cell.paragraphs)))
        if any(cells):
            grid.append(tuple(cells))
    if not grid:
        return None
    return Table(header=(grid[0],), rows=tuple(grid[1:]))


def parse_pptx(data: bytes, budget: ElementBudget) -> Parsed:
    """A slide deck: one page per slide, shapes top to bottom, notes after the slide."""
    import pptx
    from pptx.util import Emu

    deck = pptx.Presentation(io.BytesIO(data))
    blocks: list[RawBlock] = []
    for number, slide in enumerate(deck.slides, start=1):
        shapes = sorted(
            (s for s in _flatten(slide.shapes) if s.top is not None),
            key=lambda s: (int(Emu(s.top)), int(Emu(s.left or 0))),
        )
        title_shape = slide.shapes.title
        budget.take(len(shapes) + 1)
        for shape in shapes:
            bbox = _bbox(shape)
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                text = clean_text(shape.text_frame.text.replace("\n", " "))
                if text:
                    blocks.append(RawBlock("heading", text, number, bbox, level=1))
            elif shape.has_table:
                table = _pptx_table(shape.table, budget)
                if table is not None:
                    blocks.append(RawBlock("table", table.as_text(), number, bbox, table=table))
            elif shape.has_text_frame:
                blocks += _text_frame(shape.text_frame, number, bbox, budget)
        if slide.has_notes_slide:
            notes = clean_text(slide.notes_slide.notes_text_frame.text)
            if notes:
                blocks.append(RawBlock("paragraph", notes, number))
    meta = _core_meta(deck.core_properties)
    if not meta.title:
        meta.title = next((b.text for b in blocks if b.kind == "heading"), "")
    return Parsed(blocks, meta, pages=max(len(deck.slides), 1))


def _flatten(shapes: Any) -> list[Any]:
    out = []
    for shape in shapes:
        if shape.shape_type is not None and getattr(shape, "shapes", None) is not None:
            out += _flatten(shape.shapes)  # a group shape
        else:
            out.append(shape)
    return out


def _bbox(shape: Any) -> tuple[float, float, float, float] | None:
    if shape.left is None or shape.top is None or shape.width is None or shape.height is None:
        return None
    x0, y0 = shape.left / _EMU_PER_PT, shape.top / _EMU_PER_PT
    return (x0, y0, x0 + shape.width / _EMU_PER_PT, y0 + shape.height / _EMU_PER_PT)


def _text_frame(frame: Any, page: int, bbox: Any, budget: ElementBudget) -> list[RawBlock]:
    out: list[RawBlock] = []
    items: list[str] = []
    for para in frame.paragraphs:
        budget.take()
        text = clean_text(para.text)
        if not text:
            continue
        bulleted = (
            para.level > 0
            or para._p.find(
                "{http://schemas.openxmlformats.org/drawingml/2006/main}pPr/"
                "{http://schemas.openxmlformats.org/drawingml/2006/main}buChar"
            )
            is not None
        )
        if bulleted:
            items.append(f"{'  ' * para.level}- {text}")
            continue
        if items:
            out.append(RawBlock("list", "\n".join(items), page, bbox))
            items = []
        kind: BlockKind = "caption" if CAPTION.match(text) else "paragraph"
        out.append(RawBlock(kind, text, page, bbox))
    if items:
        out.append(RawBlock("list", "\n".join(items), page, bbox))
    return out


def _pptx_table(table: Any, budget: ElementBudget) -> Table | None:
    budget.take(len(table.rows) * len(table.columns))
    grid = [
        tuple(clean_text(cell.text.replace("\n", " ")) for cell in row.cells) for row in table.rows
    ]
    grid = [r for r in grid if any(r)]
    if not grid:
        return None
    return Table(header=(grid[0],), rows=tuple(grid[1:]))
