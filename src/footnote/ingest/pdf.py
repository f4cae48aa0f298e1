"""PDF reading with pypdfium2: open safely, walk characters into positioned text fragments."""

from __future__ import annotations

import ctypes
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from footnote.errors import EncryptedDocument, IngestError, UnsupportedInput
from footnote.ingest.cleanup import clean_text, is_cjk
from footnote.ingest.raw import Line

_ERR_PASSWORD = 4
_TABLE_CAPTION = re.compile(r"^(?:Table|TABLE|Tab\.)\s*[A-Z]?\d|^表\s*[\d一二三四五六七八九十]")
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|medi|cmbx|-bd\b|,bd|\bbd\b", re.I)


@dataclass
class PageText:
    """The positioned text of one page plus what the page holds besides text."""

    number: int
    width: float
    height: float
    fragments: list[Line] = field(default_factory=list)
    n_chars: int = 0
    n_images: int = 0
    n_paths: int = 0
    n_hlines: int = 0
    """Thin horizontal vector paths (rules), a hint that the page may hold a ruled table."""
    n_vlines: int = 0
    n_rects: int = 0
    has_table_caption: bool = False
    graphics: list[tuple[float, float, float, float]] = field(default_factory=list)
    """Top-level images and form XObjects (top-left origin): where figures sit."""


def sniff_pdf(data: bytes, path: Path) -> None:
    """Refuse bytes that are not a complete PDF (magic header, %%EOF trailer)."""
    if b"%PDF-" not in data[:1024]:
        raise UnsupportedInput(f"{path.name}: not a PDF (no %PDF- header)", path=str(path))
    if b"%%EOF" not in data[-4096:]:
        raise UnsupportedInput(
            f"{path.name}: truncated or corrupt PDF (no %%EOF trailer)", path=str(path)
        )


def open_pdf(data: bytes, path: Path, password: str | None) -> pdfium.PdfDocument:
    """Open PDF bytes; raise EncryptedDocument / UnsupportedInput with clear messages."""
    try:
        return pdfium.PdfDocument(data, password=password or None)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == _ERR_PASSWORD:
            hint = "wrong password" if password else "encrypted PDF: pass --password"
            raise EncryptedDocument(f"{path.name}: {hint}", path=str(path)) from None
        raise UnsupportedInput(f"{path.name}: corrupt PDF ({exc})", path=str(path)) from None


def metadata_title(pdf: pdfium.PdfDocument) -> str:
    """The Info dictionary's title when it looks like a real title."""
    try:
        title = clean_text(str(pdf.get_metadata_dict().get("Title", "")))
    except pdfium.PdfiumError:
        return ""
    low = title.lower()
    if len(title) < 4 or len(title) > 300 or not re.search(r"[A-Za-z\u4e00-\u9fff]{3}", title):
        return ""
    if re.search(r"\.(docx?|pdf|tex|dvi|indd|qxd)$|^untitled|^microsoft|^slide", low):
        return ""
    return title


class _Frag:
    """A fragment under construction."""

    __slots__ = ("bold", "bottom", "chars", "nchar", "sizes", "top", "x0", "x1")

    def __init__(self, x0: float, top: float, x1: float, bottom: float) -> None:
        self.x0, self.top, self.x1, self.bottom = x0, top, x1, bottom
        self.chars: list[str] = []
        self.sizes: Counter[float] = Counter()
        self.bold = 0
        self.nchar = 0


def read_pages(pdf: pdfium.PdfDocument) -> list[PageText]:
    """Every page's text fragments (runs of characters on one baseline without a wide gap)."""
    pages = []
    for index in range(len(pdf)):
        page = pdf[index]
        try:
            pages.append(_read_page(page, index + 1))
        finally:
            page.close()
    return pages


def _read_page(page: pdfium.PdfPage, number: int) -> PageText:
    left, bottom, right, top = page.get_bbox()
    out = PageText(number=number, width=right - left, height=top - bottom)
    for obj in page.get_objects():
        if obj.type in (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_FORM) and obj.level == 0:
            x0, y0, x1, y1 = obj.get_bounds()
            box = (x0 - left, top - y1, x1 - left, top - y0)
            if (
                x1 - x0 > 20
                and y1 - y0 > 15
                and (x1 - x0) * (y1 - y0) < 0.6 * out.width * out.height
            ):
                out.graphics.append(box)
        if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            out.n_images += 1
        elif obj.type == pdfium_c.FPDF_PAGEOBJ_PATH:
            out.n_paths += 1
            if out.n_paths > 3000:
                continue  # a vector figure; its rules are not a table's
            x0, y0, x1, y1 = obj.get_bounds()
            w, h = x1 - x0, y1 - y0
            if h < 3 and w > 8:
                out.n_hlines += 1
            elif w < 3 and h > 8:
                out.n_vlines += 1
            elif w > 8 and h > 8:
                out.n_rects += 1
    textpage = page.get_textpage()
    try:
        out.fragments, out.n_chars = _fragments(textpage, left, top, number)
        out.has_table_caption = any(_TABLE_CAPTION.match(f.text) for f in out.fragments)
    finally:
        textpage.close()
    return out


