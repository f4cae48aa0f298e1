"""An optional, heavier text reader: docling-parse's line cells (`pip install docling-parse`,
MIT) instead of pypdfium2's characters, behind the same layout pipeline. Rules, images and
page geometry still come from pypdfium2; only the text fragments are replaced."""

from __future__ import annotations

import io
import re

from footnote.errors import IngestError
from footnote.ingest.captions import TABLE_CAPTION
from footnote.ingest.cleanup import clean_text
from footnote.ingest.pdf.file import BOLD_NAME, PageText
from footnote.ingest.raw import Line

_LINE_HEIGHT = 1.2
"""A line cell's height over its font size."""


def available() -> bool:
    """True when docling-parse is installed."""
    try:
        import docling_parse  # noqa: F401
    except ImportError:
        return False
    return True


def replace_fragments(data: bytes, pages: list[PageText], password: str | None) -> None:
    """Give every page the text fragments of docling-parse's line cells."""
    if not available():
        raise IngestError(
            "ingest parser 'docling-parse' is selected but not installed: pip install docling-parse"
        )
    from docling_core.types.doc.page import TextCellUnit
    from docling_parse.pdf_parser import DoclingPdfParser

    parser = DoclingPdfParser(loglevel="fatal")
    doc = parser.load(path_or_stream=io.BytesIO(data), password=password or None)
    try:
        by_number = {p.number: p for p in pages}
        for number, page in doc.iterate_pages():
            target = by_number.get(number)
            if target is None:
                continue
            height = page.dimension.height
            frags = []
            for cell in page.iterate_cells(unit_type=TextCellUnit.LINE):
                text = clean_text(cell.text)
                if not text:
                    continue
                r = cell.rect.to_top_left_origin(page_height=height)
                xs = (r.r_x0, r.r_x1, r.r_x2, r.r_x3)
                ys = (r.r_y0, r.r_y1, r.r_y2, r.r_y3)
                top, bottom = min(ys), max(ys)
                size = round((bottom - top) / _LINE_HEIGHT * 2) / 2
                bold = bool(BOLD_NAME.search(getattr(cell, "font_name", "") or ""))
                frags.append(
                    Line(text, min(xs), top, max(xs), bottom, max(size, 1.0), bold, number)
                )
            target.fragments = frags
            target.n_chars = sum(len(re.sub(r"\s", "", f.text)) for f in frags)
            target.has_table_caption = any(TABLE_CAPTION.match(f.text) for f in frags)
    finally:
        doc.unload()
