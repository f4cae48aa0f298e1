"""The PDF pipeline: pages → typed raw blocks in reading order (assembly comes after)."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium

from footnote.config import IngestSettings
from footnote.ingest import metadata, pool
from footnote.ingest.cleanup import build_vocabulary, garbled_reason
from footnote.ingest.metadata import Meta
from footnote.ingest.pdf import (
    aligned,
    classify,
    docling_text,
    figures,
    formulas,
    layout,
    rules,
    scan,
    spanning,
    tables,
)
from footnote.ingest.pdf import file as pdf_file
from footnote.ingest.raw import Parsed, RawBlock
from footnote.textnorm import number_runs


def parse_pdf(
    path: Path, data: bytes, settings: IngestSettings, password: str | None, reader: str = "builtin"
) -> Parsed:
    """Read a PDF's text layer into typed raw blocks, with warnings for pages we cannot read;
    `reader` "docling-parse" takes the text from docling-parse's line cells instead."""
    pdf_file.sniff_pdf(data, path)
    password = password or settings.pdf_password or None
    doc = pdf_file.open_pdf(data, path, password)
    try:
        return _parse(doc, path, data, settings, password, reader)
    finally:
        doc.close()


def _parse(
    doc: pdfium.PdfDocument,
    path: Path,
    data: bytes,
    settings: IngestSettings,
    password: str | None,
    reader: str,
) -> Parsed:
    count = pdf_file.check_page_count(doc, settings.max_pages, path)
    title = pdf_file.metadata_title(doc)
    info = pdf_file.metadata_dict(doc)
    first_text = pdf_file.page_text(doc, 0)
    workers = pool.worker_count(settings)
    pages = pool.read_pages_parallel(data, password, count, workers) or pdf_file.read_pages(doc)
    if reader == "docling-parse":
        docling_text.replace_fragments(data, pages, password)
    garbled = _garbled(pages)
    if settings.ocr == "always":
        todo = [p.number for p in pages]
    else:
        todo = [p.number for p in pages if scan.needs_ocr(p, p.number in garbled)]
    discard = set(todo) if settings.ocr == "always" else set(garbled)
    scanned = scan.read_pages(doc, pages, todo, settings, discard & set(todo))
    warnings = _text_layer_warnings(pages, garbled, set(scanned.read), settings)
    warnings += scanned.warnings
    layout.drop_running_text(pages)
    ruled: dict[int, list[layout.TableItem]] = {}
    if settings.pdf_tables == "pdfplumber":
        candidates = [p.number for p in pages if tables.may_hold_ruled_table(p)]
        ruled, table_warn = tables.ruled_tables(data, password, candidates)
        warnings += table_warn
    elif settings.pdf_tables == "rules":
        for p in pages:  # cheap: every page with a few rules each way
            found = rules.ruled_tables(p)
            if found:
                ruled[p.number] = found
    for p in pages:  # tables across both columns, before the page splits into columns
        ruled[p.number] = ruled.get(p.number, []) + spanning.spanning_tables(
            p, ruled.get(p.number, [])
        )
    page_rows = []
    for page in pages:
        rows = layout.order_rows(page, ruled.get(page.number, []))
        rows = tables.aligned_tables(rows)
        if settings.unruled_tables:
            rows = aligned.numeric_tables(rows)
        page_rows.append((page, rows))
    all_rows = [r for _, rows in page_rows for r in rows]
    body = classify.body_size(all_rows)
    vocab = build_vocabulary(r.line.text for r in all_rows if r.table is None)
    gaps = layout.line_gaps(all_rows)
    blocks: list[RawBlock] = []
    for page, rows in page_rows:
        page_blocks = [
            classify.classify(group, body, page.height, vocab)
            for group in layout.group_rows(rows, body, gaps)
        ]
        blocks += figures.attach_figures(page_blocks, page.graphics, body, page.height)
    blocks = formulas.absorb_limits(blocks)
    if settings.formula_latex:
        formulas.attach_latex(doc, [b for b in blocks if b.page not in scanned.read])
    classify.assign_levels(blocks, body)
    if not title:
        title = next((b.text for b in blocks if b.kind == "heading" and b.level == 0), "")
    if not first_text.strip() and pages:  # a scan: what OCR read
        first_text = " ".join(f.text for f in pages[0].fragments)
    info_meta = metadata.from_pdf_info(info)
    meta = _first_page_meta(first_text, blocks).fill(info_meta)
    meta.authors = info_meta.authors or meta.authors  # the Info entry is explicit
    meta.title = title
    tag = "; ".join(t for t in ("" if reader == "builtin" else reader, scanned.parser) if t)
    return Parsed(blocks, meta, count, vocab, warnings, tag)


def _first_page_meta(first: str, blocks: list[RawBlock]) -> Meta:
    """DOI, arXiv id, dates and authors printed on the first page (its whole text layer:
    arXiv stamps and DOIs sit in the margins that running-text removal drops)."""
    front: list[str] = []
    titled = False
    for b in blocks:
        if b.page != 1 or (b.kind == "heading" and b.level > 0):
            break
        titled = titled or (b.kind == "heading" and b.level == 0)
        if titled and b.kind == "paragraph" and len(b.text) < 400:
            front += [ln.text for ln in b.lines] or [b.text]
    return metadata.from_text(first, front)


def _garbled(pages: list[pdf_file.PageText]) -> dict[int, str]:
    """Pages with a text layer that does not read as text, and why."""
    out: dict[int, str] = {}
    for p in pages:
        if p.n_chars >= 10:
            reason = garbled_reason(" ".join(f.text for f in p.fragments))
            if reason:
                out[p.number] = reason
    return out


def _text_layer_warnings(
    pages: list[pdf_file.PageText],
    garbled: dict[int, str],
    read: set[int],
    settings: IngestSettings,
) -> list[str]:
    empty = [
        p.number
        for p in pages
        if p.n_chars < 10 and (p.n_images or p.n_paths) and p.number not in read
    ]
    bad = [n for n in garbled if n not in read]
    why = "ingest.ocr is off" if settings.ocr == "off" else "install tesseract-ocr"
    hint = f"{scan.NEEDS_OCR} ({why})" if scan.engine(settings) is None else scan.NEEDS_OCR
    out = []
    if empty:
        out.append(f"no text layer on pages {number_runs(empty)}: {hint}")
    if bad:
        reasons = "; ".join(sorted({garbled[n] for n in bad}))
        out.append(f"garbled text layer on pages {number_runs(bad)} ({reasons}): {hint}")
    return out