def _fragments(
    textpage: pdfium.PdfTextPage, left: float, top: float, number: int
) -> tuple[list[Line], int]:
    raw = textpage.raw
    n = textpage.count_chars()
    rect = pdfium_c.FS_RECTF()
    matrix = pdfium_c.FS_MATRIX()
    name_buf = ctypes.create_string_buffer(128)
    flags = ctypes.c_int()
    frags: list[Line] = []
    cur: _Frag | None = None
    space = False
    last_key: tuple[float, int] = (-1.0, -2)
    last_bold = False
    n_chars = 0
    for i in range(n):
        code = pdfium_c.FPDFText_GetUnicode(raw, i)
        if code in (10, 13):
            _flush(cur, frags, number)
            cur = None
            space = False
            continue
        ch = chr(code)
        if code in (0x2, 0xAD) and cur is not None:  # pdfium's line-end (soft) hyphen
            cur.chars.append("-")
            continue
        if ch.isspace() or code in (0, 0xFFFE, 0x2, 0xAD):
            space = cur is not None
            continue
        pdfium_c.FPDFText_GetLooseCharBox(raw, i, rect)
        x0, x1 = rect.left - left, rect.right - left
        y0, y1 = top - rect.top, top - rect.bottom
        h = max(y1 - y0, 0.1)
        angle = pdfium_c.FPDFText_GetCharAngle(raw, i)
        if 0.1 < angle < 2 * math.pi - 0.1:
            _flush(cur, frags, number)
            cur = None
            continue  # rotated margin text (arXiv stamps, "Downloaded from …")
        n_chars += 1
        size = pdfium_c.FPDFText_GetFontSize(raw, i)
        if size < 0.6 * h / 1.25:
            size = h / 1.25  # scaled-up text matrix: trust the glyph box
        elif size > 1.6 * h / 1.25 and pdfium_c.FPDFText_GetMatrix(raw, i, matrix):
            scale = math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c))
            size *= min(scale, 1.0)  # scaled-down text (a figure's embedded labels)
        size = round(size * 2) / 2
        weight = pdfium_c.FPDFText_GetFontWeight(raw, i)
        key = (size, weight)
        if key != last_key:
            pdfium_c.FPDFText_GetFontInfo(raw, i, name_buf, 128, ctypes.byref(flags))
            name = name_buf.value.decode("latin-1", "replace")
            last_bold = weight >= 600 or bool(_BOLD_NAME.search(name))
            last_key = key
        if cur is not None:
            overlap = min(cur.bottom, y1) - max(cur.top, y0)
            gap = x0 - cur.x1
            base = min(cur.bottom - cur.top, h)
            if overlap < 0.45 * base or gap > 1.0 * size or x0 < cur.x1 - 2.5 * size:
                _flush(cur, frags, number)
                cur = None
                space = False
        if cur is None:
            cur = _Frag(x0, y0, x1, y1)
        elif space or (
            x0 - cur.x1 > 0.18 * size and not (is_cjk(ch) and cur.chars and is_cjk(cur.chars[-1]))
        ):
            cur.chars.append(" ")
        space = False
        cur.chars.append(ch)
        cur.x0, cur.x1 = min(cur.x0, x0), max(cur.x1, x1)
        if cur.nchar == 0:
            cur.top, cur.bottom = y0, y1
        cur.sizes[size] += 1
        cur.bold += last_bold
        cur.nchar += 1
    _flush(cur, frags, number)
    return frags, n_chars


def _flush(cur: _Frag | None, frags: list[Line], number: int) -> None:
    if cur is None or cur.nchar == 0:
        return
    text = clean_text("".join(cur.chars))
    if text:
        size = cur.sizes.most_common(1)[0][0]
        frags.append(
            Line(
                text, cur.x0, cur.top, cur.x1, cur.bottom, size, cur.bold >= 0.9 * cur.nchar, number
            )
        )


def page_ranges(numbers: list[int]) -> str:
    """'1–3, 7' from [1, 2, 3, 7]."""
    parts: list[str] = []
    start = prev = None
    for n in sorted(numbers):
        if start is None:
            start = prev = n
        elif prev is not None and n == prev + 1:
            prev = n
        else:
            parts.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = prev = n
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}–{prev}")
    return ", ".join(parts)


def check_page_count(pdf: pdfium.PdfDocument, max_pages: int, path: Path) -> int:
    """Number of pages, refusing documents over the configured limit."""
    count = len(pdf)
    if count > max_pages:
        raise UnsupportedInput(
            f"{path.name}: {count} pages is over the limit of {max_pages} (ingest.max_pages)",
            path=str(path),
        )
    if count == 0:
        raise IngestError(f"{path.name}: PDF has no pages", path=str(path))
    return count
