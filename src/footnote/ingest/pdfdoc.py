"""PDF pages → raw blocks in reading order (the PDF pipeline, minus final assembly)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from footnote.config import IngestSettings
from footnote.ingest import figures, layout, pdf, structure, tables
from footnote.ingest.cleanup import build_vocabulary, garbled_reason
from footnote.ingest.raw import RawBlock


@dataclass
class PdfParse:
    """What the PDF pipeline hands to assembly."""

    blocks: list[RawBlock]
    pages: int
    title: str
    vocab: set[str]
    warnings: list[str] = field(default_factory=list)


def parse_pdf(path: Path, data: bytes, settings: IngestSettings, password: str | None) -> PdfParse:
    """Read a PDF's text layer into typed raw blocks, with warnings for pages we cannot read."""
    pdf.sniff_pdf(data, path)
    password = password or settings.pdf_password or None
    doc = pdf.open_pdf(data, path, password)
    try:
        count = pdf.check_page_count(doc, settings.max_pages, path)
        title = pdf.metadata_title(doc)
        pages = pdf.read_pages(doc)
    finally:
        doc.close()
    warnings = _text_layer_warnings(pages)
    layout.drop_running_text(pages)
    ruled, table_warn = tables.ruled_tables(
        data, password, [p.number for p in pages if tables.may_hold_ruled_table(p)]
    )
    warnings += table_warn
    page_rows = []
    for page in pages:
        rows = layout.order_rows(page, ruled.get(page.number, []))
        page_rows.append((page, tables.aligned_tables(rows)))
    all_rows = [r for _, rows in page_rows for r in rows]
    body = structure.body_size(all_rows)
    vocab = build_vocabulary(r.line.text for r in all_rows if r.table is None)
    gaps = layout.line_gaps(all_rows)
    blocks: list[RawBlock] = []
    for page, rows in page_rows:
        page_blocks = [
            structure.classify(group, body, page.height, vocab)
            for group in layout.group_rows(rows, body, gaps)
        ]
        blocks += figures.attach_figures(page_blocks, page.graphics, body, page.height)
    structure.assign_levels(blocks, body)
    if not title:
        title = next((b.text for b in blocks if b.kind == "heading" and b.level == 0), "")
    return PdfParse(blocks, count, title, vocab, warnings)


def _text_layer_warnings(pages: list[pdf.PageText]) -> list[str]:
    empty = [p.number for p in pages if p.n_chars < 10]
    garbled: list[int] = []
    reasons: set[str] = set()
    for p in pages:
        if p.number in empty:
            continue
        reason = garbled_reason(" ".join(f.text for f in p.fragments))
        if reason:
            garbled.append(p.number)
            reasons.add(reason)
    out = []
    if empty:
        out.append(f"no text layer on pages {pdf.page_ranges(empty)}: needs OCR")
    if garbled:
        out.append(
            f"garbled text layer on pages {pdf.page_ranges(garbled)} "
            f"({'; '.join(sorted(reasons))}): needs OCR"
        )
    return out
