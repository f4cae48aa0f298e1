"""Scanned pages: which pages need OCR, rendering them (pypdfium2, one at a time, in this
thread) and reading them with Tesseract in parallel worker threads."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pypdfium2 as pdfium

from footnote.config import IngestSettings
from footnote.ingest import ocr
from footnote.ingest.captions import TABLE_CAPTION
from footnote.ingest.pdf.file import PageText
from footnote.ingest.raw import Line
from footnote.textnorm import count_cjk, number_runs

NEEDS_OCR = "needs OCR"
"""Marker in a source's warnings: some pages were left unread for want of OCR."""
_MAX_SIDE_PX = 4200
_CJK_PACKS = re.compile(r"^(?:chi_|jpn|kor)")
_POOR = 0.6
"""Below this mean confidence a page read with the Latin packs only is read again with all."""


@dataclass
class ScanResult:
    """What OCR did to a document's pages."""

    read: list[int] = field(default_factory=list)
    parser: str = ""
    warnings: list[str] = field(default_factory=list)


def needs_ocr(page: PageText, garbled: bool) -> bool:
    """A page with (almost) no text over an image or drawing, or a garbled text layer."""
    if garbled:
        return True
    if page.n_chars < 10:
        return page.n_images > 0 or page.n_paths > 0
    return page.image_cover >= 0.6 and page.n_chars < 100


def engine(settings: IngestSettings) -> tuple[str, str] | None:
    """(parser tag, languages) of the OCR engine these settings would use here, or None."""
    version = ocr.tesseract_version()
    if settings.ocr == "off" or version is None:
        return None
    languages = ocr.usable_languages(settings.ocr_languages)
    if not languages:
        return None
    return f"tesseract {version} {languages} {settings.ocr_dpi}dpi", languages


def read_pages(
    doc: pdfium.PdfDocument,
    pages: list[PageText],
    numbers: list[int],
    settings: IngestSettings,
    discard: set[int] | frozenset[int] = frozenset(),
) -> ScanResult:
    """Replace the fragments of the pages `numbers` (1-based) by what OCR reads on them; the
    text layer's fragments where OCR read nothing stay, except on the pages in `discard`
    (garbled layers, `ocr = always`)."""
    found = engine(settings)
    if found is None or not numbers:
        return ScanResult()
    tag, languages = found
    latin = "+".join(p for p in languages.split("+") if not _CJK_PACKS.match(p))
    by_number = {p.number: p for p in pages}
    for number in discard:
        by_number[number].fragments = []
    workers = max(1, settings.workers or os.cpu_count() or 1)
    images = _render(doc, by_number, numbers, settings.ocr_dpi)
    confs: list[float] = []
    first = next(images)
    lines = _read(first, languages)
    _set(by_number[first[0]], lines, confs)
    narrow = latin if latin and latin != languages and not _has_cjk(lines) else languages
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: list[tuple[int, Future[list[Line]]]] = []
        for image in images:
            pending.append((image[0], pool.submit(_read, image, narrow, languages)))
            while len(pending) > 2 * workers:  # bounded: a few rendered pages in memory
                number, fut = pending.pop(0)
                _set(by_number[number], fut.result(), confs)
        for number, fut in pending:
            _set(by_number[number], fut.result(), confs)
    mean = sum(confs) / len(confs) if confs else 0.0
    note = f"pages {number_runs(numbers)} read by OCR ({tag}; mean confidence {mean:.2f})"
    return ScanResult(list(numbers), tag, [note])


def _render(
    doc: pdfium.PdfDocument, pages: dict[int, PageText], numbers: list[int], dpi: int
) -> Iterator[tuple[int, np.ndarray, float]]:
    """(page number, grey image, points per pixel) for each page, rendered on demand."""
    for number in numbers:
        info = pages[number]
        scale = min(dpi / 72.0, _MAX_SIDE_PX / max(info.width, info.height, 1.0))
        page = doc[number - 1]
        try:
            bitmap = page.render(scale=scale, grayscale=True)
            gray = np.array(bitmap.to_numpy(), dtype=np.uint8, copy=True)
            bitmap.close()
        finally:
            page.close()
        if gray.ndim == 3:
            gray = gray[:, :, 0]
        yield number, gray, 1.0 / scale


def _read(
    image: tuple[int, np.ndarray, float], languages: str, fallback: str | None = None
) -> list[Line]:
    number, gray, per_px = image
    lines = ocr.to_lines(ocr.recognise(gray, 72.0 / per_px, languages), per_px, number)
    if fallback and fallback != languages and _mean_conf(lines) < _POOR:
        again = ocr.to_lines(ocr.recognise(gray, 72.0 / per_px, fallback), per_px, number)
        if _mean_conf(again) > _mean_conf(lines):
            return again
    return lines


def _set(page: PageText, lines: list[Line], confs: list[float]) -> None:
    # text the layer has where OCR read nothing (a stamp, text drawn over a picture) stays
    kept = [f for f in page.fragments if not any(_overlaps(f, ln) for ln in lines)]
    page.fragments = sorted([*lines, *kept], key=lambda f: (f.top, f.x0))
    page.n_chars = sum(len(ln.text) for ln in lines)
    page.has_table_caption = any(TABLE_CAPTION.match(ln.text) for ln in lines)
    page.graphics = []  # the page image is the scan itself, not a figure
    if lines:
        confs.append(_mean_conf(lines))


def _overlaps(a: Line, b: Line) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.top < b.bottom and b.top < a.bottom


def _mean_conf(lines: list[Line]) -> float:
    n = sum(len(ln.text) for ln in lines)
    return sum((ln.conf or 0.0) * len(ln.text) for ln in lines) / n if n else 0.0


def _has_cjk(lines: list[Line]) -> bool:
    return sum(count_cjk(ln.text) for ln in lines) >= 5
